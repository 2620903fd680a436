/* Each instruction set's kernel functions, by name: matmul_ISA.c defines the
 * matmul ones, residual_ISA.c the residual one, nn_ISA.c the others;
 * nn_dispatch.c gathers them into tables. The contracts are those of
 * kern_nn_table (nn_kernels.h). */
#ifndef VARPROF_NN_VARIANTS_H
#define VARPROF_NN_VARIANTS_H

#include "nn_kernels.h"

#define KERN_NN_DECLARE(ISA)                                                                        \
    size_t kern_matmul_packed_floats_##ISA(size_t k, size_t m);                                    \
    void kern_matmul_pack_##ISA(float *packed, const float *w, size_t k, size_t m);                \
    size_t kern_matmul_workspace_floats_##ISA(size_t n, size_t k, size_t m);                       \
    void kern_matmul_##ISA(float *out, size_t ldo, const float *x, size_t ldx, const float *packed, \
                         const float *bias, size_t n, size_t k, size_t m, float *workspace);      \
    void kern_layernorm_##ISA(float *out, const float *x, const float *weight, const float *bias,  \
                            size_t n, size_t d, float eps);                                       \
    void kern_rmsnorm_##ISA(float *out, const float *x, const float *weight, size_t n, size_t d,   \
                          float eps);                                                             \
    void kern_gelu_##ISA(float *out, const float *x, size_t n);                                    \
    void kern_softmax_##ISA(float *x, size_t n);                                                   \
    void kern_attention_##ISA(float *out, size_t ldo, const float *q, const float *k,              \
                            const float *v, size_t ld, size_t T, size_t H, size_t hd,             \
                            float *scratch);                                              \
    void kern_residual_##ISA(float *x, const float *o, const float *h, const float *f, size_t n,  \
                           int add, double *sums);

KERN_NN_DECLARE(scalar)
#if defined(__x86_64__)
KERN_NN_DECLARE(avx2)
KERN_NN_DECLARE(avx512)
#endif

#endif
