/* The backward pass's kernels other than matmul (LayerNorm, RMSNorm and
 * their parameters, GELU, causal attention, cross-entropy): the scalar
 * reference against central finite differences of double-precision
 * forwards written here, every SIMD variant this CPU supports against the
 * scalar one, and the parameters' gradients the same bits however their
 * columns are split. Odd shapes: widths 1, 7, 17, 100, one row, T = 1
 * and 40 (three blocks of query rows), hd = 16, 17, 33 and 64. Each kernel
 * is called by name (kern_variants.h).
 *
 * Finite differences: L(x) = sum r .* f(x) with r the kernel's dy, in
 * double, step H_FD; their own error (h^2 f''' and 1e-16 |L| / h) is below
 * 1e-8 here, far inside every tolerance below, which are float32's. */
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

#include "kernels/kern_table.h"
#include "kernels/kern_variants.h"
#include "test_filter.h"
#include "varprof/isa.h"

static const double U = 0x1p-24; /* one float rounding, relative */
static const double H_FD = 1e-5;
static const float EPS = 1e-5f;

typedef struct {
    void (*layernorm_backward)(float *, const float *, const float *, const float *, const float *,
                               size_t, size_t, float);
    void (*rmsnorm_backward)(float *, const float *, const float *, const float *, const float *,
                             size_t, size_t, float);
    void (*norm_param_grads)(float *, float *, const float *, const float *, const float *, size_t,
                             size_t, size_t, size_t, float, int);
    void (*gelu_backward)(float *, const float *, const float *, const float *, size_t);
    void (*attention_backward)(float *, float *, float *, size_t, const float *, size_t,
                               const float *, const float *, const float *, size_t, size_t, size_t,
                               size_t, float, float, const float *, size_t, float *);
    double (*cross_entropy)(float *, const float *, const uint32_t *, size_t, size_t, double);
    void (*norm_stats)(float *, const float *, size_t, size_t, float, int);
    void (*gelu_keep)(float *, float *, const float *, size_t);
} variant;

#define VARIANT(ISA)                                                                               \
    {                                                                                              \
        kern_layernorm_backward_##ISA, kern_rmsnorm_backward_##ISA, kern_norm_param_grads_##ISA,   \
            kern_gelu_backward_##ISA, kern_attention_backward_##ISA, kern_cross_entropy_##ISA,     \
            kern_norm_stats_##ISA, kern_gelu_keep_##ISA                                            \
    }

static const variant VARIANTS[VP_ISA_COUNT] = {
    VARIANT(scalar),
#if defined(__x86_64__)
    VARIANT(avx2),
    VARIANT(avx512),
#endif
};
static const variant *const SCALAR = &VARIANTS[VP_ISA_SCALAR];

/* ---- test helpers (not under test) ---- */

static uint64_t rng_state = 0x6a09e667f3bcc909ull;

static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * 0x1p-53;
}

static float normal(void)
{
    double u1 = uniform(), u2 = uniform();
    return (float)(sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2));
}

static float *new_normal(size_t n, float scale, float offset)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = offset + scale * normal();
    return p;
}

static float *new_floats(size_t n)
{
    float *p = calloc(n ? n : 1, sizeof *p);
    assert_non_null(p);
    return p;
}

static double *new_doubles(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    assert_non_null(p);
    return p;
}

/* |got[i] - want[i]| <= tol[i] for i < n, else print the first miss and fail. */
static void check(const char *what, const float *got, const double *want, const double *tol,
                  size_t n)
{
    size_t bad = 0;
    double share = 0.0;
    for (size_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - want[i]);
        if (!(diff <= tol[i])) {
            if (bad++ == 0)
                print_error("%s: first miss at %zu: %.9g, want %.9g, |diff| %.3g > %.3g\n", what, i,
                            (double)got[i], want[i], diff, tol[i]);
        }
        if (tol[i] > 0 && diff / tol[i] > share)
            share = diff / tol[i];
    }
    if (bad) {
        print_error("%s: %zu of %zu outside; worst %.2f of its tolerance\n", what, bad, n, share);
        fail();
    }
}

static void check_bits(const char *what, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a) != 0) {
            print_error("%s: bits differ at %zu: %.9g vs %.9g\n", what, i, (double)a[i],
                        (double)b[i]);
            fail();
        }
}

static double max_abs(const double *a, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fabs(a[i]) > m ? fabs(a[i]) : m;
    return m;
}

/* ---- double-precision forwards ---- */

/* One row of LayerNorm (rms = 0) or RMSNorm (rms = 1, b unused). */
static void norm_row_d(double *out, const double *x, const float *w, const float *b, size_t d,
                       int rms)
{
    double mean = 0.0, sq = 0.0;
    if (!rms) {
        for (size_t i = 0; i < d; i++)
            mean += x[i];
        mean /= (double)d;
    }
    for (size_t i = 0; i < d; i++)
        sq += (x[i] - mean) * (x[i] - mean);
    double r = 1.0 / sqrt(sq / (double)d + (double)EPS);
    for (size_t i = 0; i < d; i++)
        out[i] = (x[i] - mean) * r * w[i] + (rms ? 0.0 : b[i]);
}

static double gelu_d(double x)
{
    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

/* Causal attention of one sequence, rows of H * hd, contiguous. */
/* scores q.k scale, through softcap tanh(z / softcap) when softcap > 0 */
static void attention_d(double *out, const double *q, const double *k, const double *v, size_t T,
                        size_t H, size_t hd, double scale, double softcap)
{
    size_t ld = H * hd;
    double *p = new_doubles(T);
    for (size_t h = 0; h < H; h++)
        for (size_t t = 0; t < T; t++) {
            double max = -INFINITY, sum = 0.0;
            for (size_t s = 0; s <= t; s++) {
                double dot = 0.0;
                for (size_t j = 0; j < hd; j++)
                    dot += q[t * ld + h * hd + j] * k[s * ld + h * hd + j];
                p[s] = dot * scale;
                if (softcap > 0.0)
                    p[s] = softcap * tanh(p[s] / softcap);
                max = p[s] > max ? p[s] : max;
            }
            for (size_t s = 0; s <= t; s++)
                sum += p[s] = exp(p[s] - max);
            for (size_t j = 0; j < hd; j++) {
                double acc = 0.0;
                for (size_t s = 0; s <= t; s++)
                    acc += p[s] / sum * v[s * ld + h * hd + j];
                out[t * ld + h * hd + j] = acc;
            }
        }
    free(p);
}

/* -log softmax(row)[target] */
static double cross_entropy_row_d(const double *x, uint32_t target, size_t V)
{
    double max = x[0], sum = 0.0;
    for (size_t j = 1; j < V; j++)
        max = x[j] > max ? x[j] : max;
    for (size_t j = 0; j < V; j++)
        sum += exp(x[j] - max);
    return max + log(sum) - x[target];
}

static double dot_d(const double *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* ---- the norms ---- */

static const size_t NORM_WIDTHS[] = {1, 7, 17, 100};
static const size_t NORM_ROWS[] = {1, 5};

/* dx, dweight and dbias of sum dy .* norm(x) by central differences, and
   each row's scale of the float terms the kernel's dx is made of,
   rstd (max|g| + |mean g| + max|xhat| |mean g xhat|), and each column's
   sum|dy xhat| (mag_w, zeroed by the caller). */
static void norm_fd(double *dx, double *dw, double *db, double *row_scale, double *mag_w,
                    const float *dy, const float *x, const float *w, const float *b, size_t n,
                    size_t d, int rms)
{
    double *xd = new_doubles(d), *out = new_doubles(d);
    float *wp = new_floats(d), *bp = new_floats(d);
    for (size_t r = 0; r < n; r++) {
        for (size_t i = 0; i < d; i++)
            xd[i] = x[r * d + i];
        for (size_t i = 0; i < d; i++) {
            double keep = xd[i], plus, minus;
            xd[i] = keep + H_FD;
            norm_row_d(out, xd, w, b, d, rms);
            plus = dot_d(out, dy + r * d, d);
            xd[i] = keep - H_FD;
            norm_row_d(out, xd, w, b, d, rms);
            minus = dot_d(out, dy + r * d, d);
            xd[i] = keep;
            dx[r * d + i] = (plus - minus) / (2.0 * H_FD);
        }
        /* the scale of the terms, from the exact statistics */
        double mean = 0.0, sq = 0.0, mg = 0.0, mgx = 0.0, maxg = 0.0, maxx = 0.0;
        if (!rms) {
            for (size_t i = 0; i < d; i++)
                mean += xd[i] / (double)d;
        }
        for (size_t i = 0; i < d; i++)
            sq += (xd[i] - mean) * (xd[i] - mean);
        double rstd = 1.0 / sqrt(sq / (double)d + (double)EPS);
        for (size_t i = 0; i < d; i++) {
            double g = (double)dy[r * d + i] * w[i], xh = (xd[i] - mean) * rstd;
            mg += g / (double)d;
            mgx += g * xh / (double)d;
            maxg = fabs(g) > maxg ? fabs(g) : maxg;
            maxx = fabs(xh) > maxx ? fabs(xh) : maxx;
            mag_w[i] += fabs(dy[r * d + i] * xh);
        }
        row_scale[r] = rstd * (maxg + fabs(mg) + maxx * fabs(mgx));
    }
    /* weight and bias: L is linear in them, so a difference in double is
       exact to rounding */
    memcpy(wp, w, d * sizeof *wp);
    memcpy(bp, b, d * sizeof *bp);
    for (size_t j = 0; j < d; j++) {
        double sw = 0.0, sb = 0.0;
        for (size_t r = 0; r < n; r++) {
            for (size_t i = 0; i < d; i++)
                xd[i] = x[r * d + i];
            /* the step is what keep + 1 rounds to in float, not 1 */
            float keep = wp[j];
            wp[j] = keep + 1.0f;
            double step = (double)wp[j] - keep;
            norm_row_d(out, xd, wp, bp, d, rms);
            double plus = dot_d(out, dy + r * d, d);
            wp[j] = keep;
            norm_row_d(out, xd, wp, bp, d, rms);
            double base = dot_d(out, dy + r * d, d);
            sw += (plus - base) / step;
            if (!rms) {
                keep = bp[j];
                bp[j] = keep + 1.0f;
                step = (double)bp[j] - keep;
                norm_row_d(out, xd, wp, bp, d, rms);
                sb += (dot_d(out, dy + r * d, d) - base) / step;
                bp[j] = keep;
            }
        }
        dw[j] = sw;
        db[j] = sb;
    }
    free(xd), free(out), free(wp), free(bp);
}

/* The norms' backward and their parameters' gradients: the scalar one
   against finite differences, the SIMD ones against the scalar.
   dx: each is ~8 float roundings of terms no larger than the row's scale
   above, so 16 u of it against the differences, and 8 u between variants
   (they differ only where the statistics or the row means round
   differently, at most one rounding each, 4 of them).
   dweight[j]: the sum in double of dy xhat, xhat within 3 u of exact (a
   rounded mean, rstd and product), so within 4 u sum|dy xhat| + one
   rounding of the total, here of a random start value. dbias: a double
   sum rounded once: u |result| + 1e-12 |start| slack. */
static void norms_match_differences_and_scalar(void **state)
{
    (void)state;
    for (size_t a = 0; a < sizeof NORM_WIDTHS / sizeof *NORM_WIDTHS; a++)
        for (size_t c = 0; c < sizeof NORM_ROWS / sizeof *NORM_ROWS; c++)
            for (int rms = 0; rms <= 1; rms++) {
                size_t d = NORM_WIDTHS[a], n = NORM_ROWS[c];
                float *x = new_normal(n * d, 1.0f, 0.3f), *dy = new_normal(n * d, 1.0f, 0.0f);
                float *w = new_normal(d, 0.5f, 1.0f), *b = new_normal(d, 0.5f, 0.0f);
                float *start_w = new_normal(d, 1.0f, 0.0f), *start_b = new_normal(d, 1.0f, 0.0f);
                double *fd = new_doubles(n * d), *fdw = new_doubles(d), *fdb = new_doubles(d);
                double *scale = new_doubles(n), *tol = new_doubles(n * d);
                double *tolw = new_doubles(d), *tolb = new_doubles(d), *mag_w = new_doubles(d);
                norm_fd(fd, fdw, fdb, scale, mag_w, dy, x, w, b, n, d, rms);
                for (size_t j = 0; j < d; j++) {
                    fdw[j] += start_w[j];
                    fdb[j] += start_b[j];
                    tolw[j] = 4.0 * U * mag_w[j] + U * fabs(fdw[j]) + 1e-9;
                    tolb[j] = U * fabs(fdb[j]) + 1e-9;
                }
                float *ref = NULL, *refw = NULL, *refb = NULL;
                for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
                    if (!vp_isa_supported((vp_isa)isa))
                        continue;
                    const variant *v = &VARIANTS[isa];
                    float *dx = new_floats(n * d), *gw = new_floats(d), *gb = new_floats(d);
                    memcpy(gw, start_w, d * sizeof *gw);
                    memcpy(gb, start_b, d * sizeof *gb);
                    if (rms)
                        v->rmsnorm_backward(dx, dy, x, NULL, w, n, d, EPS);
                    else
                        v->layernorm_backward(dx, dy, x, NULL, w, n, d, EPS);
                    v->norm_param_grads(gw, rms ? NULL : gb, dy, x, NULL, n, d, 0, d, EPS, rms);
                    char what[96];
                    snprintf(what, sizeof what, "%s %s d=%zu n=%zu", vp_isa_name((vp_isa)isa),
                             rms ? "rmsnorm" : "layernorm", d, n);
                    if (isa == VP_ISA_SCALAR) {
                        for (size_t i = 0; i < n * d; i++)
                            tol[i] = 16.0 * U * scale[i / d] + 1e-8;
                        check(what, dx, fd, tol, n * d);
                        check("dweight", gw, fdw, tolw, d);
                        if (!rms)
                            check("dbias", gb, fdb, tolb, d);
                        ref = dx, refw = gw, refb = gb;
                        continue;
                    }
                    double *want = new_doubles(n * d), *wantw = new_doubles(d);
                    for (size_t i = 0; i < n * d; i++) {
                        want[i] = ref[i];
                        tol[i] = 8.0 * U * scale[i / d];
                    }
                    for (size_t j = 0; j < d; j++)
                        wantw[j] = refw[j];
                    check(what, dx, want, tol, n * d);
                    check("dweight vs scalar", gw, wantw, tolw, d);
                    if (!rms)
                        check_bits("dbias vs scalar", gb, refb, d);
                    free(want), free(wantw), free(dx), free(gw), free(gb);
                }
                free(ref), free(refw), free(refb);
                free(x), free(dy), free(w), free(b), free(start_w), free(start_b);
                free(fd), free(fdw), free(fdb), free(scale), free(tol), free(tolw), free(tolb);
                free(mag_w);
            }
}

/* norm_param_grads over columns in pieces (as threads take them) gives the
   bits of one call, on every variant; so does the backward over rows in
   pieces; and both with the statistics given (norm_stats, over all rows
   or a row at a time) give the bits of summing them again. */
static void norm_splits_give_the_same_bits(void **state)
{
    (void)state;
    const size_t n = 9, d = 100;
    float *x = new_normal(n * d, 1.0f, 0.3f), *dy = new_normal(n * d, 1.0f, 0.0f);
    float *w = new_normal(d, 0.5f, 1.0f);
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        const variant *v = &VARIANTS[isa];
        for (int rms = 0; rms <= 1; rms++) {
            float *gw = new_floats(d), *gb = new_floats(d);
            v->norm_param_grads(gw, gb, dy, x, NULL, n, d, 0, d, EPS, rms);
            float *stats = new_floats(2 * n), *row_stats = new_floats(2 * n);
            v->norm_stats(stats, x, n, d, EPS, rms);
            for (size_t r = 0; r < n; r++)
                v->norm_stats(row_stats + 2 * r, x + r * d, 1, d, EPS, rms);
            check_bits("stats a row at a time", stats, row_stats, 2 * n);
            for (size_t cut = 1; cut <= 33; cut += 16) {
                float *gw2 = new_floats(d), *gb2 = new_floats(d);
                float *gw3 = new_floats(d), *gb3 = new_floats(d);
                for (size_t j0 = 0; j0 < d; j0 += cut) {
                    const size_t j1 = j0 + cut < d ? j0 + cut : d;
                    v->norm_param_grads(gw2, gb2, dy, x, NULL, n, d, j0, j1, EPS, rms);
                    v->norm_param_grads(gw3, gb3, dy, x, stats, n, d, j0, j1, EPS, rms);
                }
                check_bits("dweight split over columns", gw, gw2, d);
                check_bits("dbias split over columns", gb, gb2, d);
                check_bits("dweight from the statistics", gw, gw3, d);
                check_bits("dbias from the statistics", gb, gb3, d);
                free(gw2), free(gb2), free(gw3), free(gb3);
            }
            float *dx = new_floats(n * d), *dx2 = new_floats(n * d), *dx3 = new_floats(n * d);
            void (*bw)(float *, const float *, const float *, const float *, const float *, size_t,
                       size_t, float) = rms ? v->rmsnorm_backward : v->layernorm_backward;
            bw(dx, dy, x, NULL, w, n, d, EPS);
            for (size_t r = 0; r < n; r++)
                bw(dx2 + r * d, dy + r * d, x + r * d, NULL, w, 1, d, EPS);
            check_bits("dx split over rows", dx, dx2, n * d);
            bw(dx3, dy, x, stats, w, n, d, EPS);
            check_bits("dx from the statistics", dx, dx3, n * d);
            /* in place: dx may be dy */
            float *inplace = malloc(n * d * sizeof *inplace);
            assert_non_null(inplace);
            memcpy(inplace, dy, n * d * sizeof *inplace);
            bw(inplace, inplace, x, NULL, w, n, d, EPS);
            check_bits("dx in place", dx, inplace, n * d);
            free(gw), free(gb), free(dx), free(dx2), free(dx3), free(inplace);
            free(stats), free(row_stats);
        }
    }
    free(x), free(dy), free(w);
}

/* ---- GELU ---- */

/* dx = dy (Phi + x phi), Phi as each variant's gelu_keep keeps it in the
   forward pass: a few roundings of terms of size |dy| (Phi +
   |x| phi), plus libm's or the vector erf and exp (about 1 ulp each), the
   rounding of -x^2/2 inside exp (relative u x^2/2 of phi) and, for x well
   below 0, 1 + erf cancelling: erf's rounding there is an ulp of 1, u
   absolute of Phi (PyTorch's float formula has the same). So 16 u |dy|
   (Phi + 1/2 + |x| phi (1 + x^2)) against the differences and between
   variants. */
static void gelu_matches_differences_and_scalar(void **state)
{
    (void)state;
    const size_t n = 1000;
    float *x = new_normal(n, 3.0f, 0.0f), *dy = new_normal(n, 1.0f, 0.0f);
    x[0] = 0.0f, x[1] = -9.0f, x[2] = 9.0f, x[3] = 1.0f, x[4] = -4.0f; /* branch points, tails */
    double *fd = new_doubles(n), *tol = new_doubles(n), *want = new_doubles(n);
    for (size_t i = 0; i < n; i++) {
        double xi = x[i];
        fd[i] = dy[i] * (gelu_d(xi + H_FD) - gelu_d(xi - H_FD)) / (2.0 * H_FD);
        double phi = exp(-0.5 * xi * xi) / sqrt(6.283185307179586),
               cdf = 0.5 * (1.0 + erf(xi / sqrt(2.0)));
        tol[i] = 16.0 * U * fabs(dy[i]) * (cdf + 0.5 + fabs(xi) * phi * (1.0 + xi * xi)) + 1e-9;
    }
    float *ref = new_floats(n), *out = new_floats(n), *cdf = new_floats(n);
    SCALAR->gelu_keep(out, cdf, x, n);
    SCALAR->gelu_backward(ref, dy, x, cdf, n);
    check("scalar gelu_backward", ref, fd, tol, n);
    for (size_t i = 0; i < n; i++)
        want[i] = ref[i];
    for (int isa = VP_ISA_SCALAR + 1; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        for (size_t len = 1; len <= n; len += 333) { /* tails of every length */
            float *dx = new_floats(n);
            VARIANTS[isa].gelu_keep(out, cdf, x, len);
            VARIANTS[isa].gelu_backward(dx, dy, x, cdf, len);
            check(vp_isa_name((vp_isa)isa), dx, want, tol, len);
            free(dx);
        }
    }
    free(x), free(dy), free(fd), free(tol), free(want), free(ref), free(out), free(cdf);
}

/* gelu_keep, the training's forward GELU, gives gelu's bits on every
   variant, at every tail length, out in place of x too. A normal spread of
   3 takes erf's exp branch; subnormal and signed zero inputs are where
   halving could round. */
static void gelu_keep_gives_gelus_bits(void **state)
{
    (void)state;
    const size_t n = 300;
    float *x = new_normal(n, 3.0f, 0.0f);
    x[0] = 0.0f, x[1] = -0.0f, x[2] = 1e-40f, x[3] = -1e-40f, x[4] = -9.0f, x[5] = 9.0f;
    x[6] = 1.4142135f, x[7] = -5.5f; /* erf's branch point (x / sqrt 2 = 1), 1 + erf tiny */
    float *want = new_floats(n), *got = new_floats(n), *cdf = new_floats(n);
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        const kern_table *k = kern_for((vp_isa)isa);
        for (size_t len = 1; len <= n; len += 37) {
            k->gelu(want, x, len);
            k->gelu_keep(got, cdf, x, len);
            if (memcmp(want, got, len * sizeof *got) != 0)
                fail_msg("%s gelu_keep at length %zu: not gelu's bits", vp_isa_name((vp_isa)isa),
                         len);
            memcpy(got, x, len * sizeof *got);
            k->gelu_keep(got, cdf, got, len); /* out = x */
            if (memcmp(want, got, len * sizeof *got) != 0)
                fail_msg("%s gelu_keep in place at length %zu", vp_isa_name((vp_isa)isa), len);
        }
    }
    free(x), free(want), free(got), free(cdf);
}

/* ---- attention ---- */

static const size_t ATTENTION_SHAPES[][3] = {
    {1, 1, 16}, {7, 2, 16}, {5, 1, 64}, {19, 2, 17}, {40, 1, 33}};

/* dq, dk, dv of sum dout .* attention(q, k, v) by central differences. */
static void attention_fd(double *dq, double *dk, double *dv, const float *dout, const float *q,
                         const float *k, const float *v, size_t T, size_t H, size_t hd,
                         double scale, double softcap)
{
    size_t len = T * H * hd;
    double *in[3] = {new_doubles(len), new_doubles(len), new_doubles(len)};
    const float *src[3] = {q, k, v};
    double *grad[3] = {dq, dk, dv}, *out = new_doubles(len);
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < len; i++)
            in[a][i] = src[a][i];
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < len; i++) {
            double keep = in[a][i];
            in[a][i] = keep + H_FD;
            attention_d(out, in[0], in[1], in[2], T, H, hd, scale, softcap);
            double plus = dot_d(out, dout, len);
            in[a][i] = keep - H_FD;
            attention_d(out, in[0], in[1], in[2], T, H, hd, scale, softcap);
            double minus = dot_d(out, dout, len);
            in[a][i] = keep;
            grad[a][i] = (plus - minus) / (2.0 * H_FD);
        }
    free(in[0]), free(in[1]), free(in[2]), free(out);
}

/* Every gradient is a float sum of at most T terms, each a product of
   softmax weights (<= 1), float dot products of length hd and inputs of
   size about 1 (q, k, v, dout ~ N(0, 1)): within (T + hd + 8) u of the
   largest gradient's size, times 4 for the dot products' own sizes (sqrt
   hd against the gradients'), against the differences; twice that between
   variants (two such errors). Normwise over each of dq, dk, dv. Each shape
   twice: the usual scale 1/sqrt(hd) uncapped, then Gemma-2's form, a scale
   of its own (0.3) and a soft cap of 1.5 that bends most scores (q.k 0.3
   is about 0.3 sqrt(hd) >= 1.2 in size). */
static void attention_matches_differences_and_scalar(void **state)
{
    (void)state;
    for (size_t form = 0; form < 2 * sizeof ATTENTION_SHAPES / sizeof *ATTENTION_SHAPES; form++) {
        const size_t s = form / 2;
        size_t T = ATTENTION_SHAPES[s][0], H = ATTENTION_SHAPES[s][1], hd = ATTENTION_SHAPES[s][2];
        const float scale = form % 2 ? 0.3f : (float)(1.0 / sqrt((double)hd));
        const float softcap = form % 2 ? 1.5f : 0.0f;
        size_t ld = H * hd, len = T * ld, ldg = ld + 3;
        float *q = new_normal(len, 1.0f, 0.0f), *k = new_normal(len, 1.0f, 0.0f);
        float *v = new_normal(len, 1.0f, 0.0f), *dout = new_normal(len, 1.0f, 0.0f);
        double *fd = new_doubles(3 * len), *tol = new_doubles(3 * len);
        attention_fd(fd, fd + len, fd + 2 * len, dout, q, k, v, T, H, hd, scale, softcap);
        for (int a = 0; a < 3; a++) {
            double m = max_abs(fd + a * len, len);
            for (size_t i = 0; i < len; i++)
                tol[a * len + i] = 4.0 * (double)(T + hd + 8) * U * m + 1e-8;
        }
        float *ref = NULL;
        for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
            if (!vp_isa_supported((vp_isa)isa))
                continue;
            /* rows of stride ldg, the padding untouched */
            float *g = new_floats(3 * T * ldg),
                  *scratch = new_floats(KERN_ATTENTION_BACKWARD_SCRATCH(T, hd));
            for (size_t i = 0; i < 3 * T * ldg; i++)
                g[i] = -7.0f;
            VARIANTS[isa].attention_backward(g, g + T * ldg, g + 2 * T * ldg, ldg, dout, ld, q, k,
                                             v, ld, T, H, hd, scale, softcap, NULL, 0, scratch);
            float *packed = new_floats(3 * len);
            for (int a = 0; a < 3; a++)
                for (size_t t = 0; t < T; t++) {
                    memcpy(packed + a * len + t * ld, g + a * T * ldg + t * ldg, ld * sizeof *g);
                    for (size_t j = ld; j < ldg; j++)
                        assert_true(g[a * T * ldg + t * ldg + j] == -7.0f);
                }
            char what[96];
            snprintf(what, sizeof what, "%s attention T=%zu H=%zu hd=%zu scale %g softcap %g",
                     vp_isa_name((vp_isa)isa), T, H, hd, (double)scale, (double)softcap);
            if (isa == VP_ISA_SCALAR) {
                check(what, packed, fd, tol, 3 * len);
                ref = packed;
            } else {
                double *want = new_doubles(3 * len), *tol2 = new_doubles(3 * len);
                for (size_t i = 0; i < 3 * len; i++) {
                    want[i] = ref[i];
                    tol2[i] = 2.0 * tol[i];
                }
                check(what, packed, want, tol2, 3 * len);
                free(want), free(tol2), free(packed);
            }
            free(g), free(scratch);
        }
        free(ref), free(q), free(k), free(v), free(dout), free(fd), free(tol);
    }
}

/* ---- cross-entropy ---- */

/* dlogits = (softmax - onehot) scale: an expf (or vector exp, ~1 ulp), a
   factor and a product, then the subtraction: each entry within 4 u of
   scale (its size) against the differences, 8 u between variants. The loss
   sum: each row's log-sum-exp within about 2 u (1 + |max|) (the exps'
   errors, relative, become absolute in the log), so n 4 u (1 + max|x|). */
static void cross_entropy_matches_differences_and_scalar(void **state)
{
    (void)state;
    static const size_t shapes[][2] = {{1, 1}, {1, 37}, {6, 3}, {5, 100}, {4, 257}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        size_t n = shapes[s][0], V = shapes[s][1];
        float *x = new_normal(n * V, 3.0f, 1.0f);
        uint32_t *targets = malloc(n * sizeof *targets);
        assert_non_null(targets);
        for (size_t i = 0; i < n; i++)
            targets[i] = (uint32_t)((i * 7 + 3) % V);
        const double scale = 1.0 / (double)n;
        double *xd = new_doubles(V), *fd = new_doubles(n * V), *tol = new_doubles(n * V);
        double loss = 0.0, maxx = 0.0;
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < V; j++) {
                xd[j] = x[i * V + j];
                maxx = fabs(xd[j]) > maxx ? fabs(xd[j]) : maxx;
            }
            loss += cross_entropy_row_d(xd, targets[i], V);
            for (size_t j = 0; j < V; j++) {
                double keep = xd[j];
                xd[j] = keep + H_FD;
                double plus = cross_entropy_row_d(xd, targets[i], V);
                xd[j] = keep - H_FD;
                double minus = cross_entropy_row_d(xd, targets[i], V);
                xd[j] = keep;
                fd[i * V + j] = scale * (plus - minus) / (2.0 * H_FD);
                tol[i * V + j] = 4.0 * U * scale + 1e-9;
            }
        }
        const double loss_tol = (double)n * 4.0 * U * (1.0 + maxx);
        float *ref = NULL;
        for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
            if (!vp_isa_supported((vp_isa)isa))
                continue;
            float *dl = new_floats(n * V);
            double got = VARIANTS[isa].cross_entropy(dl, x, targets, n, V, scale);
            if (!(fabs(got - loss) <= loss_tol)) {
                print_error("%s cross_entropy n=%zu V=%zu: loss %.12g, want %.12g\n",
                            vp_isa_name((vp_isa)isa), n, V, got, loss);
                fail();
            }
            if (isa == VP_ISA_SCALAR) {
                check("scalar dlogits", dl, fd, tol, n * V);
                ref = dl;
                /* in place: dlogits may be logits */
                float *inplace = malloc(n * V * sizeof *inplace);
                assert_non_null(inplace);
                memcpy(inplace, x, n * V * sizeof *inplace);
                double again = SCALAR->cross_entropy(inplace, inplace, targets, n, V, scale);
                assert_true(again == got);
                check_bits("dlogits in place", ref, inplace, n * V);
                free(inplace);
            } else {
                double *want = new_doubles(n * V), *tol2 = new_doubles(n * V);
                for (size_t i = 0; i < n * V; i++) {
                    want[i] = ref[i];
                    tol2[i] = 2.0 * tol[i];
                }
                check(vp_isa_name((vp_isa)isa), dl, want, tol2, n * V);
                free(want), free(tol2), free(dl);
            }
        }
        free(ref), free(x), free(targets), free(xd), free(fd), free(tol);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(norms_match_differences_and_scalar),
        cmocka_unit_test(norm_splits_give_the_same_bits),
        cmocka_unit_test(gelu_matches_differences_and_scalar),
        cmocka_unit_test(gelu_keep_gives_gelus_bits),
        cmocka_unit_test(attention_matches_differences_and_scalar),
        cmocka_unit_test(cross_entropy_matches_differences_and_scalar),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
