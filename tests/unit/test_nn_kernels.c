/* The forward pass's kernels other than matmul (LayerNorm, RMSNorm, GELU,
 * softmax, causal attention): the scalar reference against plain
 * double-precision loops written here, the SIMD variants' vector exp and erf
 * against exp() and erf() in double, and every SIMD variant this CPU
 * supports against the scalar one, on shapes that are and are not multiples
 * of the vector width, extreme inputs and out == x. Each kernel is called by
 * name (kern_variants.h), never through the dispatch table. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kern_variants.h"
#include "kernels/nn_internal.h"
#include "test_filter.h"
#include "varprof/isa.h"

/* One float rounding, relative. */
static const double U = 0x1p-24;

/* Shapes that are and are not multiples of 8 or 16. */
static const size_t WIDTHS[] = {1, 3, 7, 15, 17, 31, 33, 48, 64, 100, 257};
#define N_WIDTHS (sizeof WIDTHS / sizeof WIDTHS[0])

typedef struct {
    vp_isa isa;
    const char *name;
    void (*layernorm)(float *, const float *, const float *, const float *, size_t, size_t, float);
    void (*rmsnorm)(float *, const float *, const float *, size_t, size_t, float);
    void (*gelu)(float *, const float *, size_t);
    void (*softmax)(float *, size_t);
    void (*attention)(float *, size_t, const float *, const float *, const float *, size_t, size_t,
                      size_t, size_t, float, float, const float *, size_t, float *);
    void (*exp)(float *, const float *, size_t);
    void (*erf)(float *, const float *, size_t);
} variant;

static const variant VARIANTS[] = {
    {VP_ISA_SCALAR, "scalar", kern_layernorm_scalar, kern_rmsnorm_scalar, kern_gelu_scalar,
     kern_softmax_scalar, kern_attention_scalar, NULL, NULL},
#if defined(__x86_64__)
    {VP_ISA_AVX2, "avx2", kern_layernorm_avx2, kern_rmsnorm_avx2, kern_gelu_avx2, kern_softmax_avx2,
     kern_attention_avx2, kern_exp_avx2, kern_erf_avx2},
    {VP_ISA_AVX512, "avx512", kern_layernorm_avx512, kern_rmsnorm_avx512, kern_gelu_avx512,
     kern_softmax_avx512, kern_attention_avx512, kern_exp_avx512, kern_erf_avx512},
#endif
};
#define N_VARIANTS (sizeof VARIANTS / sizeof VARIANTS[0])

/* ---- test helpers (not under test) ---- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return rng_state >> 11;
}

/* Uniform in [0, 1). */
static double uniform(void)
{
    return (double)(rng_next() & ((1ull << 53) - 1)) * 0x1p-53;
}

static float normal(void)
{
    double u1 = uniform(), u2 = uniform();
    return (float)(sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2));
}

static void fill_normal(float *x, size_t n, float scale, float offset)
{
    for (size_t i = 0; i < n; i++)
        x[i] = offset + scale * normal();
}

static float *new_floats(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    assert_non_null(p);
    return p;
}

static double *new_doubles(size_t n)
{
    double *p = malloc((n ? n : 1) * sizeof *p);
    assert_non_null(p);
    return p;
}

/* The spacing of floats at |r| (subnormal spacing below FLT_MIN). */
static double float_ulp_at(double r)
{
    r = fabs(r);
    if (r < FLT_MIN)
        return 0x1p-149;
    int e;
    frexp(r, &e);
    return ldexp(1.0, e - 24);
}

/* The largest |difference| and share of its tolerance compare() saw since
   summary_reset(), for the line each test prints. */
static double seen_diff, seen_share;

static void summary_reset(void)
{
    seen_diff = seen_share = 0.0;
}

static void summary_print(const char *what)
{
    print_message("%s: max |diff| %.3g, at most %.3f of the tolerance\n", what, seen_diff,
                  seen_share);
}

/* |got[i] - want[i]| <= tol[i] for every i < n. Prints the first mismatch
 * and the largest difference (and its share of the tolerance); returns the
 * number of mismatches. NaN or inf where want is finite is a mismatch. */
static size_t compare(const char *what, const float *got, const double *want, const double *tol,
                      size_t n)
{
    size_t bad = 0, worst = 0;
    double max_diff = 0.0, max_share = 0.0;
    for (size_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - want[i]);
        if (!(diff <= tol[i])) {
            if (bad == 0)
                print_error("%s: first mismatch at %zu: got %.9g, want %.9g, |diff| %.3g > tol "
                            "%.3g\n",
                            what, i, (double)got[i], want[i], diff, tol[i]);
            bad++;
        }
        if (diff > max_diff || isnan(diff))
            max_diff = isnan(diff) ? INFINITY : diff;
        double share = tol[i] > 0 ? diff / tol[i] : (diff > 0 ? INFINITY : 0);
        if (share > max_share || isnan(share)) {
            max_share = isnan(share) ? INFINITY : share;
            worst = i;
        }
    }
    seen_diff = max_diff > seen_diff ? max_diff : seen_diff;
    seen_share = max_share > seen_share ? max_share : seen_share;
    if (bad)
        print_error("%s: %zu of %zu outside tolerance; max |diff| %.3g, worst at %zu (%.2f of "
                    "its tolerance)\n",
                    what, bad, n, max_diff, worst, max_share);
    return bad;
}

/* Bitwise equality of two float arrays, printing the first difference. */
static size_t compare_bits(const char *what, const float *a, const float *b, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
            if (bad == 0)
                print_error("%s: first difference at %zu: %.9g vs %.9g\n", what, i, (double)a[i],
                            (double)b[i]);
            bad++;
        }
    }
    return bad;
}

static void float_to_double(double *out, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = x[i];
}

static int all_finite(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

/* ---- double-precision references ---- */

static void layernorm_ref(double *out, double *scale, const float *x, const float *w,
                          const float *b, size_t n, size_t d, float eps)
{
    // scale[i] = (|x| + |mean|) rstd |w| + |b|: the size of what out[i] is
    // computed from, for tolerances
    for (size_t r = 0; r < n; r++) {
        const float *xr = x + r * d;
        double mean = 0, var = 0;
        for (size_t i = 0; i < d; i++)
            mean += xr[i];
        mean /= (double)d;
        for (size_t i = 0; i < d; i++)
            var += (xr[i] - mean) * (xr[i] - mean);
        var /= (double)d;
        double rstd = 1.0 / sqrt(var + eps);
        for (size_t i = 0; i < d; i++) {
            out[r * d + i] = (xr[i] - mean) * rstd * w[i] + b[i];
            scale[r * d + i] = (fabs(xr[i]) + fabs(mean)) * rstd * fabs(w[i]) + fabs(b[i]);
        }
    }
}

static void rmsnorm_ref(double *out, const float *x, const float *w, size_t n, size_t d, float eps)
{
    for (size_t r = 0; r < n; r++) {
        const float *xr = x + r * d;
        double ms = 0;
        for (size_t i = 0; i < d; i++)
            ms += (double)xr[i] * xr[i];
        ms /= (double)d;
        for (size_t i = 0; i < d; i++)
            out[r * d + i] = xr[i] / sqrt(ms + eps) * w[i];
    }
}

static double gelu_ref(double x)
{
    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

static void softmax_ref(double *out, const float *x, size_t n)
{
    double max = x[0], sum = 0;
    for (size_t i = 1; i < n; i++)
        max = x[i] > max ? x[i] : max;
    for (size_t i = 0; i < n; i++)
        sum += out[i] = exp(x[i] - max);
    for (size_t i = 0; i < n; i++)
        out[i] /= sum;
}

/* Causal attention in double; tol[t][j] bounds the float kernels' error:
 * 2^-24 (2 (hd + 2) A + R + (t + 1) + 8) sum_s p_s |v_sj|, with A the
 * largest sum_j |q_tj k_sj| / sqrt(hd) (float dot products err by up to
 * hd + 2 roundings of it, and an error in one score moves every p_s by up
 * to twice it), R the largest |score - max score| (the float subtraction
 * in the softmax rounds by R 2^-24, exp turns that into a relative error),
 * t + 1 roundings in the float weighted sum, 8 for exp, the float sum and
 * the division. Doubled, since each of these is a worst case of a sum of
 * several. */
/* scores q.k scale (scale the float the kernel gets), through Gemma-2's
   softcap tanh(z / softcap) when softcap > 0: tanh's slope is at most 1,
   so a score's error passes through it no larger, and the cap adds a
   division, tanhf (~1 ulp) and a product: 4 units more. */
static void attention_ref(double *out, double *tol, size_t ldo, const float *q, const float *k,
                          const float *v, size_t ld, size_t T, size_t H, size_t hd, double scale,
                          double softcap)
{
    double *p = new_doubles(T);
    for (size_t h = 0; h < H; h++) {
        for (size_t t = 0; t < T; t++) {
            const float *qt = q + t * ld + h * hd;
            double max = -INFINITY, big_a = 0;
            for (size_t s = 0; s <= t; s++) {
                const float *ks = k + s * ld + h * hd;
                double dot = 0, a = 0;
                for (size_t j = 0; j < hd; j++) {
                    dot += (double)qt[j] * ks[j];
                    a += fabs((double)qt[j] * ks[j]);
                }
                p[s] = dot * scale;
                if (softcap > 0.0)
                    p[s] = softcap * tanh(p[s] / softcap);
                max = p[s] > max ? p[s] : max;
                big_a = a * scale > big_a ? a * scale : big_a;
            }
            double sum = 0, range = 0;
            for (size_t s = 0; s <= t; s++) {
                range = max - p[s] > range ? max - p[s] : range;
                sum += p[s] = exp(p[s] - max);
            }
            double units = 2.0 * (2.0 * (double)(hd + 2) * big_a + range + (double)(t + 1) + 8.0 +
                                  (softcap > 0.0 ? 4.0 : 0.0));
            for (size_t j = 0; j < hd; j++) {
                double acc = 0, mag = 0;
                for (size_t s = 0; s <= t; s++) {
                    acc += p[s] / sum * v[s * ld + h * hd + j];
                    mag += p[s] / sum * fabs(v[s * ld + h * hd + j]);
                }
                out[t * ldo + h * hd + j] = acc;
                tol[t * ldo + h * hd + j] = U * units * mag + 0x1p-140;
            }
        }
    }
    free(p);
}

/* ---- vector exp and erf against libm in double ---- */

static float bits_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static uint32_t float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* Largest error in float ulps of the result, of f against ref over every
 * step-th float from lo to hi (both positive) and their negatives. */
static double max_ulps(void (*f)(float *, const float *, size_t), double (*ref)(double), float lo,
                       float hi, uint32_t step, int negatives, float *at)
{
    enum { CHUNK = 4096 };
    float x[CHUNK], y[CHUNK];
    double worst = 0;
    for (int sign = 0; sign <= negatives; sign++) {
        uint32_t b = float_bits(lo), end = float_bits(hi);
        while (b <= end) {
            size_t n = 0;
            for (; n < CHUNK && b <= end; n++, b += step)
                x[n] = sign ? -bits_float(b) : bits_float(b);
            f(y, x, n);
            for (size_t i = 0; i < n; i++) {
                double r = ref(x[i]);
                double e = fabs((double)y[i] - r) / float_ulp_at(r);
                if (!(e <= worst)) {
                    worst = isnan(e) ? INFINITY : e;
                    *at = x[i];
                }
            }
        }
    }
    return worst;
}

static void vector_exp_and_erf_against_libm(void **state)
{
    (void)state;
    for (size_t vi = 1; vi < N_VARIANTS; vi++) {
        const variant *var = &VARIANTS[vi];
        if (!vp_isa_supported(var->isa)) {
            print_message("%s: not supported here, skipped\n", var->name);
            continue;
        }
        float at = 0;
        /* exp: normal results, x in [-87.3, 88.7]: within 2 ulps (Cephes'
           polynomial is good to about 1; the range reduction adds < 0.5). */
        double e_exp = max_ulps(var->exp, exp, 0x1p-30f, 88.7f, 61, 0, &at);
        float at_neg = 0;
        double e_exp_neg = max_ulps(var->exp, exp, 0x1p-30f, 87.3f, 61, 1, &at_neg);
        if (e_exp_neg > e_exp) {
            e_exp = e_exp_neg;
            at = at_neg;
        }
        print_message("%s exp: max error %.3f ulp (at %.9g), tolerance 2\n", var->name, e_exp,
                      (double)at);
        assert_true(e_exp <= 2.0);
        /* exp into the subnormals, x in [-103.9, -87.4]: within 1 subnormal
           spacing (one rounding of p 2^n there). */
        double e_sub = 0;
        for (float x = -103.9f; x <= -87.4f; x += 0.001f) {
            float y;
            var->exp(&y, &x, 1);
            double e = fabs((double)y - exp(x)) / 0x1p-149;
            e_sub = e > e_sub ? e : e_sub;
        }
        print_message("%s exp: max error %.3f subnormal spacings below FLT_MIN, tolerance 1\n",
                      var->name, e_sub);
        assert_true(e_sub <= 1.0);
        /* the ends: 0 below, inf above, exact at 0 */
        float ends[] = {-104.5f, -1e30f, -INFINITY, 0.0f, 89.0f, 1e30f};
        float ends_y[6];
        var->exp(ends_y, ends, 6);
        assert_true(ends_y[0] == 0.0f && ends_y[1] == 0.0f && ends_y[2] == 0.0f);
        assert_true(ends_y[3] == 1.0f);
        assert_true(isinf(ends_y[4]) && isinf(ends_y[5]));

        /* erf: every 67th float from 2^-126 to 6 and their negatives, and
           every float's neighbourhood of the branch point 1 and of 4:
           within 2 ulps. */
        double e_erf = max_ulps(var->erf, erf, FLT_MIN, 6.0f, 67, 1, &at);
        float at_edge = 0;
        double e_edge = max_ulps(var->erf, erf, 0.999f, 1.001f, 1, 1, &at_edge);
        if (e_edge > e_erf) {
            e_erf = e_edge;
            at = at_edge;
        }
        e_edge = max_ulps(var->erf, erf, 3.99f, 4.01f, 1, 0, &at_edge);
        if (e_edge > e_erf) {
            e_erf = e_edge;
            at = at_edge;
        }
        print_message("%s erf: max error %.3f ulp (at %.9g), tolerance 2\n", var->name, e_erf,
                      (double)at);
        assert_true(e_erf <= 2.0);
        float big[] = {0.0f, -0.0f, 1e-40f, 1e30f, -1e30f, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY};
        float big_y[9];
        var->erf(big_y, big, 9);
        assert_true(big_y[0] == 0.0f && big_y[1] == 0.0f);
        assert_true(fabs((double)big_y[2] - erf(1e-40)) <= 0x1p-149);
        for (size_t i = 3; i < 9; i++)
            assert_true(big_y[i] == (big[i] > 0 ? 1.0f : -1.0f));
    }
}

/* ---- the scalar reference against double precision ---- */

static void scalar_norms_match_double(void **state)
{
    (void)state;
    summary_reset();
    rng_state = 1;
    const size_t rows = 3;
    const float eps = 1e-5f;
    for (size_t wi = 0; wi < N_WIDTHS; wi++) {
        size_t d = WIDTHS[wi];
        float *x = new_floats(rows * d), *w = new_floats(d), *b = new_floats(d);
        float *out = new_floats(rows * d);
        double *want = new_doubles(rows * d), *scale = new_doubles(rows * d);
        double *tol = new_doubles(rows * d);
        fill_normal(x, rows * d, 2.0f, 3.0f); /* an offset: the mean matters */
        fill_normal(w, d, 0.5f, 1.0f);
        fill_normal(b, d, 0.5f, 0.0f);
        char what[64];

        /* LayerNorm: (float)mean and (float)rstd round once each, then four
           float operations: 8 roundings of the size of the terms covers
           them twice over. */
        kern_layernorm_scalar(out, x, w, b, rows, d, eps);
        layernorm_ref(want, scale, x, w, b, rows, d, eps);
        for (size_t i = 0; i < rows * d; i++)
            tol[i] = 8 * U * scale[i];
        snprintf(what, sizeof what, "layernorm scalar d=%zu", d);
        assert_int_equal(compare(what, out, want, tol, rows * d), 0);

        /* RMSNorm: (float)rrms and two float products: 6 roundings of the
           result. */
        kern_rmsnorm_scalar(out, x, w, rows, d, eps);
        rmsnorm_ref(want, x, w, rows, d, eps);
        for (size_t i = 0; i < rows * d; i++)
            tol[i] = 6 * U * fabs(want[i]) + 0x1p-140;
        snprintf(what, sizeof what, "rmsnorm scalar d=%zu", d);
        assert_int_equal(compare(what, out, want, tol, rows * d), 0);

        free(x), free(w), free(b), free(out), free(want), free(scale), free(tol);
    }
    summary_print("layernorm and rmsnorm scalar vs double");
}

static void scalar_gelu_matches_double(void **state)
{
    (void)state;
    summary_reset();
    const size_t n = 200001;
    float *x = new_floats(n), *out = new_floats(n);
    double *want = new_doubles(n), *tol = new_doubles(n);
    for (size_t i = 0; i < n; i++)
        x[i] = -10.0f + 20.0f * (float)i / (float)(n - 1);
    kern_gelu_scalar(out, x, n);
    /* x / sqrt 2 rounds twice (the constant, the product), moving erf by
       up to 0.5 2^-24 |x|... erf' <= 1.13: under 2^-23; erff is within an
       ulp, 1 + erf rounds once more: about 3 2^-24 absolute in 1 + erf,
       halved by x / 2, then the product rounds once. Absolute in x, since
       1 + erf cancels for x < 0 (the float formula's own limit, not the
       kernel's): 2^-24 (4 |x| + 2 |y|). */
    for (size_t i = 0; i < n; i++) {
        want[i] = gelu_ref(x[i]);
        tol[i] = U * (4 * fabs(x[i]) + 2 * fabs(want[i]));
    }
    assert_int_equal(compare("gelu scalar", out, want, tol, n), 0);
    free(x), free(out), free(want), free(tol);
    summary_print("gelu scalar vs double");
}

static void scalar_softmax_matches_double(void **state)
{
    (void)state;
    summary_reset();
    rng_state = 2;
    for (size_t wi = 0; wi < N_WIDTHS; wi++) {
        size_t n = WIDTHS[wi];
        float *x = new_floats(n);
        double *want = new_doubles(n), *tol = new_doubles(n);
        for (float spread = 1.0f; spread <= 100.0f; spread *= 10.0f) {
            fill_normal(x, n, spread, 5.0f);
            softmax_ref(want, x, n);
            float max = x[0];
            for (size_t i = 1; i < n; i++)
                max = x[i] > max ? x[i] : max;
            /* x - max rounds in float by |x - max| 2^-24, which exp turns
               into that relative error; expf's ulp, the float total and the
               division add 4 more: 2^-24 (|x - max| + 4) relative, plus a
               subnormal spacing where the result is subnormal. Doubled: glibc
               meets the sum of worst cases to 0.9 of it, another libm's expf
               may be a little worse. */
            for (size_t i = 0; i < n; i++)
                tol[i] = 2 * U * (fabs((double)x[i] - max) + 4) * want[i] + 0x1p-149;
            kern_softmax_scalar(x, n);
            char what[64];
            snprintf(what, sizeof what, "softmax scalar n=%zu spread=%g", n, (double)spread);
            assert_int_equal(compare(what, x, want, tol, n), 0);
        }
        free(x), free(want), free(tol);
    }
    summary_print("softmax scalar vs double");
}

/* q, k, v for T tokens of H heads of hd, rows of stride ld (padding set to
   NaN: a kernel reading it would spread NaN). */
static void attention_inputs(float *q, float *k, float *v, size_t ld, size_t T, size_t width)
{
    for (size_t t = 0; t < T; t++) {
        for (size_t j = 0; j < ld; j++) {
            int pad = j >= width;
            q[t * ld + j] = pad ? NAN : normal();
            k[t * ld + j] = pad ? NAN : normal();
            v[t * ld + j] = pad ? NAN : normal();
        }
    }
}

static void scalar_attention_matches_double(void **state)
{
    (void)state;
    summary_reset();
    rng_state = 3;
    static const size_t Ts[] = {1, 2, 5, 9};
    static const size_t Hs[] = {1, 2, 3};
    static const size_t hds[] = {1, 2, 5, 8, 17};
    for (size_t ti = 0; ti < 4; ti++)
        for (size_t hi = 0; hi < 3; hi++)
            for (size_t di = 0; di < 10; di++) {
                /* each shape as usual, then scaled 0.7 and capped at 1.2 */
                size_t T = Ts[ti], H = Hs[hi], hd = hds[di / 2], width = H * hd;
                const float scale = di % 2 ? 0.7f : (float)(1.0 / sqrt((double)hd));
                const float softcap = di % 2 ? 1.2f : 0.0f;
                size_t ld = width + 3, ldo = width + 2;
                float *q = new_floats(T * ld), *k = new_floats(T * ld), *v = new_floats(T * ld);
                float *out = new_floats(T * ldo), *scratch = new_floats(T);
                double *want = new_doubles(T * ldo), *tol = new_doubles(T * ldo);
                attention_inputs(q, k, v, ld, T, width);
                for (size_t i = 0; i < T * ldo; i++)
                    out[i] = 7.0f; /* the padding must stay untouched */
                for (size_t i = 0; i < T * ldo; i++)
                    want[i] = 7.0, tol[i] = 0.0;
                attention_ref(want, tol, ldo, q, k, v, ld, T, H, hd, scale, softcap);
                kern_attention_scalar(out, ldo, q, k, v, ld, T, H, hd, scale, softcap, NULL, 0,
                                      scratch);
                char what[96];
                snprintf(what, sizeof what, "attention scalar T=%zu H=%zu hd=%zu cap %g", T, H, hd,
                         (double)softcap);
                /* tolerance: attention_ref */
                assert_int_equal(compare(what, out, want, tol, T * ldo), 0);
                free(q), free(k), free(v), free(out), free(scratch), free(want), free(tol);
            }
    summary_print("attention scalar vs double");
}

/* ---- every SIMD variant against the scalar one ---- */

static void simd_norms_match_scalar(void **state)
{
    (void)state;
    const float eps = 1e-5f;
    for (size_t vi = 1; vi < N_VARIANTS; vi++) {
        const variant *var = &VARIANTS[vi];
        if (!vp_isa_supported(var->isa))
            continue;
        summary_reset();
        rng_state = 10 + vi;
        for (size_t wi = 0; wi < N_WIDTHS; wi++) {
            size_t d = WIDTHS[wi], rows = 1 + rng_next() % 5;
            size_t n = rows * d;
            float *x = new_floats(n), *w = new_floats(d), *b = new_floats(d);
            float *want = new_floats(n), *got = new_floats(n), *alias = new_floats(n);
            double *want_d = new_doubles(n), *scale = new_doubles(n), *tol = new_doubles(n);
            fill_normal(x, n, 2.0f, 3.0f);
            fill_normal(w, d, 0.5f, 1.0f);
            fill_normal(b, d, 0.5f, 0.0f);
            char what[80];

            /* LayerNorm: the mean and variance are summed in another order,
               so (float)mean and (float)rstd may each land one float away;
               the elementwise steps are the scalar ones: 8 roundings of the
               size of the terms (as against double). */
            kern_layernorm_scalar(want, x, w, b, rows, d, eps);
            var->layernorm(got, x, w, b, rows, d, eps);
            layernorm_ref(want_d, scale, x, w, b, rows, d, eps);
            float_to_double(want_d, want, n);
            for (size_t i = 0; i < n; i++)
                tol[i] = 8 * U * scale[i];
            snprintf(what, sizeof what, "layernorm %s d=%zu rows=%zu", var->name, d, rows);
            assert_int_equal(compare(what, got, want_d, tol, n), 0);
            /* out == x gives the same bits */
            memcpy(alias, x, n * sizeof *x);
            var->layernorm(alias, alias, w, b, rows, d, eps);
            assert_int_equal(compare_bits(what, alias, got, n), 0);

            /* RMSNorm: (float)rrms may land one float away, then the
               scalar's two products: 6 roundings of the result. */
            kern_rmsnorm_scalar(want, x, w, rows, d, eps);
            var->rmsnorm(got, x, w, rows, d, eps);
            float_to_double(want_d, want, n);
            for (size_t i = 0; i < n; i++)
                tol[i] = 6 * U * fabs(want_d[i]) + 0x1p-140;
            snprintf(what, sizeof what, "rmsnorm %s d=%zu rows=%zu", var->name, d, rows);
            assert_int_equal(compare(what, got, want_d, tol, n), 0);
            memcpy(alias, x, n * sizeof *x);
            var->rmsnorm(alias, alias, w, rows, d, eps);
            assert_int_equal(compare_bits(what, alias, got, n), 0);

            /* A constant row: variance exactly 0, x - mean exactly 0, so
               LayerNorm's output is the bias, bit for bit, in every
               variant. */
            for (size_t i = 0; i < n; i++)
                x[i] = 3.7f;
            var->layernorm(got, x, w, b, rows, d, eps);
            for (size_t r = 0; r < rows; r++) {
                snprintf(what, sizeof what, "layernorm %s constant row d=%zu", var->name, d);
                assert_int_equal(compare_bits(what, got + r * d, b, d), 0);
            }
            free(x), free(w), free(b), free(want), free(got), free(alias);
            free(want_d), free(scale), free(tol);
        }
        char label[64];
        snprintf(label, sizeof label, "norms %s vs scalar", var->name);
        summary_print(label);
    }
}

static void simd_gelu_matches_scalar(void **state)
{
    (void)state;
    for (size_t vi = 1; vi < N_VARIANTS; vi++) {
        const variant *var = &VARIANTS[vi];
        if (!vp_isa_supported(var->isa))
            continue;
        summary_reset();
        rng_state = 20 + vi;
        for (size_t wi = 0; wi < N_WIDTHS; wi++) {
            size_t n = WIDTHS[wi] * 3;
            float *x = new_floats(n), *want = new_floats(n), *got = new_floats(n);
            double *want_d = new_doubles(n), *tol = new_doubles(n);
            fill_normal(x, n, 3.0f, 0.0f);
            kern_gelu_scalar(want, x, n);
            var->gelu(got, x, n);
            float_to_double(want_d, want, n);
            /* Both erfs within 2 ulps of erf, so 1 + erf may differ by 2
               roundings of 1 (2^-23), halved by x / 2; the product rounds in
               each: 2^-24 (4 |x| + 2 |y|), absolute in x for the same
               cancellation as against double. */
            for (size_t i = 0; i < n; i++)
                tol[i] = U * (4 * fabs(x[i]) + 2 * fabs(want_d[i]));
            char what[64];
            snprintf(what, sizeof what, "gelu %s n=%zu", var->name, n);
            assert_int_equal(compare(what, got, want_d, tol, n), 0);
            /* out == x */
            var->gelu(x, x, n);
            assert_int_equal(compare_bits(what, x, got, n), 0);
            free(x), free(want), free(got), free(want_d), free(tol);
        }
        /* a dense sweep, and extremes: no NaN or inf, 0 far left, x far right */
        enum { SWEEP = 100003 };
        float *x = new_floats(SWEEP), *want = new_floats(SWEEP), *got = new_floats(SWEEP);
        double *want_d = new_doubles(SWEEP), *tol = new_doubles(SWEEP);
        for (size_t i = 0; i < SWEEP; i++)
            x[i] = -12.0f + 24.0f * (float)i / (float)(SWEEP - 1);
        float extremes[] = {1e30f, -1e30f, FLT_MAX, -FLT_MAX, 1e5f, -1e5f, -9.0f, 1e-40f, -0.0f};
        memcpy(x, extremes, sizeof extremes);
        kern_gelu_scalar(want, x, SWEEP);
        var->gelu(got, x, SWEEP);
        float_to_double(want_d, want, SWEEP);
        for (size_t i = 0; i < SWEEP; i++)
            tol[i] = U * (4 * fabs(x[i]) + 2 * fabs(want_d[i])); /* as above */
        char what[64];
        snprintf(what, sizeof what, "gelu %s sweep", var->name);
        assert_int_equal(compare(what, got, want_d, tol, SWEEP), 0);
        assert_true(all_finite(got, SWEEP));
        assert_true(got[0] == 1e30f && got[2] == FLT_MAX && got[4] == 1e5f);
        assert_true(got[1] == 0.0f && got[3] == 0.0f && got[5] == 0.0f);
        free(x), free(want), free(got), free(want_d), free(tol);
        char label[64];
        snprintf(label, sizeof label, "gelu %s vs scalar", var->name);
        summary_print(label);
    }
}

static void simd_softmax_matches_scalar(void **state)
{
    (void)state;
    for (size_t vi = 1; vi < N_VARIANTS; vi++) {
        const variant *var = &VARIANTS[vi];
        if (!vp_isa_supported(var->isa))
            continue;
        summary_reset();
        rng_state = 30 + vi;
        for (size_t wi = 0; wi < N_WIDTHS; wi++) {
            size_t n = WIDTHS[wi];
            float *x = new_floats(n), *want = new_floats(n), *got = new_floats(n);
            double *want_d = new_doubles(n), *tol = new_doubles(n);
            for (int kind = 0; kind < 4; kind++) {
                if (kind < 2)
                    fill_normal(x, n, kind == 0 ? 1.0f : 30.0f, -2.0f);
                else /* extremes: huge of both signs; exp(-2e30) etc. underflow to 0 */
                    for (size_t i = 0; i < n; i++)
                        x[i] = (rng_next() & 1 ? 1.0f : -1.0f) * (kind == 2 ? 1e30f : FLT_MAX) *
                               (float)uniform();
                memcpy(want, x, n * sizeof *x);
                memcpy(got, x, n * sizeof *x);
                kern_softmax_scalar(want, n);
                var->softmax(got, n);
                float_to_double(want_d, want, n);
                /* Both exps within 2 ulps, the float totals may differ by
                   one rounding, each division rounds: 8 ulps relative, and
                   a subnormal spacing twice where results are subnormal. */
                for (size_t i = 0; i < n; i++)
                    tol[i] = 8 * U * want_d[i] + 0x1p-148;
                char what[64];
                snprintf(what, sizeof what, "softmax %s n=%zu kind=%d", var->name, n, kind);
                assert_int_equal(compare(what, got, want_d, tol, n), 0);
                assert_true(all_finite(got, n));
                double sum = 0;
                for (size_t i = 0; i < n; i++)
                    sum += got[i];
                /* n outputs each within 2^-22 relative of p_i */
                assert_true(fabs(sum - 1.0) <= 4 * U * (double)(n + 4));
            }
            free(x), free(want), free(got), free(want_d), free(tol);
        }
        char label[64];
        snprintf(label, sizeof label, "softmax %s vs scalar", var->name);
        summary_print(label);
    }
}

static void simd_attention_matches_scalar_and_double(void **state)
{
    (void)state;
    for (size_t vi = 1; vi < N_VARIANTS; vi++) {
        const variant *var = &VARIANTS[vi];
        if (!vp_isa_supported(var->isa))
            continue;
        summary_reset();
        rng_state = 40 + vi;
        for (size_t wi = 0; wi < N_WIDTHS; wi++) {
            size_t hd = WIDTHS[wi];
            size_t H = 1 + rng_next() % 3, T = 1 + rng_next() % (hd > 64 ? 12 : 40);
            /* every other width Gemma-2's form: a scale of its own and a cap */
            const float scale = wi % 2 ? 0.3f : (float)(1.0 / sqrt((double)hd));
            const float softcap = wi % 2 ? 2.0f : 0.0f;
            size_t width = H * hd, ld = width + rng_next() % 5, ldo = width + rng_next() % 3;
            float *q = new_floats(T * ld), *k = new_floats(T * ld), *v = new_floats(T * ld);
            float *want = new_floats(T * ldo), *got = new_floats(T * ldo);
            float *scratch = new_floats(T);
            double *want_d = new_doubles(T * ldo), *tol = new_doubles(T * ldo);
            double *scalar_d = new_doubles(T * ldo);
            attention_inputs(q, k, v, ld, T, width);
            for (size_t i = 0; i < T * ldo; i++)
                want[i] = got[i] = 7.0f, want_d[i] = 7.0, tol[i] = 0.0;
            attention_ref(want_d, tol, ldo, q, k, v, ld, T, H, hd, scale, softcap);
            kern_attention_scalar(want, ldo, q, k, v, ld, T, H, hd, scale, softcap, NULL, 0,
                                  scratch);
            var->attention(got, ldo, q, k, v, ld, T, H, hd, scale, softcap, NULL, 0, scratch);
            char what[96];
            snprintf(what, sizeof what, "attention %s T=%zu H=%zu hd=%zu vs double", var->name, T,
                     H, hd);
            /* against double: attention_ref's bound; padding untouched */
            assert_int_equal(compare(what, got, want_d, tol, T * ldo), 0);
            /* against scalar: each within that bound of the exact value */
            float_to_double(scalar_d, want, T * ldo);
            for (size_t i = 0; i < T * ldo; i++)
                tol[i] *= 2;
            snprintf(what, sizeof what, "attention %s T=%zu H=%zu hd=%zu vs scalar", var->name, T,
                     H, hd);
            assert_int_equal(compare(what, got, scalar_d, tol, T * ldo), 0);
            free(q), free(k), free(v), free(want), free(got), free(scratch);
            free(want_d), free(tol), free(scalar_d);
        }
        char label[64];
        snprintf(label, sizeof label, "attention %s vs scalar", var->name);
        summary_print(label);
    }
}

/* ---- each row independent of how rows are split ---- */

static void rows_do_not_depend_on_the_split(void **state)
{
    (void)state;
    rng_state = 50;
    const size_t rows = 6, d = 37, T = 23, H = 3, hd = 17, ld = H * hd;
    float *x = new_floats(rows * d), *w = new_floats(d), *b = new_floats(d);
    float *all = new_floats(rows * d), *one = new_floats(rows * d);
    float *q = new_floats(T * ld), *k = new_floats(T * ld), *v = new_floats(T * ld);
    float *att_all = new_floats(T * ld), *att_part = new_floats(T * ld);
    float *scratch = new_floats(T);
    fill_normal(x, rows * d, 1.0f, 0.5f);
    fill_normal(w, d, 0.3f, 1.0f);
    fill_normal(b, d, 0.3f, 0.0f);
    attention_inputs(q, k, v, ld, T, ld);
    for (size_t vi = 0; vi < N_VARIANTS; vi++) {
        const variant *var = &VARIANTS[vi];
        if (!vp_isa_supported(var->isa))
            continue;
        char what[64];
        /* norms: all rows in one call, or one at a time */
        var->layernorm(all, x, w, b, rows, d, 1e-5f);
        for (size_t r = 0; r < rows; r++)
            var->layernorm(one + r * d, x + r * d, w, b, 1, d, 1e-5f);
        snprintf(what, sizeof what, "layernorm %s split", var->name);
        assert_int_equal(compare_bits(what, all, one, rows * d), 0);
        var->rmsnorm(all, x, w, rows, d, 1e-5f);
        for (size_t r = 0; r < rows; r++)
            var->rmsnorm(one + r * d, x + r * d, w, 1, d, 1e-5f);
        snprintf(what, sizeof what, "rmsnorm %s split", var->name);
        assert_int_equal(compare_bits(what, all, one, rows * d), 0);
        /* GELU: all elements at once, or in pieces of odd lengths */
        var->gelu(all, x, rows * d);
        for (size_t i = 0, step = 1; i < rows * d; i += step, step += 2)
            var->gelu(one + i, x + i, step < rows * d - i ? step : rows * d - i);
        snprintf(what, sizeof what, "gelu %s split", var->name);
        assert_int_equal(compare_bits(what, all, one, rows * d), 0);
        /* attention: all heads at once, or one head a call; and the first
           tokens alone give the same rows as the whole sequence */
        const float scale = (float)(1.0 / sqrt((double)hd));
        var->attention(att_all, ld, q, k, v, ld, T, H, hd, scale, 0.0f, NULL, 0, scratch);
        for (size_t h = 0; h < H; h++)
            var->attention(att_part + h * hd, ld, q + h * hd, k + h * hd, v + h * hd, ld, T, 1, hd,
                           scale, 0.0f, NULL, 0, scratch);
        snprintf(what, sizeof what, "attention %s heads split", var->name);
        assert_int_equal(compare_bits(what, att_all, att_part, T * ld), 0);
        var->attention(att_part, ld, q, k, v, ld, T / 2, H, hd, scale, 0.0f, NULL, 0, scratch);
        snprintf(what, sizeof what, "attention %s prefix", var->name);
        assert_int_equal(compare_bits(what, att_all, att_part, (T / 2) * ld), 0);
    }
    free(x), free(w), free(b), free(all), free(one), free(q), free(k), free(v);
    free(att_all), free(att_part), free(scratch);
}

/* layernorm_keep and rmsnorm_keep: the norm's output bits, and as its
   statistics exactly what norm_stats gives the backward, on every set
   this CPU runs (the backward's dx and parameter gradients then keep
   their bits when the forward hands them over). */
static void kept_stats_are_norm_stats(void **state)
{
    (void)state;
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        const kern_table *k = kern_for((vp_isa)isa);
        for (size_t wi = 0; wi < N_WIDTHS; wi++) {
            const size_t d = WIDTHS[wi], rows = 1 + wi % 11, n = rows * d;
            float *x = new_floats(n), *w = new_floats(d), *b = new_floats(d);
            float *want = new_floats(n), *got = new_floats(n);
            float *want_s = new_floats(2 * rows), *got_s = new_floats(2 * rows);
            fill_normal(x, n, 2.0f, 3.0f);
            fill_normal(w, d, 0.5f, 1.0f);
            fill_normal(b, d, 0.5f, 0.0f);
            char what[80];
            for (int rms = 0; rms < 2; rms++) {
                snprintf(what, sizeof what, "%s %s_keep d=%zu rows=%zu", vp_isa_name((vp_isa)isa),
                         rms ? "rmsnorm" : "layernorm", d, rows);
                if (rms) {
                    k->rmsnorm(want, x, w, rows, d, 1e-5f);
                    k->rmsnorm_keep(got, got_s, x, w, rows, d, 1e-5f);
                } else {
                    k->layernorm(want, x, w, b, rows, d, 1e-5f);
                    k->layernorm_keep(got, got_s, x, w, b, rows, d, 1e-5f);
                }
                k->norm_stats(want_s, x, rows, d, 1e-5f, rms);
                assert_int_equal(compare_bits(what, got, want, n), 0);
                assert_int_equal(compare_bits(what, got_s, want_s, 2 * rows), 0);
            }
            free(x), free(w), free(b), free(want), free(got), free(want_s), free(got_s);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vector_exp_and_erf_against_libm),
        cmocka_unit_test(scalar_norms_match_double),
        cmocka_unit_test(scalar_gelu_matches_double),
        cmocka_unit_test(scalar_softmax_matches_double),
        cmocka_unit_test(scalar_attention_matches_double),
        cmocka_unit_test(simd_norms_match_scalar),
        cmocka_unit_test(kept_stats_are_norm_stats),
        cmocka_unit_test(simd_gelu_matches_scalar),
        cmocka_unit_test(simd_softmax_matches_scalar),
        cmocka_unit_test(simd_attention_matches_scalar_and_double),
        cmocka_unit_test(rows_do_not_depend_on_the_split),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("forward pass kernels", tests, NULL, NULL);
}
