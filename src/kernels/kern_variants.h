/* Each instruction set's kernel functions, by name, as kern_table.c gathers
 * them into the tables and the tests call them: kern_matmul_avx2,
 * kern_layernorm_scalar, .. (contracts in kern_table.h). A file that
 * defines one set's functions sets KERN_ISA to the set's suffix and names
 * them KERN_FN(kern_layernorm): the body headers (nn_body.h, ..) are
 * written once for every set that way. */
#ifndef VARPROF_KERN_VARIANTS_H
#define VARPROF_KERN_VARIANTS_H

#include "kernels/kern_table.h"

#define KERN_CAT_(name, isa) name##_##isa
#define KERN_CAT(name, isa) KERN_CAT_(name, isa)
/* name_ISA, the definition of name for the set KERN_ISA */
#define KERN_FN(name) KERN_CAT(name, KERN_ISA)

#define KERN_DECLARE(ISA)                                                                          \
    size_t kern_matmul_packed_floats_##ISA(size_t k, size_t m);                                    \
    void kern_matmul_pack_##ISA(float *packed, const float *w, size_t k, size_t m);                \
    size_t kern_matmul_workspace_floats_##ISA(size_t n, size_t k, size_t m);                       \
    void kern_matmul_##ISA(float *out, size_t ldo, const float *x, size_t ldx,                     \
                           const float *packed, const float *bias, size_t n, size_t k, size_t m,   \
                           float *workspace);                                                      \
    size_t kern_matmul_column_block_##ISA(size_t m);                                               \
    size_t kern_matmul_drawn_workspace_floats_##ISA(size_t n, size_t k, size_t m);                 \
    void kern_matmul_drawn_columns_##ISA(                                                          \
        float *out, size_t ldo, const float *x, size_t ldx, const kern_panel_source *w,            \
        const float *bias, size_t n, size_t k, size_t m, size_t j0, size_t j1, float *workspace);  \
    void kern_matmul_reblock_##ISA(size_t l1, size_t l2);                                          \
    void kern_matmul_columns_##ISA(float *out, size_t ldo, const float *x, size_t ldx,             \
                                   const float *packed, const float *bias, size_t n, size_t k,     \
                                   size_t m, size_t j0, size_t j1, float *workspace);              \
    void kern_matmul_pack_transposed_##ISA(float *packed, const float *wt, size_t ldwt, size_t k,  \
                                           size_t m);                                              \
    int kern_matmul_wt_fits_##ISA(size_t k, size_t m, size_t ldwt);                                \
    void kern_matmul_wt_columns_##ISA(float *out, size_t ldo, const float *x, size_t ldx,          \
                                      const float *wt, size_t ldwt, const float *bias, size_t n,   \
                                      size_t k, size_t m, size_t j0, size_t j1, int accumulate,    \
                                      float *workspace);                                           \
    void kern_matmul_accumulate_##ISA(float *out, size_t ldo, const float *x, size_t ldx,          \
                                      const float *packed, size_t n, size_t k, size_t m,           \
                                      float *workspace);                                           \
    size_t kern_matmul_weight_grad_workspace_floats_##ISA(size_t n, size_t k, size_t m);           \
    void kern_matmul_weight_grad_##ISA(float *dw, size_t ldw, float *db, const float *dy,          \
                                       size_t ldy, const float *x, size_t ldx, size_t n, size_t k, \
                                       size_t m, int accumulate, float *workspace);                \
    void kern_norm_stats_##ISA(float *stats, const float *x, size_t n, size_t d, float eps,        \
                               int rms);                                                           \
    void kern_layernorm_backward_##ISA(float *dx, const float *dy, const float *x,                 \
                                       const float *stats, const float *weight, size_t n,          \
                                       size_t d, float eps);                                       \
    void kern_rmsnorm_backward_##ISA(float *dx, const float *dy, const float *x,                   \
                                     const float *stats, const float *weight, size_t n, size_t d,  \
                                     float eps);                                                   \
    void kern_norm_param_grads_##ISA(float *dweight, float *dbias, const float *dy,                \
                                     const float *x, const float *stats, size_t n, size_t d,       \
                                     size_t j0, size_t j1, float eps, int rms);                    \
    void kern_gelu_backward_##ISA(float *dx, const float *dy, const float *x, const float *cdf,    \
                                  size_t n);                                                       \
    void kern_gelu_tanh_backward_##ISA(float *dx, const float *dy, const float *x, size_t n);      \
    void kern_relu_backward_##ISA(float *dx, const float *dy, const float *x, size_t n);           \
    void kern_silu_mul_backward_##ISA(float *da, float *db, const float *dy, const float *a,       \
                                      const float *b, size_t n);                                   \
    void kern_gelu_mul_backward_##ISA(float *da, float *db, const float *dy, const float *a,       \
                                      const float *b, size_t n);                                   \
    void kern_attention_backward_##ISA(                                                            \
        float *dq, float *dk, float *dv, size_t ldg, const float *dout, size_t ldo,                \
        const float *q, const float *k, const float *v, size_t ld, size_t T, size_t H, size_t hd,  \
        float scale, float softcap, float *scratch);                                               \
    double kern_cross_entropy_##ISA(float *dlogits, const float *logits, const uint32_t *targets,  \
                                    size_t n, size_t V, double scale);                             \
    void kern_layernorm_##ISA(float *out, const float *x, const float *weight, const float *bias,  \
                              size_t n, size_t d, float eps);                                      \
    void kern_rmsnorm_##ISA(float *out, const float *x, const float *weight, size_t n, size_t d,   \
                            float eps);                                                            \
    void kern_layernorm_keep_##ISA(float *out, float *stats, const float *x, const float *weight,  \
                                   const float *bias, size_t n, size_t d, float eps);              \
    void kern_rmsnorm_keep_##ISA(float *out, float *stats, const float *x, const float *weight,    \
                                 size_t n, size_t d, float eps);                                   \
    void kern_gelu_##ISA(float *out, const float *x, size_t n);                                    \
    void kern_scale_add_##ISA(float *out, const float *x, const float *o, size_t n, double alpha); \
    void kern_norm_apply_##ISA(float *x, const float *weight, const float *bias, size_t d,         \
                               double mean, double inv);                                           \
    void kern_gelu_keep_##ISA(float *out, float *cdf, const float *x, size_t n);                   \
    void kern_gelu_tanh_##ISA(float *out, const float *x, size_t n);                               \
    void kern_relu_##ISA(float *out, const float *x, size_t n);                                    \
    void kern_silu_mul_##ISA(float *out, const float *a, const float *b, size_t n);                \
    void kern_gelu_mul_##ISA(float *out, const float *a, const float *b, size_t n);                \
    void kern_softmax_##ISA(float *x, size_t n);                                                   \
    void kern_attention_##ISA(float *out, size_t ldo, const float *q, const float *k,              \
                              const float *v, size_t ld, size_t T, size_t H, size_t hd,            \
                              float scale, float softcap, float *scratch);                         \
    void kern_rope_##ISA(float *x, size_t ld, const float *cos_t, const float *sin_t, size_t n,    \
                         size_t H, size_t hd, int inverse);                                        \
    void kern_residual_##ISA(float *x, const float *o, const float *h, const float *f, size_t n,   \
                             int add, double *sums);                                               \
    double kern_square_sum_##ISA(const float *v, size_t n);                                        \
    double kern_square_sum_wide_##ISA(const float *v, size_t n);                                   \
    void kern_adam_##ISA(float *p, float *m, float *v, const float *g, size_t n,                   \
                         const kern_adam_step *s);                                                 \
    void kern_gauss_fill_##ISA(float *out, size_t n, uint64_t seed, uint32_t token,                \
                               uint32_t sub_block, uint64_t first);                                \
    void kern_gauss_panel_##ISA(float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed,    \
                                uint32_t token, uint32_t sub_block, uint64_t first,                \
                                uint64_t row_stride, double scale);                                \
    void kern_uniform_panel_##ISA(float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed,  \
                                  uint32_t stream, uint32_t word, uint64_t first,                  \
                                  uint64_t row_stride, double bound, double factor);               \
    void kern_mc_noise_sums_##ISA(double *out, const double *x, const float *xi, size_t d);        \
    double kern_mc_add_branch_##ISA(double *x, double *out, const float *xi, size_t d,             \
                                    double alpha, double a, double b);                             \
    double kern_mc_add_and_normalise_##ISA(double *x, double *c, double *out, const float *xi,     \
                                           size_t d, double alpha, double a, double b,             \
                                           double shift, double scale, double c_shift);

KERN_DECLARE(scalar)
#if defined(__x86_64__)
KERN_DECLARE(avx2)
KERN_DECLARE(avx512)
#endif

#endif
