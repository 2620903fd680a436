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

/* erf's branch for |x| < 1 on every lane, without x's sign: x + x (P(x^2)
   - 1), at |x| clamped to 1; *is_small marks the lanes it is erf for. */
static inline vf erf_small_v(vf x, vm *is_small)
{
    vf a = vf_abs(x);
    vf xs = vf_min(a, vf_set1(NN_ERF_SMALL_BOUND));
    vf s = vf_mul(xs, xs);
    vf ps = vf_fmadd(vf_set1(NN_ERF_S6), s, vf_set1(NN_ERF_S5));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S4));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S3));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S2));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S1));
    ps = vf_fmadd(ps, s, vf_set1(NN_ERF_S0));
    *is_small = vf_lt(a, vf_set1(NN_ERF_SMALL_BOUND));
    return vf_fmadd(xs, ps, xs); /* x + x (P - 1) */
}

/* erf's branch for |x| >= 1 on every lane, without x's sign: 1 - exp(Q(|x|
   - 2.5) - x^2), at |x| clamped to [1, NN_ERF_ONE_BOUND], so that no lane
   overflows. */
static inline vf erf_big_v(vf x)
{
    vf t = vf_max(vf_abs(x), vf_set1(NN_ERF_SMALL_BOUND));
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
    return vf_sub(vf_set1(1.0f), exp_v(vf_fnmadd(t, t, q)));
}

/* erf(x) from erf_small_v's small and is_small: most of a GELU's inputs
   are small, and then the exp branch is not needed (skipping it changes no
   lane's bits) */
static inline vf erf_finish_v(vf x, vf small, vm is_small)
{
    if (!vm_all(is_small))
        small = vf_select(is_small, small, erf_big_v(x));
    return vf_or_sign(small, x);
}

/* erf(x), about 1 ulp (nn_internal.h). */
static inline vf erf_v(vf x)
{
    vm is_small;
    vf small = erf_small_v(x, &is_small);
    return erf_finish_v(x, small, is_small);
}

/* erf of SIMD_CHAINS vectors, their chains side by side: each lane's bits
   erf_v's */
static inline void erf_chains_v(vf e[SIMD_CHAINS], const vf x[SIMD_CHAINS])
{
    vm is_small[SIMD_CHAINS];
#pragma GCC unroll 4
    for (int k = 0; k < SIMD_CHAINS; k++)
        e[k] = erf_small_v(x[k], &is_small[k]);
#pragma GCC unroll 4
    for (int k = 0; k < SIMD_CHAINS; k++)
        e[k] = erf_finish_v(x[k], e[k], is_small[k]);
}

/* v[k]: SIMD_CHAINS vectors from x, and e[k] = erf(v[k] / sqrt(2)): GELU's
   erf, as the scalar halves x first */
static inline void gelu_erf_chains_v(vf v[SIMD_CHAINS], vf e[SIMD_CHAINS], const float *x)
{
    vf u[SIMD_CHAINS];
#pragma GCC unroll 4
    for (int k = 0; k < SIMD_CHAINS; k++) {
        v[k] = vf_load(x + k * SIMD_W);
        u[k] = vf_mul(v[k], vf_set1(NN_SQRT1_2));
    }
    erf_chains_v(e, u);
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

/* Rows whose statistics are summed together, a lane of a vector of
   doubles each: their chains of dependent adds side by side, and their
   divisions and square roots one vector operation, where one row's alone
   are the whole latency of a short row (d = 48: a LayerNorm's time was
   three quarters waiting on them). */
#define NN_STAT_ROWS (SIMD_W / 2)

/* The NN_STAT_ROWS rows of x (stride d) from the first, the rows past
   `rows` repeating the last: summed and dropped, so the loops below have
   no branch on the row count. */
static inline void stat_rows(const float *xr[NN_STAT_ROWS], const float *x, size_t rows, size_t d)
{
    for (size_t r = 0; r < NN_STAT_ROWS; r++)
        xr[r] = x + (r < rows ? r : rows - 1) * d;
}

/* 1 / sqrt(sq / d + eps) lane by lane, each rounded to float into out[r]
   for r < rows: the scalar expression's operations, each correctly
   rounded, so its bits. */
static inline void rows_inverse_root(float *out, const double *sq, size_t rows, size_t d, float eps)
{
    vd v = vd_add(vd_div(vd_load(sq), vd_set1((double)d)), vd_set1((double)eps));
    double r[NN_STAT_ROWS];
    vd_store(r, vd_div(vd_set1(1.0), vd_sqrt(v)));
    for (size_t k = 0; k < rows; k++)
        out[k] = (float)r[k];
}

/* sq[r] = sum over row r of (x - centre[r])^2 in double (centre 0 for
   RMSNorm: x - 0 is x, so the same bits as the squares alone), each lane of
   lo and hi summing its columns in order, then vd_hsum, then the columns
   past the last whole vector in order. */
static inline void rows_square_sums(double *sq, const float *xr[NN_STAT_ROWS], size_t d,
                                    const double centre[NN_STAT_ROWS])
{
    vd lo[NN_STAT_ROWS], hi[NN_STAT_ROWS], vc[NN_STAT_ROWS];
#pragma GCC unroll 8
    for (int r = 0; r < NN_STAT_ROWS; r++) {
        vc[r] = vd_set1(centre[r]);
        lo[r] = hi[r] = vd_zero();
    }
    size_t i = 0;
    for (; i + SIMD_W <= d; i += SIMD_W) {
#pragma GCC unroll 8
        for (int r = 0; r < NN_STAT_ROWS; r++) {
            vf v = vf_load(xr[r] + i);
            vd c0 = vd_sub(vf_widen_lo(v), vc[r]);
            vd c1 = vd_sub(vf_widen_hi(v), vc[r]);
            lo[r] = vd_fmadd(c0, c0, lo[r]);
            hi[r] = vd_fmadd(c1, c1, hi[r]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < NN_STAT_ROWS; r++) {
        sq[r] = vd_hsum(vd_add(lo[r], hi[r]));
        for (size_t j = i; j < d; j++) {
            double c = xr[r][j] - centre[r];
            sq[r] += c * c;
        }
    }
}

/* For each of the first rows (1..NN_STAT_ROWS) of x, a LayerNorm row's mean
   (rounded to float) and 1/sqrt(var + eps), var biased, both summed in
   double: what the forward normalises with and the backward recomputes.
   Two passes, as the scalar reference: a constant row has variance 0. Each
   row's sums are in its own order, whatever rows is. */
static inline void rows_mean_rstd(float *m, float *rstd, const float *x, size_t rows, size_t d,
                                  float eps)
{
    const float *xr[NN_STAT_ROWS];
    stat_rows(xr, x, rows, d);
    vd lo[NN_STAT_ROWS], hi[NN_STAT_ROWS];
#pragma GCC unroll 8
    for (int r = 0; r < NN_STAT_ROWS; r++)
        lo[r] = hi[r] = vd_zero();
    size_t i = 0;
    for (; i + SIMD_W <= d; i += SIMD_W) {
#pragma GCC unroll 8
        for (int r = 0; r < NN_STAT_ROWS; r++)
            add_widened(&lo[r], &hi[r], vf_load(xr[r] + i));
    }
    double sum[NN_STAT_ROWS], mean[NN_STAT_ROWS];
#pragma GCC unroll 8
    for (int r = 0; r < NN_STAT_ROWS; r++) {
        sum[r] = vd_hsum(vd_add(lo[r], hi[r]));
        for (size_t j = i; j < d; j++)
            sum[r] += xr[r][j];
    }
    vd_store(mean, vd_div(vd_load(sum), vd_set1((double)d)));
    double sq[NN_STAT_ROWS];
    rows_square_sums(sq, xr, d, mean);
    for (size_t k = 0; k < rows; k++)
        m[k] = (float)mean[k];
    rows_inverse_root(rstd, sq, rows, d, eps);
}

/* For each of the first rows (1..NN_STAT_ROWS) of x, an RMSNorm row's
   1/sqrt(mean(x^2) + eps), summed in double. */
static inline void rows_rrms(float *rrms, const float *x, size_t rows, size_t d, float eps)
{
    const float *xr[NN_STAT_ROWS];
    stat_rows(xr, x, rows, d);
    const double zero[NN_STAT_ROWS] = {0};
    double sq[NN_STAT_ROWS];
    rows_square_sums(sq, xr, d, zero);
    rows_inverse_root(rrms, sq, rows, d, eps);
}

/* The rows of the group that starts with `left` rows to go. */
static inline size_t stat_group(size_t left)
{
    return left < NN_STAT_ROWS ? left : NN_STAT_ROWS;
}

#endif
