/* The forward pass's kernels other than matmul, on vectors: written once over
 * the operations of a mapping header (simd_avx2.h, simd_avx512.h: SIMD_W
 * floats a vector) and included once per instruction set, after that
 * header, with KERN_ISA set to the set's suffix (kern_variants.h).
 *
 * The algorithms are those of nn_scalar.c (the specification), with vector
 * exp and erf (nn_internal.h) in place of libm's, sums split over lanes and
 * masked loads for the columns left over. Contracts in kern_table.h. */
#include <math.h>

#include "kernels/kern_variants.h"
#include "kernels/nn_internal.h"

#define W SIMD_W

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

void KERN_FN(kern_exp)(float *out, const float *x, size_t n)
{
    // x, out: (n)
    for (size_t i = 0; i < n; i += W)
        vf_store_first(out + i, exp_v(vf_load_first(x + i, n - i)), n - i);
}

void KERN_FN(kern_erf)(float *out, const float *x, size_t n)
{
    // x, out: (n)
    for (size_t i = 0; i < n; i += W)
        vf_store_first(out + i, erf_v(vf_load_first(x + i, n - i)), n - i);
}

void KERN_FN(kern_layernorm)(float *out, const float *x, const float *weight, const float *bias,
                             size_t n, size_t d, float eps)
{
    // x, out: (n, d); weight, bias: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d;
        float *outr = out + row * d;
        vd lo = vd_zero(), hi = vd_zero();
        size_t i = 0;
        for (; i + W <= d; i += W)
            add_widened(&lo, &hi, vf_load(xr + i));
        double sum = vd_hsum(vd_add(lo, hi));
        for (; i < d; i++)
            sum += xr[i];
        double mean = sum / (double)d;
        /* two passes, as the scalar reference: a constant row has variance 0 */
        const vd vmean = vd_set1(mean);
        lo = vd_zero();
        hi = vd_zero();
        for (i = 0; i + W <= d; i += W) {
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
        double var = sq / (double)d;
        float m = (float)mean;
        float rstd = (float)(1.0 / sqrt(var + (double)eps));
        /* the scalar reference's operations in its order: same bits when
           m and rstd agree */
        const vf mean_v = vf_set1(m), rstd_v = vf_set1(rstd);
        for (i = 0; i + W <= d; i += W) {
            vf y = vf_mul(vf_sub(vf_load(xr + i), mean_v), rstd_v);
            y = vf_add(vf_mul(y, vf_load(weight + i)), vf_load(bias + i));
            vf_store(outr + i, y);
        }
        for (; i < d; i++)
            outr[i] = (xr[i] - m) * rstd * weight[i] + bias[i];
    }
}

void KERN_FN(kern_rmsnorm)(float *out, const float *x, const float *weight, size_t n, size_t d,
                           float eps)
{
    // x, out: (n, d); weight: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d;
        float *outr = out + row * d;
        vd lo = vd_zero(), hi = vd_zero();
        size_t i = 0;
        for (; i + W <= d; i += W) {
            vf v = vf_load(xr + i);
            vd v0 = vf_widen_lo(v), v1 = vf_widen_hi(v);
            lo = vd_fmadd(v0, v0, lo);
            hi = vd_fmadd(v1, v1, hi);
        }
        double sq = vd_hsum(vd_add(lo, hi));
        for (; i < d; i++)
            sq += (double)xr[i] * xr[i];
        float rrms = (float)(1.0 / sqrt(sq / (double)d + (double)eps));
        const vf vr = vf_set1(rrms);
        for (i = 0; i + W <= d; i += W) {
            vf y = vf_mul(vf_load(xr + i), vr);
            vf_store(outr + i, vf_mul(y, vf_load(weight + i)));
        }
        for (; i < d; i++)
            outr[i] = xr[i] * rrms * weight[i];
    }
}

void KERN_FN(kern_gelu)(float *out, const float *x, size_t n)
{
    // x, out: (n)
    /* erf, not tanh: PyTorch's default GELU; x halved first, as the scalar */
    for (size_t i = 0; i < n; i += W) {
        vf v = vf_load_first(x + i, n - i);
        vf e = erf_v(vf_mul(v, vf_set1(NN_SQRT1_2)));
        vf y = vf_mul(vf_mul(vf_set1(0.5f), v), vf_add(vf_set1(1.0f), e));
        vf_store_first(out + i, y, n - i);
    }
}

void KERN_FN(kern_softmax)(float *x, size_t n)
{
    // x: (n), in place
    if (n == 0)
        return;
    vf vmax = vf_set1(-INFINITY);
    size_t i = 0;
    for (; i + W <= n; i += W)
        vmax = vf_max(vmax, vf_load(x + i));
    if (i < n)
        vmax = vf_max_first(vmax, x + i, n - i);
    vmax = vf_set1(vf_hmax(vmax));
    /* the sum in double, as the scalar reference */
    vd lo = vd_zero(), hi = vd_zero();
    for (i = 0; i + W <= n; i += W) {
        vf e = exp_v(vf_sub(vf_load(x + i), vmax));
        vf_store(x + i, e);
        add_widened(&lo, &hi, e);
    }
    if (i < n) {
        /* lanes beyond n add 0 */
        vf e = vf_keep_first(exp_v(vf_sub(vf_load_first(x + i, n - i), vmax)), n - i);
        vf_store_first(x + i, e, n - i);
        add_widened(&lo, &hi, e);
    }
    const vf total = vf_set1((float)vd_hsum(vd_add(lo, hi)));
    for (i = 0; i < n; i += W)
        vf_store_first(x + i, vf_div(vf_load_first(x + i, n - i), total), n - i);
}

/* q . k over hd floats, in float. */
static inline float dot(const float *q, const float *k, size_t hd)
{
    vf acc0 = vf_zero(), acc1 = vf_zero();
    size_t j = 0;
    for (; j + 2 * W <= hd; j += 2 * W) {
        acc0 = vf_fmadd(vf_load(q + j), vf_load(k + j), acc0);
        acc1 = vf_fmadd(vf_load(q + j + W), vf_load(k + j + W), acc1);
    }
    for (; j < hd; j += W)
        acc0 = vf_fmadd(vf_load_first(q + j, hd - j), vf_load_first(k + j, hd - j), acc0);
    return vf_hsum(vf_add(acc0, acc1));
}

/* out[j] = sum_{s < len} p[s] v[s * ld + j], j < cols <= 4 W, in float. */
static inline void weighted_rows(float *out, const float *p, const float *v, size_t ld, size_t len,
                                 size_t cols)
{
    if (cols == 4 * W) {
        vf a0 = vf_zero(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t s = 0; s < len; s++) {
            const float *vs = v + s * ld;
            vf ps = vf_set1(p[s]);
            a0 = vf_fmadd(ps, vf_load(vs), a0);
            a1 = vf_fmadd(ps, vf_load(vs + W), a1);
            a2 = vf_fmadd(ps, vf_load(vs + 2 * W), a2);
            a3 = vf_fmadd(ps, vf_load(vs + 3 * W), a3);
        }
        vf_store(out, a0);
        vf_store(out + W, a1);
        vf_store(out + 2 * W, a2);
        vf_store(out + 3 * W, a3);
        return;
    }
    size_t nv = (cols + W - 1) / W;
    vf acc[4] = {vf_zero(), vf_zero(), vf_zero(), vf_zero()};
    for (size_t s = 0; s < len; s++) {
        const float *vs = v + s * ld;
        vf ps = vf_set1(p[s]);
        for (size_t u = 0; u < nv; u++)
            acc[u] = vf_fmadd(ps, vf_load_first(vs + u * W, cols - u * W), acc[u]);
    }
    for (size_t u = 0; u < nv; u++)
        vf_store_first(out + u * W, acc[u], cols - u * W);
}

void KERN_FN(kern_attention)(float *out, size_t ldo, const float *q, const float *k, const float *v,
                             size_t ld, size_t T, size_t H, size_t hd, float *scratch)
{
    // q, k, v: (T, H * hd) with row stride ld; out: (T, H * hd) with stride ldo;
    // scratch: (T)
    float scale = (float)(1.0 / sqrt((double)hd));
    for (size_t h = 0; h < H; h++) {
        for (size_t t = 0; t < T; t++) {
            const float *qt = q + t * ld + h * hd;
            for (size_t s = 0; s <= t; s++)
                scratch[s] = dot(qt, k + s * ld + h * hd, hd) * scale;
            KERN_FN(kern_softmax)(scratch, t + 1);
            float *ot = out + t * ldo + h * hd;
            /* 4 vectors of columns a pass over the rows of v: 4 FMA chains */
            for (size_t j = 0; j < hd; j += 4 * W) {
                size_t cols = hd - j < 4 * W ? hd - j : 4 * W;
                weighted_rows(ot + j, scratch, v + h * hd + j, ld, t + 1, cols);
            }
        }
    }
}

#undef W
