/* The forward pass's kernels other than matmul with AVX2 + FMA, 8 floats a
 * vector: the algorithms of nn_scalar.c (the specification) with vector
 * exp and erf (nn_internal.h) in place of libm's, sums split over lanes,
 * and masked loads for the columns left over. Compiled with -mavx2 -mfma;
 * called only when vp_isa_supported(VP_ISA_AVX2). */
#if defined(__x86_64__)

#include <immintrin.h>
#include <math.h>

#include "kernels/nn_internal.h"
#include "kernels/kern_variants.h"

#define W 8 /* floats per vector */

/* Lanes below r (1 <= r <= 8) set, for maskload and maskstore. */
static inline __m256i lanes_below(size_t r)
{
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), index);
}

/* The first min(r, 8) floats at p, zeros after them; reads nothing beyond. */
static inline __m256 load_first(const float *p, size_t r)
{
    return r >= W ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, lanes_below(r));
}

static inline void store_first(float *p, __m256 v, size_t r)
{
    if (r >= W)
        _mm256_storeu_ps(p, v);
    else
        _mm256_maskstore_ps(p, lanes_below(r), v);
}

static inline float hsum_ps(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float hmax_ps(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

static inline double hsum_pd(__m256d v)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}

/* The 8 floats of v added into two vectors of 4 doubles. */
static inline void add_pd8(__m256 v, __m256d *lo, __m256d *hi)
{
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

/* exp(x), about 1 ulp (nn_internal.h). */
static inline __m256 exp_ps(__m256 x)
{
    x = _mm256_max_ps(x, _mm256_set1_ps(NN_EXP_MIN));
    x = _mm256_min_ps(x, _mm256_set1_ps(NN_EXP_MAX));
    __m256 fn = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(NN_EXP_LOG2E)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(NN_EXP_LN2_HI), x);
    r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(NN_EXP_LN2_LO), r);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(NN_EXP_P5), r, _mm256_set1_ps(NN_EXP_P4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(NN_EXP_P3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(NN_EXP_P2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(NN_EXP_P1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(NN_EXP_P0));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
    p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
    /* 2^n as 2^n1 2^n2, both normal for n in [-150, 128]: exact while the
       result is normal, one rounding into the subnormals. */
    __m256i n = _mm256_cvtps_epi32(fn);
    __m256i n1 = _mm256_srai_epi32(n, 1);
    __m256i n2 = _mm256_sub_epi32(n, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

/* erf(x), about 1 ulp (nn_internal.h). Both branches on every lane, on
   clamped arguments, so that no lane overflows. */
static inline __m256 erf_ps(__m256 x)
{
    const __m256 sign_bit = _mm256_set1_ps(-0.0f);
    __m256 a = _mm256_andnot_ps(sign_bit, x);
    /* |x| < 1: x + x (P(x^2) - 1) */
    __m256 xs = _mm256_min_ps(a, _mm256_set1_ps(NN_ERF_SMALL_BOUND));
    __m256 s = _mm256_mul_ps(xs, xs);
    __m256 ps = _mm256_fmadd_ps(_mm256_set1_ps(NN_ERF_S6), s, _mm256_set1_ps(NN_ERF_S5));
    ps = _mm256_fmadd_ps(ps, s, _mm256_set1_ps(NN_ERF_S4));
    ps = _mm256_fmadd_ps(ps, s, _mm256_set1_ps(NN_ERF_S3));
    ps = _mm256_fmadd_ps(ps, s, _mm256_set1_ps(NN_ERF_S2));
    ps = _mm256_fmadd_ps(ps, s, _mm256_set1_ps(NN_ERF_S1));
    ps = _mm256_fmadd_ps(ps, s, _mm256_set1_ps(NN_ERF_S0));
    __m256 small = _mm256_fmadd_ps(xs, ps, xs); /* x + x (P - 1) */
    __m256 is_small = _mm256_cmp_ps(a, _mm256_set1_ps(NN_ERF_SMALL_BOUND), _CMP_LT_OQ);
    /* most of a GELU's inputs are small: then the exp branch is not needed,
       and skipping it changes no lane's bits */
    if (_mm256_movemask_ps(is_small) == 0xff)
        return _mm256_or_ps(small, _mm256_and_ps(sign_bit, x));
    /* |x| >= 1: 1 - exp(Q(|x| - 2.5) - x^2) */
    __m256 t = _mm256_max_ps(a, _mm256_set1_ps(NN_ERF_SMALL_BOUND));
    t = _mm256_min_ps(t, _mm256_set1_ps(NN_ERF_ONE_BOUND));
    __m256 u = _mm256_sub_ps(t, _mm256_set1_ps(NN_ERF_MID));
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(NN_ERF_Q8), u, _mm256_set1_ps(NN_ERF_Q7));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(NN_ERF_Q6));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(NN_ERF_Q5));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(NN_ERF_Q4));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(NN_ERF_Q3));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(NN_ERF_Q2));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(NN_ERF_Q1));
    q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(NN_ERF_Q0));
    __m256 big = _mm256_sub_ps(_mm256_set1_ps(1.0f), exp_ps(_mm256_fnmadd_ps(t, t, q)));
    __m256 r = _mm256_blendv_ps(big, small, is_small);
    return _mm256_or_ps(r, _mm256_and_ps(sign_bit, x));
}

void kern_exp_avx2(float *out, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i += W)
        store_first(out + i, exp_ps(load_first(x + i, n - i)), n - i);
}

void kern_erf_avx2(float *out, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i += W)
        store_first(out + i, erf_ps(load_first(x + i, n - i)), n - i);
}

void kern_layernorm_avx2(float *out, const float *x, const float *weight, const float *bias,
                       size_t n, size_t d, float eps)
{
    // x, out: (n, d); weight, bias: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d;
        float *outr = out + row * d;
        __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
        size_t i = 0;
        for (; i + W <= d; i += W)
            add_pd8(_mm256_loadu_ps(xr + i), &lo, &hi);
        double sum = hsum_pd(_mm256_add_pd(lo, hi));
        for (; i < d; i++)
            sum += xr[i];
        double mean = sum / (double)d;
        /* two passes, as the scalar reference: a constant row has variance 0 */
        const __m256d vmean = _mm256_set1_pd(mean);
        lo = _mm256_setzero_pd();
        hi = _mm256_setzero_pd();
        for (i = 0; i + W <= d; i += W) {
            __m256 v = _mm256_loadu_ps(xr + i);
            __m256d c0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), vmean);
            __m256d c1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), vmean);
            lo = _mm256_fmadd_pd(c0, c0, lo);
            hi = _mm256_fmadd_pd(c1, c1, hi);
        }
        double sq = hsum_pd(_mm256_add_pd(lo, hi));
        for (; i < d; i++) {
            double c = xr[i] - mean;
            sq += c * c;
        }
        double var = sq / (double)d;
        float m = (float)mean;
        float rstd = (float)(1.0 / sqrt(var + (double)eps));
        /* the scalar reference's operations in its order: same bits when
           m and rstd agree */
        const __m256 vm = _mm256_set1_ps(m), vr = _mm256_set1_ps(rstd);
        for (i = 0; i + W <= d; i += W) {
            __m256 y = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vm), vr);
            y = _mm256_add_ps(_mm256_mul_ps(y, _mm256_loadu_ps(weight + i)),
                              _mm256_loadu_ps(bias + i));
            _mm256_storeu_ps(outr + i, y);
        }
        for (; i < d; i++)
            outr[i] = (xr[i] - m) * rstd * weight[i] + bias[i];
    }
}

void kern_rmsnorm_avx2(float *out, const float *x, const float *weight, size_t n, size_t d,
                     float eps)
{
    // x, out: (n, d); weight: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d;
        float *outr = out + row * d;
        __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
        size_t i = 0;
        for (; i + W <= d; i += W) {
            __m256 v = _mm256_loadu_ps(xr + i);
            __m256d v0 = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
            __m256d v1 = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
            lo = _mm256_fmadd_pd(v0, v0, lo);
            hi = _mm256_fmadd_pd(v1, v1, hi);
        }
        double sq = hsum_pd(_mm256_add_pd(lo, hi));
        for (; i < d; i++)
            sq += (double)xr[i] * xr[i];
        float rrms = (float)(1.0 / sqrt(sq / (double)d + (double)eps));
        const __m256 vr = _mm256_set1_ps(rrms);
        for (i = 0; i + W <= d; i += W) {
            __m256 y = _mm256_mul_ps(_mm256_loadu_ps(xr + i), vr);
            _mm256_storeu_ps(outr + i, _mm256_mul_ps(y, _mm256_loadu_ps(weight + i)));
        }
        for (; i < d; i++)
            outr[i] = xr[i] * rrms * weight[i];
    }
}

void kern_gelu_avx2(float *out, const float *x, size_t n)
{
    // x, out: (n)
    /* erf, not tanh: PyTorch's default GELU; x halved first, as the scalar */
    for (size_t i = 0; i < n; i += W) {
        __m256 v = load_first(x + i, n - i);
        __m256 e = erf_ps(_mm256_mul_ps(v, _mm256_set1_ps(NN_SQRT1_2)));
        __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v),
                                 _mm256_add_ps(_mm256_set1_ps(1.0f), e));
        store_first(out + i, y, n - i);
    }
}

void kern_softmax_avx2(float *x, size_t n)
{
    // x: (n), in place
    if (n == 0)
        return;
    const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
    __m256 vmax = neg_inf;
    size_t i = 0;
    for (; i + W <= n; i += W)
        vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + i));
    if (i < n) {
        __m256i lanes = lanes_below(n - i);
        __m256 v = _mm256_maskload_ps(x + i, lanes);
        vmax = _mm256_max_ps(vmax, _mm256_blendv_ps(neg_inf, v, _mm256_castsi256_ps(lanes)));
    }
    vmax = _mm256_set1_ps(hmax_ps(vmax));
    /* the sum in double, as the scalar reference */
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    for (i = 0; i + W <= n; i += W) {
        __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
        _mm256_storeu_ps(x + i, e);
        add_pd8(e, &lo, &hi);
    }
    if (i < n) {
        __m256i lanes = lanes_below(n - i);
        __m256 e = exp_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, lanes), vmax));
        e = _mm256_and_ps(e, _mm256_castsi256_ps(lanes)); /* lanes beyond n add 0 */
        _mm256_maskstore_ps(x + i, lanes, e);
        add_pd8(e, &lo, &hi);
    }
    const __m256 total = _mm256_set1_ps((float)hsum_pd(_mm256_add_pd(lo, hi)));
    for (i = 0; i < n; i += W)
        store_first(x + i, _mm256_div_ps(load_first(x + i, n - i), total), n - i);
}

/* q . k over hd floats, in float. */
static inline float dot(const float *q, const float *k, size_t hd)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    size_t j = 0;
    for (; j + 2 * W <= hd; j += 2 * W) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + j), _mm256_loadu_ps(k + j), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + j + W), _mm256_loadu_ps(k + j + W), acc1);
    }
    for (; j < hd; j += W)
        acc0 = _mm256_fmadd_ps(load_first(q + j, hd - j), load_first(k + j, hd - j), acc0);
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}

/* out[j] = sum_{s < len} p[s] v[s * ld + j], j < cols <= 4 W, in float. */
static inline void weighted_rows(float *out, const float *p, const float *v, size_t ld,
                                 size_t len, size_t cols)
{
    if (cols == 4 * W) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t s = 0; s < len; s++) {
            const float *vs = v + s * ld;
            __m256 ps = _mm256_set1_ps(p[s]);
            a0 = _mm256_fmadd_ps(ps, _mm256_loadu_ps(vs), a0);
            a1 = _mm256_fmadd_ps(ps, _mm256_loadu_ps(vs + W), a1);
            a2 = _mm256_fmadd_ps(ps, _mm256_loadu_ps(vs + 2 * W), a2);
            a3 = _mm256_fmadd_ps(ps, _mm256_loadu_ps(vs + 3 * W), a3);
        }
        _mm256_storeu_ps(out, a0);
        _mm256_storeu_ps(out + W, a1);
        _mm256_storeu_ps(out + 2 * W, a2);
        _mm256_storeu_ps(out + 3 * W, a3);
        return;
    }
    size_t nv = (cols + W - 1) / W;
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                     _mm256_setzero_ps()};
    for (size_t s = 0; s < len; s++) {
        const float *vs = v + s * ld;
        __m256 ps = _mm256_set1_ps(p[s]);
        for (size_t u = 0; u < nv; u++)
            acc[u] = _mm256_fmadd_ps(ps, load_first(vs + u * W, cols - u * W), acc[u]);
    }
    for (size_t u = 0; u < nv; u++)
        store_first(out + u * W, acc[u], cols - u * W);
}

void kern_attention_avx2(float *out, size_t ldo, const float *q, const float *k, const float *v,
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
            kern_softmax_avx2(scratch, t + 1);
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
typedef int kern_nn_avx2_unavailable;
#endif
