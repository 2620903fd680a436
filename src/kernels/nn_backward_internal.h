/* What the backward kernels' scalar reference and SIMD body share. */
#ifndef VARPROF_NN_BACKWARD_INTERNAL_H
#define VARPROF_NN_BACKWARD_INTERNAL_H

#include <stddef.h>

/* GELU's derivative's 1/sqrt(2 pi), rounded to float once, as PyTorch's
 * kAlpha = M_2_SQRTPI * M_SQRT1_2 * 0.5. */
#define NN_INV_SQRT_2PI 0.39894228040143267794f

/* norm_param_grads' columns at a time: their double sums live on the stack
 * (2 x 512 doubles, 8 KiB), and a row's statistics are recomputed once per
 * block, so once for d <= 512 and twice for d = 1024. */
#define NN_PARAM_COLUMNS 512

/* The columns of the block that starts with `left` columns to go (a
 * function, not a ternary, which cppcheck 2.10 misreads as below 1). */
static inline size_t nn_param_block(size_t left)
{
    return left < NN_PARAM_COLUMNS ? left : NN_PARAM_COLUMNS;
}

#endif
