/* THROWAWAY: scalar backward kernels until branch grad-kernels lands its
 * kern_table entries; deleted at the merge. */
#ifndef VARPROF_FORWARD_TMP_GRAD_KERNELS_H
#define VARPROF_FORWARD_TMP_GRAD_KERNELS_H

#include <stddef.h>

/* dx from dy of out = norm(x) * weight (+ bias), per row of d; dx may not be dy */
void fw_tmp_layernorm_backward(float *dx, const float *dy, const float *x, const float *weight,
                               size_t n, size_t d, float eps);
void fw_tmp_rmsnorm_backward(float *dx, const float *dy, const float *x, const float *weight,
                             size_t n, size_t d, float eps);
/* dx = dy gelu'(x) over n floats */
void fw_tmp_gelu_backward(float *dx, const float *dy, const float *x, size_t n);
/* one sequence's causal attention backward; dq, dk, dv overwritten; scratch
   2 T floats */
void fw_tmp_attention_backward(float *dq, float *dk, float *dv, const float *dout, size_t ldo,
                               const float *q, const float *k, const float *v, size_t ld,
                               size_t T, size_t H, size_t hd, float *scratch);

#endif
