/* The forward pass's kernels other than matmul with AVX-512, 16 floats a
 * vector: the algorithms of nn_scalar.c (the specification) with vector
 * exp and erf (nn_internal.h) in place of libm's, sums split over lanes,
 * and masked loads for the columns left over. Compiled with -mavx512f
 * -mavx512dq -mavx512vl -mavx512bw -mfma; called only when
 * vp_isa_supported(VP_ISA_AVX512). */
#if defined(__x86_64__)

#include <immintrin.h>
#include <math.h>

#include "kernels/nn_internal.h"
#include "kernels/kern_variants.h"

#define W 16 /* floats per vector */

/* Lanes below min(r, 16) set. */
static inline __mmask16 lanes_below(size_t r)
{
    return r >= W ? (__mmask16)0xFFFF : (__mmask16)((1u << r) - 1u);
}

/* The first min(r, 16) floats at p, zeros after them; reads nothing beyond
   (masked lanes do not fault). */
static inline __m512 load_first(const float *p, size_t r)
{
    return r >= W ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(lanes_below(r), p);
}

static inline void store_first(float *p, __m512 v, size_t r)
{
    if (r >= W)
        _mm512_storeu_ps(p, v);
    else
        _mm512_mask_storeu_ps(p, lanes_below(r), v);
}

/* The 16 floats of v added into two vectors of 8 doubles. */
static inline void add_pd16(__m512 v, __m512d *lo, __m512d *hi)
{
    *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    *hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}

/* exp(x), about 1 ulp (nn_internal.h). */
static inline __m512 exp_ps(__m512 x)
{
    x = _mm512_max_ps(x, _mm512_set1_ps(NN_EXP_MIN));
    x = _mm512_min_ps(x, _mm512_set1_ps(NN_EXP_MAX));
    __m512 fn = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(NN_EXP_LOG2E)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(fn, _mm512_set1_ps(NN_EXP_LN2_HI), x);
    r = _mm512_fnmadd_ps(fn, _mm512_set1_ps(NN_EXP_LN2_LO), r);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(NN_EXP_P5), r, _mm512_set1_ps(NN_EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(NN_EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(NN_EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(NN_EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(NN_EXP_P0));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
    p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
    /* p 2^n in one rounding, overflow and subnormals included */
    return _mm512_scalef_ps(p, fn);
}

/* erf(x), about 1 ulp (nn_internal.h). Both branches on every lane, on
   clamped arguments, so that no lane overflows. */
static inline __m512 erf_ps(__m512 x)
{
    __m512 a = _mm512_abs_ps(x);
    /* |x| < 1: x + x (P(x^2) - 1) */
    __m512 xs = _mm512_min_ps(a, _mm512_set1_ps(NN_ERF_SMALL_BOUND));
    __m512 s = _mm512_mul_ps(xs, xs);
    __m512 ps = _mm512_fmadd_ps(_mm512_set1_ps(NN_ERF_S6), s, _mm512_set1_ps(NN_ERF_S5));
    ps = _mm512_fmadd_ps(ps, s, _mm512_set1_ps(NN_ERF_S4));
    ps = _mm512_fmadd_ps(ps, s, _mm512_set1_ps(NN_ERF_S3));
    ps = _mm512_fmadd_ps(ps, s, _mm512_set1_ps(NN_ERF_S2));
    ps = _mm512_fmadd_ps(ps, s, _mm512_set1_ps(NN_ERF_S1));
    ps = _mm512_fmadd_ps(ps, s, _mm512_set1_ps(NN_ERF_S0));
    __m512 small = _mm512_fmadd_ps(xs, ps, xs); /* x + x (P - 1) */
    __mmask16 is_small = _mm512_cmp_ps_mask(a, _mm512_set1_ps(NN_ERF_SMALL_BOUND), _CMP_LT_OQ);
    /* most of a GELU's inputs are small: then the exp branch is not needed,
       and skipping it changes no lane's bits */
    if (is_small == 0xffff)
        return _mm512_or_ps(small, _mm512_and_ps(_mm512_set1_ps(-0.0f), x));
    /* |x| >= 1: 1 - exp(Q(|x| - 2.5) - x^2) */
    __m512 t = _mm512_max_ps(a, _mm512_set1_ps(NN_ERF_SMALL_BOUND));
    t = _mm512_min_ps(t, _mm512_set1_ps(NN_ERF_ONE_BOUND));
    __m512 u = _mm512_sub_ps(t, _mm512_set1_ps(NN_ERF_MID));
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(NN_ERF_Q8), u, _mm512_set1_ps(NN_ERF_Q7));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(NN_ERF_Q6));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(NN_ERF_Q5));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(NN_ERF_Q4));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(NN_ERF_Q3));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(NN_ERF_Q2));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(NN_ERF_Q1));
    q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(NN_ERF_Q0));
    __m512 big = _mm512_sub_ps(_mm512_set1_ps(1.0f), exp_ps(_mm512_fnmadd_ps(t, t, q)));
    __m512 r = _mm512_mask_blend_ps(is_small, big, small);
    return _mm512_or_ps(r, _mm512_and_ps(_mm512_set1_ps(-0.0f), x));
}

void kern_exp_avx512(float *out, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i += W)
        store_first(out + i, exp_ps(load_first(x + i, n - i)), n - i);
}

void kern_erf_avx512(float *out, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i += W)
        store_first(out + i, erf_ps(load_first(x + i, n - i)), n - i);
}

void kern_layernorm_avx512(float *out, const float *x, const float *weight, const float *bias,
                         size_t n, size_t d, float eps)
{
    // x, out: (n, d); weight, bias: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d;
        float *outr = out + row * d;
        __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
        size_t i = 0;
        for (; i + W <= d; i += W)
            add_pd16(_mm512_loadu_ps(xr + i), &lo, &hi);
        double sum = _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
        for (; i < d; i++)
            sum += xr[i];
        double mean = sum / (double)d;
        /* two passes, as the scalar reference: a constant row has variance 0 */
        const __m512d vmean = _mm512_set1_pd(mean);
        lo = _mm512_setzero_pd();
        hi = _mm512_setzero_pd();
        for (i = 0; i + W <= d; i += W) {
            __m512 v = _mm512_loadu_ps(xr + i);
            __m512d c0 = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), vmean);
            __m512d c1 = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)), vmean);
            lo = _mm512_fmadd_pd(c0, c0, lo);
            hi = _mm512_fmadd_pd(c1, c1, hi);
        }
        double sq = _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
        for (; i < d; i++) {
            double c = xr[i] - mean;
            sq += c * c;
        }
        double var = sq / (double)d;
        float m = (float)mean;
        float rstd = (float)(1.0 / sqrt(var + (double)eps));
        /* the scalar reference's operations in its order: same bits when
           m and rstd agree */
        const __m512 vm = _mm512_set1_ps(m), vr = _mm512_set1_ps(rstd);
        for (i = 0; i + W <= d; i += W) {
            __m512 y = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(xr + i), vm), vr);
            y = _mm512_add_ps(_mm512_mul_ps(y, _mm512_loadu_ps(weight + i)),
                              _mm512_loadu_ps(bias + i));
            _mm512_storeu_ps(outr + i, y);
        }
        for (; i < d; i++)
            outr[i] = (xr[i] - m) * rstd * weight[i] + bias[i];
    }
}

void kern_rmsnorm_avx512(float *out, const float *x, const float *weight, size_t n, size_t d,
                       float eps)
{
    // x, out: (n, d); weight: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d;
        float *outr = out + row * d;
        __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
        size_t i = 0;
        for (; i + W <= d; i += W) {
            __m512 v = _mm512_loadu_ps(xr + i);
            __m512d v0 = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
            __m512d v1 = _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1));
            lo = _mm512_fmadd_pd(v0, v0, lo);
            hi = _mm512_fmadd_pd(v1, v1, hi);
        }
        double sq = _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
        for (; i < d; i++)
            sq += (double)xr[i] * xr[i];
        float rrms = (float)(1.0 / sqrt(sq / (double)d + (double)eps));
        const __m512 vr = _mm512_set1_ps(rrms);
        for (i = 0; i + W <= d; i += W) {
            __m512 y = _mm512_mul_ps(_mm512_loadu_ps(xr + i), vr);
            _mm512_storeu_ps(outr + i, _mm512_mul_ps(y, _mm512_loadu_ps(weight + i)));
        }
        for (; i < d; i++)
            outr[i] = xr[i] * rrms * weight[i];
    }
}

void kern_gelu_avx512(float *out, const float *x, size_t n)
{
    // x, out: (n)
    /* erf, not tanh: PyTorch's default GELU; x halved first, as the scalar */
    for (size_t i = 0; i < n; i += W) {
        __m512 v = load_first(x + i, n - i);
        __m512 e = erf_ps(_mm512_mul_ps(v, _mm512_set1_ps(NN_SQRT1_2)));
        __m512 y = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v),
                                 _mm512_add_ps(_mm512_set1_ps(1.0f), e));
        store_first(out + i, y, n - i);
    }
}

void kern_softmax_avx512(float *x, size_t n)
{
    // x: (n), in place
    if (n == 0)
        return;
    __m512 vmax = _mm512_set1_ps(-INFINITY);
    size_t i = 0;
    for (; i + W <= n; i += W)
        vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(x + i));
    if (i < n) {
        __mmask16 lanes = lanes_below(n - i);
        vmax = _mm512_mask_max_ps(vmax, lanes, vmax, _mm512_maskz_loadu_ps(lanes, x + i));
    }
    vmax = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
    /* the sum in double, as the scalar reference */
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    for (i = 0; i + W <= n; i += W) {
        __m512 e = exp_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmax));
        _mm512_storeu_ps(x + i, e);
        add_pd16(e, &lo, &hi);
    }
    if (i < n) {
        __mmask16 lanes = lanes_below(n - i);
        /* lanes beyond n add 0 */
        __m512 e = _mm512_maskz_mov_ps(lanes, exp_ps(_mm512_sub_ps(
                                                  _mm512_maskz_loadu_ps(lanes, x + i), vmax)));
        _mm512_mask_storeu_ps(x + i, lanes, e);
        add_pd16(e, &lo, &hi);
    }
    const __m512 total = _mm512_set1_ps((float)_mm512_reduce_add_pd(_mm512_add_pd(lo, hi)));
    for (i = 0; i < n; i += W)
        store_first(x + i, _mm512_div_ps(load_first(x + i, n - i), total), n - i);
}

/* q . k over hd floats, in float. */
static inline float dot(const float *q, const float *k, size_t hd)
{
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    size_t j = 0;
    for (; j + 2 * W <= hd; j += 2 * W) {
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + j), _mm512_loadu_ps(k + j), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + j + W), _mm512_loadu_ps(k + j + W), acc1);
    }
    for (; j < hd; j += W)
        acc0 = _mm512_fmadd_ps(load_first(q + j, hd - j), load_first(k + j, hd - j), acc0);
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* out[j] = sum_{s < len} p[s] v[s * ld + j], j < cols <= 4 W, in float. */
static inline void weighted_rows(float *out, const float *p, const float *v, size_t ld,
                                 size_t len, size_t cols)
{
    if (cols == 4 * W) {
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t s = 0; s < len; s++) {
            const float *vs = v + s * ld;
            __m512 ps = _mm512_set1_ps(p[s]);
            a0 = _mm512_fmadd_ps(ps, _mm512_loadu_ps(vs), a0);
            a1 = _mm512_fmadd_ps(ps, _mm512_loadu_ps(vs + W), a1);
            a2 = _mm512_fmadd_ps(ps, _mm512_loadu_ps(vs + 2 * W), a2);
            a3 = _mm512_fmadd_ps(ps, _mm512_loadu_ps(vs + 3 * W), a3);
        }
        _mm512_storeu_ps(out, a0);
        _mm512_storeu_ps(out + W, a1);
        _mm512_storeu_ps(out + 2 * W, a2);
        _mm512_storeu_ps(out + 3 * W, a3);
        return;
    }
    size_t nv = (cols + W - 1) / W;
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                     _mm512_setzero_ps()};
    for (size_t s = 0; s < len; s++) {
        const float *vs = v + s * ld;
        __m512 ps = _mm512_set1_ps(p[s]);
        for (size_t u = 0; u < nv; u++)
            acc[u] = _mm512_fmadd_ps(ps, load_first(vs + u * W, cols - u * W), acc[u]);
    }
    for (size_t u = 0; u < nv; u++)
        store_first(out + u * W, acc[u], cols - u * W);
}

void kern_attention_avx512(float *out, size_t ldo, const float *q, const float *k, const float *v,
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
            kern_softmax_avx512(scratch, t + 1);
            float *ot = out + t * ldo + h * hd;
            /* 4 vectors of columns a pass over the rows of v: 4 FMA chains */
            for (size_t j = 0; j < hd; j += 4 * W) {
                size_t cols = hd - j < 4 * W ? hd - j : 4 * W;
                weighted_rows(ot + j, scratch, v + h * hd + j, ld, t + 1, cols);
            }
        }
    }
}

#else
/* Not x86-64: nothing to compile, but ISO C wants a declaration. */
typedef int kern_nn_avx512_unavailable;
#endif
