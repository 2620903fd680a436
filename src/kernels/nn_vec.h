/* The vector functions the nn bodies (nn_body.h, nn_backward_body.h) share:
 * exp and erf to about 1 ulp (nn_internal.h), widening sums and a dot
 * product, over the operations of a mapping header (simd_avx2.h,
 * simd_avx512.h), included after it, once per translation unit. */
#ifndef VARPROF_NN_VEC_H
#define VARPROF_NN_VEC_H

#include <math.h>
#include <stddef.h>

#include "kernels/nn_internal.h"

/* lo and hi += the floats of v, widened to double: its low and high half. */
static inline void add_widened(vd *lo, vd *hi, vf v)
{
    *lo = vd_add(*lo, vf_widen_lo(v));
    *hi = vd_add(*hi, vf_widen_hi(v));
}

/* exp(x), about 1 ulp (nn_internal.h). */
static inline vf exp_v(vf x)
{
    x = vf_max(x, vf_set1(NN_EXP_MIN));
    x = vf_min(x, vf_set1(NN_EXP_MAX));
    vf fn = vf_round(vf_mul(x, vf_set1(NN_EXP_LOG2E)));
    vf r = vf_fnmadd(fn, vf_set1(NN_EXP_LN2_HI), x);
    r = vf_fnmadd(fn, vf_set1(NN_EXP_LN2_LO), r);
    vf p = vf_fmadd(vf_set1(NN_EXP_P5), r, vf_set1(NN_EXP_P4));
    p = vf_fmadd(p, r, vf_set1(NN_EXP_P3));
    p = vf_fmadd(p, r, vf_set1(NN_EXP_P2));
    p = vf_fmadd(p, r, vf_set1(NN_EXP_P1));
    p = vf_fmadd(p, r, vf_set1(NN_EXP_P0));
    p = vf_fmadd(p, vf_mul(r, r), r);
    p = vf_add(p, vf_set1(1.0f));
    return vf_scale2(p, fn);
}

/* erf(x), about 1 ulp (nn_internal.h). Both branches on every lane, on
   clamped arguments, so that no lane overflows. */
static inline vf erf_v(vf x)
{
    vf a = vf_abs(x);
    /* |x| < 1: x + x (P(x^2) - 1) */
    vf xs = vf_min(a, vf_set1(NN_ERF_SMALL_BOUND));
    vf s = vf_mul(xs, xs);
    vf ps = vf_fmadd(vf_set1(NN_ERF_S6), s, vf_set1(NN_ERF_S5));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S4));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S3));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S2));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S1));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S0));
    vf small = vf_fmadd(xs, ps, xs); /* x + x (P - 1) */
    vm is_small = vf_lt(a, vf_set1(NN_ERF_SMALL_BOUND));
    /* most of a GELU's inputs are small: then the exp branch is not needed,
       and skipping it changes no lane's bits */
    if (vm_all(is_small))
        return vf_or_sign(small, x);
    /* |x| >= 1: 1 - exp(Q(|x| - 2.5) - x^2) */
    vf t = vf_max(a, vf_set1(NN_ERF_SMALL_BOUND));
    t = vf_min(t, vf_set1(NN_ERF_ONE_BOUND));
    vf u = vf_sub(t, vf_set1(NN_ERF_MID));
    vf q = vf_fmadd(vf_set1(NN_ERF_Q8), u, vf_set1(NN_ERF_Q7));
    q = vf_fmadd(q, u, vf_set1(NN_ERF_Q6));
    q = vf_fmadd(q, u, vf_set1(NN_ERF_Q5));
    q = vf_fmadd(q, u, vf_set1(NN_ERF_Q4));
    q = vf_fmadd(q, u, vf_set1(NN_ERF_Q3));
    q = vf_fmadd(q, u, vf_set1(NN_ERF_Q2));
    q = vf_fmadd(q, u, vf_set1(NN_ERF_Q1));
    q = vf_fmadd(q, u, vf_set1(NN_ERF_Q0));
    vf big = vf_sub(vf_set1(1.0f), exp_v(vf_fnmadd(t, t, q)));
    return vf_or_sign(vf_select(is_small, small, big), x);
}

/* q . k over hd floats, in float. */
static inline float dot(const float *q, const float *k, size_t hd)
{
    vf acc0 = vf_zero(), acc1 = vf_zero();
    size_t j = 0;
    for (; j + 2 * SIMD_W <= hd; j += 2 * SIMD_W) {
        acc0 = vf_fmadd(vf_load(q + j), vf_load(k + j), acc0);
        acc1 = vf_fmadd(vf_load(q + j + SIMD_W), vf_load(k + j + SIMD_W), acc1);
    }
    for (; j < hd; j += SIMD_W)
        acc0 = vf_fmadd(vf_load_first(q + j, hd - j), vf_load_first(k + j, hd - j), acc0);
    return vf_hsum(vf_add(acc0, acc1));
}

/* A LayerNorm row's mean (rounded to float) and 1/sqrt(var + eps), var
   biased, both summed in double: what the forward normalises with and the
   backward recomputes. Two passes, as the scalar reference: a constant row
   has variance 0. */
static inline void row_mean_rstd(float *m, float *rstd, const float *xr, size_t d, float eps)
{
    vd lo = vd_zero(), hi = vd_zero();
    size_t i = 0;
    for (; i + SIMD_W <= d; i += SIMD_W)
        add_widened(&lo, &hi, vf_load(xr + i));
    double sum = vd_hsum(vd_add(lo, hi));
    for (; i < d; i++)
        sum += xr[i];
    double mean = sum / (double)d;
    const vd vmean = vd_set1(mean);
    lo = vd_zero();
    hi = vd_zero();
    for (i = 0; i + SIMD_W <= d; i += SIMD_W) {
        vf v = vf_load(xr + i);
        vd c0 = vd_sub(vf_widen_lo(v), vmean);
        vd c1 = vd_sub(vf_widen_hi(v), vmean);
        lo = vd_fmadd(c0, c0, lo);
        hi = vd_fmadd(c1, c1, hi);
    }
    double sq = vd_hsum(vd_add(lo, hi));
    for (; i < d; i++) {
        double c = xr[i] - mean;
        sq += c * c;
    }
    *m = (float)mean;
    *rstd = (float)(1.0 / sqrt(sq / (double)d + (double)eps));
}

/* An RMSNorm row's 1/sqrt(mean(x^2) + eps), summed in double. */
static inline float row_rrms(const float *xr, size_t d, float eps)
{
    vd lo = vd_zero(), hi = vd_zero();
    size_t i = 0;
    for (; i + SIMD_W <= d; i += SIMD_W) {
        vf v = vf_load(xr + i);
        vd v0 = vf_widen_lo(v), v1 = vf_widen_hi(v);
        lo = vd_fmadd(v0, v0, lo);
        hi = vd_fmadd(v1, v1, hi);
    }
    double sq = vd_hsum(vd_add(lo, hi));
    for (; i < d; i++)
        sq += (double)xr[i] * xr[i];
    return (float)(1.0 / sqrt(sq / (double)d + (double)eps));
}

#endif
