/* The forward pass's kernels: a scalar reference and AVX2+FMA and AVX-512
 * variants of each, one table chosen with the instruction set.
 *
 * Layouts are PyTorch's: activations row-major [rows][width] with a row
 * stride, projections' weights [out][in] (nn.Linear), so y = x W^T + b.
 * Every kernel computes each output row from its input row alone, in an
 * order that does not depend on how many rows a call is given: a caller may
 * split rows across threads and get the same bits (the matmul included: its
 * blocking over k and m is fixed, only n is split).
 *
 * Floats throughout, as PyTorch's float32; the norms' mean and variance are
 * summed in double. The SIMD variants equal the scalar one within the
 * tolerances their tests state (sums in another order). No kernel
 * allocates; the matmul takes a workspace from its caller. */
#ifndef VARPROF_NN_KERNELS_H
#define VARPROF_NN_KERNELS_H

#include <stddef.h>

#include "varprof/isa.h"

/* The sums the residual kernel leaves (sums[...]). */
enum {
    KERN_RESIDUAL_XX_BEFORE, /* |x|^2, the stream before the update */
    KERN_RESIDUAL_OO,        /* |o|^2, what is added */
    KERN_RESIDUAL_XO,        /* <x, o> */
    KERN_RESIDUAL_HH,        /* |h|^2, the branch's input */
    KERN_RESIDUAL_FF,        /* |f|^2, the branch's output */
    KERN_RESIDUAL_XX,        /* |x + o|^2, the stream after (only when adding) */
    KERN_RESIDUAL_SUMS
};

typedef struct {
    /* Packed weights: w [m][k] (PyTorch's [out][in]) laid out as the
       micro-kernel reads it, once, when the network is made. */
    size_t (*matmul_packed_floats)(size_t k, size_t m);
    void (*matmul_pack)(float *packed, const float *w, size_t k, size_t m);
    /* Floats of workspace one matmul call of n rows needs (e.g. packed x). */
    size_t (*matmul_workspace_floats)(size_t n, size_t k, size_t m);
    /* out[i][j] = sum_p x[i][p] w[j][p] + bias[j] (bias may be NULL), for
       i < n, j < m; x with row stride ldx >= k, out with ldo >= m. */
    void (*matmul)(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                   const float *bias, size_t n, size_t k, size_t m, float *workspace);
    /* out[i] = (x[i] - mean) / sqrt(var + eps) * weight + bias, per row of
       d (biased variance, as PyTorch; mean and variance summed in double);
       out may be x. */
    void (*layernorm)(float *out, const float *x, const float *weight, const float *bias,
                      size_t n, size_t d, float eps);
    /* out[i] = x[i] / sqrt(mean(x^2) + eps) * weight, per row of d. */
    void (*rmsnorm)(float *out, const float *x, const float *weight, size_t n, size_t d,
                    float eps);
    /* out = x * (1 + erf(x / sqrt 2)) / 2: PyTorch's default GELU, not the
       tanh one; out may be x. */
    void (*gelu)(float *out, const float *x, size_t n);
    /* In place over one row of n: exp(x - max) / sum. */
    void (*softmax)(float *x, size_t n);
    /* Causal self-attention of one sequence of T tokens and H heads of hd:
       head h owns columns h*hd .. h*hd+hd-1 of q, k, v (PyTorch's
       view(B, T, H, hd)); out[t] over head h = softmax_s<=t(q_t . k_s /
       sqrt(hd)) . v_s. q, k, v rows of stride ld, out of stride ldo;
       scratch holds T floats. */
    void (*attention)(float *out, size_t ldo, const float *q, const float *k, const float *v,
                      size_t ld, size_t T, size_t H, size_t hd, float *scratch);
    /* The residual update of n floats (rows of the stream side by side) and
       what the forward pass measures of it: the KERN_RESIDUAL_* sums up to FF
       of x, o, h and f as given, then, if add, x = x + o (float, as PyTorch
       adds) and |x|^2 in sums[KERN_RESIDUAL_XX]. h may be x and f may be o.
       Sums in double, in eight lanes added in a fixed order: every variant
       gives the scalar one's bits. */
    void (*residual)(float *x, const float *o, const float *h, const float *f, size_t n, int add,
                     double *sums);
} kern_nn_table;

/* The kernels for an instruction set (the scalar ones where it has none). */
const kern_nn_table *kern_nn_for(vp_isa isa);

#endif
