/* The MLP kinds' kernels (--mlp): the tanh GELU and ReLU with their
 * backwards, and the gated products silu(a) b and gelu(a) b with theirs.
 * The scalar reference against the functions in double written here; every
 * backward against central finite differences of those functions in double;
 * every SIMD variant this CPU supports against the scalar one, on lengths
 * that are and are not multiples of the vector width, a dense sweep and
 * extreme inputs. Each kernel is called by name (kern_variants.h). */
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
#include "test_filter.h"
#include "varprof/isa.h"

/* One float rounding, relative. */
static const double U = 0x1p-24;
static const double PI = 3.14159265358979323846;

typedef void (*act_fn)(float *, const float *, size_t);
typedef void (*act_bw_fn)(float *, const float *, const float *, size_t);
typedef void (*gate_fn)(float *, const float *, const float *, size_t);
typedef void (*gate_bw_fn)(float *, float *, const float *, const float *, const float *, size_t);

typedef struct {
    vp_isa isa;
    const char *name;
    act_fn gelu_tanh, relu;
    act_bw_fn gelu_tanh_backward, relu_backward;
    gate_fn silu_mul, gelu_mul;
    gate_bw_fn silu_mul_backward, gelu_mul_backward;
} variant;

#define VARIANT(ISA)                                                                               \
    {                                                                                              \
        VP_ISA_##ISA, #ISA, kern_gelu_tanh_##ISA, kern_relu_##ISA, kern_gelu_tanh_backward_##ISA,  \
            kern_relu_backward_##ISA, kern_silu_mul_##ISA, kern_gelu_mul_##ISA,                    \
            kern_silu_mul_backward_##ISA, kern_gelu_mul_backward_##ISA                             \
    }
#define VP_ISA_scalar VP_ISA_SCALAR
#define VP_ISA_avx2 VP_ISA_AVX2
#define VP_ISA_avx512 VP_ISA_AVX512

static const variant VARIANTS[] = {
    VARIANT(scalar),
#if defined(__x86_64__)
    VARIANT(avx2),
    VARIANT(avx512),
#endif
};
#define N_VARIANTS (sizeof VARIANTS / sizeof VARIANTS[0])

/* ---- the functions in double ---- */

static double gelu_tanh_d(double x)
{
    const double u = sqrt(2.0 / PI) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + tanh(u));
}
static double relu_d(double x)
{
    return x > 0.0 ? x : 0.0;
}
static double silu_d(double x)
{
    return x / (1.0 + exp(-x));
}
static double gelu_d(double x)
{
    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

/* central difference of f at x, in double */
static double fd(double (*f)(double), double x)
{
    const double h = 1e-5 * (fabs(x) > 1.0 ? fabs(x) : 1.0);
    return (f(x + h) - f(x - h)) / (2.0 * h);
}

/* ---- inputs ---- */

static uint64_t rng_state;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(rng_state >> 11) + 0.5) * 0x1p-53;
}
static float normal(double sd)
{
    double u1 = uniform(), u2 = uniform();
    return (float)(sd * sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2));
}

static float *new_floats(size_t n)
{
    float *p = calloc(n ? n : 1, sizeof *p);
    assert_non_null(p);
    return p;
}

/* n inputs: a sweep of [-12, 12], a few extremes first when extremes is set */
enum { SWEEP = 20011 };
static const float EXTREMES[] = {1e30f,  -1e30f, FLT_MAX, -FLT_MAX, 1e5f, -1e5f,
                                 -30.0f, 30.0f,  1e-40f,  -0.0f,    0.0f};
#define N_EXTREMES (sizeof EXTREMES / sizeof EXTREMES[0])
static void sweep(float *x, size_t n, int extremes)
{
    for (size_t i = 0; i < n; i++)
        x[i] = -12.0f + 24.0f * (float)i / (float)(n - 1);
    if (extremes)
        memcpy(x, EXTREMES, sizeof EXTREMES);
}

/* Set: check() prints failures only. */
static int quiet;

/* Counts |got - want| > tol, prints the first and the largest share. */
static size_t check(const char *what, const float *got, const double *want, const double *tol,
                    size_t n)
{
    size_t bad = 0, first = n;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double diff = fabs((double)got[i] - want[i]);
        const int ok = (isnan(want[i]) && isnan(got[i])) || got[i] == want[i] || diff <= tol[i];
        if (!ok) {
            bad++;
            first = first == n ? i : first;
        }
        if (ok && tol[i] > 0.0 && diff / tol[i] > worst)
            worst = diff / tol[i];
    }
    if (bad)
        print_error("%s: %zu of %zu outside tolerance; first at %zu: got %.9g, want %.9g, tol "
                    "%.3g\n",
                    what, bad, n, first, got[first], want[first], tol[first]);
    else if (!quiet)
        print_message("%s: at most %.3f of the tolerance\n", what, worst);
    return bad;
}

static int all_finite(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

/* ---- the scalar reference against double ---- */

/* Tolerance of the two activations: the scalar's few float roundings on x
   (x^3, u, exp's 1 ulp, 1 + e, the division) move the result by at most
   8 roundings of |x|; ReLU is exact. */
static void scalar_activations_match_double(void **state)
{
    (void)state;
    float *x = new_floats(SWEEP), *y = new_floats(SWEEP);
    double *want = calloc(SWEEP, sizeof *want), *tol = calloc(SWEEP, sizeof *tol);
    assert_non_null(want);
    assert_non_null(tol);
    sweep(x, SWEEP, 0);
    kern_gelu_tanh_scalar(y, x, SWEEP);
    for (size_t i = 0; i < SWEEP; i++) {
        want[i] = gelu_tanh_d(x[i]);
        tol[i] = 8 * U * fabs(x[i]);
    }
    assert_int_equal(check("gelu_tanh scalar vs double", y, want, tol, SWEEP), 0);
    kern_relu_scalar(y, x, SWEEP);
    for (size_t i = 0; i < SWEEP; i++) {
        want[i] = relu_d(x[i]);
        tol[i] = 0.0;
    }
    assert_int_equal(check("relu scalar vs double", y, want, tol, SWEEP), 0);
    /* extremes: finite, 0 far left, x far right, no NaN from x^3 */
    sweep(x, SWEEP, 1);
    kern_gelu_tanh_scalar(y, x, SWEEP);
    assert_true(all_finite(y, SWEEP));
    assert_true(y[0] == 1e30f && y[2] == FLT_MAX && y[4] == 1e5f && y[7] == 30.0f);
    assert_true(y[1] == 0.0f && y[3] == 0.0f && y[5] == 0.0f);
    free(x), free(y), free(want), free(tol);
}

/* The gated products: the activation in float (within 8 roundings of |a|,
   as above; erf's GELU the same), times b, one rounding more. */
static void scalar_gated_match_double(void **state)
{
    (void)state;
    enum { N = 4099 };
    float *a = new_floats(N), *b = new_floats(N), *y = new_floats(N);
    double *want = calloc(N, sizeof *want), *tol = calloc(N, sizeof *tol);
    assert_non_null(want);
    assert_non_null(tol);
    rng_state = 7;
    for (size_t i = 0; i < N; i++)
        a[i] = normal(3.0), b[i] = normal(2.0);
    for (int kind = 0; kind < 2; kind++) {
        (kind ? kern_gelu_mul_scalar : kern_silu_mul_scalar)(y, a, b, N);
        for (size_t i = 0; i < N; i++) {
            want[i] = (kind ? gelu_d(a[i]) : silu_d(a[i])) * b[i];
            tol[i] = 9 * U * fabs(a[i]) * fabs(b[i]);
        }
        assert_int_equal(check(kind ? "gelu_mul scalar vs double" : "silu_mul scalar vs double", y,
                               want, tol, N),
                         0);
    }
    free(a), free(b), free(y), free(want), free(tol);
}

/* ---- the backwards against finite differences in double ---- */

/* A derivative's float evaluation against the central difference: the
   difference's own error (h^2 f''' / 6 with h = 1e-5 max(1, |x|), and
   cancellation, about 1e-11 / h relative) is below 1e-8 of the scale here;
   the float kernel's roundings are a few 2^-24 of dy (1 + |x| (du/dx)).
   Tolerance 2e-6 of |dy| (1 + x^2), |x| <= 12. */
static void backward_activations_match_finite_differences(void **state)
{
    (void)state;
    float *x = new_floats(SWEEP), *dy = new_floats(SWEEP), *dx = new_floats(SWEEP);
    double *want = calloc(SWEEP, sizeof *want), *tol = calloc(SWEEP, sizeof *tol);
    assert_non_null(want);
    assert_non_null(tol);
    sweep(x, SWEEP, 0);
    rng_state = 11;
    for (size_t i = 0; i < SWEEP; i++)
        dy[i] = normal(1.0);
    for (size_t vi = 0; vi < N_VARIANTS; vi++) {
        const variant *var = &VARIANTS[vi];
        if (!vp_isa_supported(var->isa))
            continue;
        char what[64];
        var->gelu_tanh_backward(dx, dy, x, SWEEP);
        for (size_t i = 0; i < SWEEP; i++) {
            want[i] = dy[i] * fd(gelu_tanh_d, x[i]);
            tol[i] = 2e-6 * fabs(dy[i]) * (1.0 + (double)x[i] * x[i]);
        }
        snprintf(what, sizeof what, "gelu_tanh_backward %s vs finite differences", var->name);
        assert_int_equal(check(what, dx, want, tol, SWEEP), 0);
        var->relu_backward(dx, dy, x, SWEEP);
        for (size_t i = 0; i < SWEEP; i++) {
            /* the kink at 0 has no difference quotient: x = 0 gets 0, as PyTorch */
            want[i] = fabs(x[i]) > 1e-4 ? dy[i] * fd(relu_d, x[i]) : (x[i] > 0.0f ? dy[i] : 0.0);
            tol[i] = 1e-9 * fabs(dy[i]);
        }
        snprintf(what, sizeof what, "relu_backward %s vs finite differences", var->name);
        assert_int_equal(check(what, dx, want, tol, SWEEP), 0);
    }
    free(x), free(dy), free(dx), free(want), free(tol);
}

/* da against the difference in a, db against the one in b (the product
   is linear in b: act(a) exactly); tolerance 2e-6 of |dy| |b| (1 + a^2)
   for da, 8 roundings of |dy| |a| for db. */
static void backward_gated_match_finite_differences(void **state)
{
    (void)state;
    enum { N = 4099 };
    float *a = new_floats(N), *b = new_floats(N), *dy = new_floats(N);
    float *da = new_floats(N), *db = new_floats(N);
    double *want = calloc(N, sizeof *want), *tol = calloc(N, sizeof *tol);
    assert_non_null(want);
    assert_non_null(tol);
    rng_state = 13;
    for (size_t i = 0; i < N; i++)
        a[i] = normal(3.0), b[i] = normal(2.0), dy[i] = normal(1.0);
    for (size_t vi = 0; vi < N_VARIANTS; vi++) {
        const variant *var = &VARIANTS[vi];
        if (!vp_isa_supported(var->isa))
            continue;
        for (int kind = 0; kind < 2; kind++) {
            double (*act)(double) = kind ? gelu_d : silu_d;
            const char *name = kind ? "gelu_mul_backward" : "silu_mul_backward";
            (kind ? var->gelu_mul_backward : var->silu_mul_backward)(da, db, dy, a, b, N);
            char what[96];
            for (size_t i = 0; i < N; i++) {
                want[i] = (double)dy[i] * b[i] * fd(act, a[i]);
                tol[i] = 2e-6 * fabs(dy[i]) * fabs(b[i]) * (1.0 + (double)a[i] * a[i]);
            }
            snprintf(what, sizeof what, "%s %s da vs finite differences", name, var->name);
            assert_int_equal(check(what, da, want, tol, N), 0);
            for (size_t i = 0; i < N; i++) {
                const double h = 1e-3 * (fabs(b[i]) > 1.0 ? fabs(b[i]) : 1.0);
                want[i] = dy[i] * ((act(a[i]) * (b[i] + h) - act(a[i]) * (b[i] - h)) / (2 * h));
                tol[i] = 8 * U * fabs(dy[i]) * (fabs(a[i]) + 1e-30) + 1e-12 * fabs(dy[i]);
            }
            snprintf(what, sizeof what, "%s %s db vs finite differences", name, var->name);
            assert_int_equal(check(what, db, want, tol, N), 0);
        }
    }
    free(a), free(b), free(dy), free(da), free(db), free(want), free(tol);
}

/* ---- every SIMD variant against the scalar one ---- */

static void widen(double *out, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = x[i];
}

/* Lengths that are and are not multiples of 8 or 16, then the sweep with
   its extremes. The vector exp is within 2 ulps of libm's expf and the
   vector erf of erff (test_nn_kernels), so after the few roundings both
   make, the results may differ by 8 roundings of the scale: |x| for the
   activations, |x| |dy| (1 + 0.2 x^2) for the tanh GELU's derivative (its
   second term grows as x u'), |a| |b| for the products, |dy| |a| for db
   and |dy| |b| (1 + a^2) for da. ReLU and its backward: bit for bit. */
static void simd_matches_scalar(void **state)
{
    (void)state;
    static const size_t LENGTHS[] = {1, 3, 7, 15, 17, 31, 33, 48, 64, 100, 257, SWEEP};
    const size_t n_max = SWEEP;
    float *x = new_floats(n_max), *b = new_floats(n_max), *dy = new_floats(n_max);
    float *want = new_floats(n_max), *got = new_floats(n_max);
    float *want2 = new_floats(n_max), *got2 = new_floats(n_max);
    double *want_d = calloc(n_max, sizeof *want_d), *tol = calloc(n_max, sizeof *tol);
    assert_non_null(want_d);
    assert_non_null(tol);
    for (size_t vi = 1; vi < N_VARIANTS; vi++) {
        const variant *var = &VARIANTS[vi];
        if (!vp_isa_supported(var->isa))
            continue;
        rng_state = 100 + vi;
        for (size_t li = 0; li < sizeof LENGTHS / sizeof *LENGTHS; li++) {
            const size_t n = LENGTHS[li];
            char what[96];
            quiet = n != SWEEP; /* the sweep's figures stand for the rest */
            for (size_t i = 0; i < n; i++)
                x[i] = normal(3.0), b[i] = normal(2.0), dy[i] = normal(1.0);
            if (n == SWEEP)
                sweep(x, n, 1);
            /* the activations */
            kern_gelu_tanh_scalar(want, x, n);
            var->gelu_tanh(got, x, n);
            widen(want_d, want, n);
            for (size_t i = 0; i < n; i++)
                tol[i] = 8 * U * fabs(x[i]);
            snprintf(what, sizeof what, "gelu_tanh %s n=%zu", var->name, n);
            assert_int_equal(check(what, got, want_d, tol, n), 0);
            assert_true(all_finite(got, n));
            var->gelu_tanh(x, x, n); /* out == x */
            assert_memory_equal(x, got, n * sizeof *x);
            for (size_t i = 0; i < n; i++)
                x[i] = normal(3.0);
            if (n == SWEEP)
                sweep(x, n, 1);
            kern_relu_scalar(want, x, n);
            var->relu(got, x, n);
            snprintf(what, sizeof what, "relu %s n=%zu", var->name, n);
            assert_memory_equal(got, want, n * sizeof *got);
            kern_relu_backward_scalar(want, dy, x, n);
            var->relu_backward(got, dy, x, n);
            assert_memory_equal(got, want, n * sizeof *got);
            kern_gelu_tanh_backward_scalar(want, dy, x, n);
            var->gelu_tanh_backward(got, dy, x, n);
            widen(want_d, want, n);
            for (size_t i = 0; i < n; i++)
                tol[i] = 8 * U * fabs(dy[i]) * (1.0 + fabs(x[i]) * (1.0 + 0.2 * x[i] * x[i]));
            snprintf(what, sizeof what, "gelu_tanh_backward %s n=%zu", var->name, n);
            assert_int_equal(check(what, got, want_d, tol, n), 0);
            assert_true(all_finite(got, n));
            /* the gated products, forward and backward */
            for (int kind = 0; kind < 2; kind++) {
                const char *name = kind ? "gelu_mul" : "silu_mul";
                (kind ? kern_gelu_mul_scalar : kern_silu_mul_scalar)(want, x, b, n);
                (kind ? var->gelu_mul : var->silu_mul)(got, x, b, n);
                widen(want_d, want, n);
                for (size_t i = 0; i < n; i++)
                    tol[i] = 8 * U * fabs(x[i]) * fabs(b[i]);
                snprintf(what, sizeof what, "%s %s n=%zu", name, var->name, n);
                assert_int_equal(check(what, got, want_d, tol, n), 0);
                (kind ? kern_gelu_mul_backward_scalar : kern_silu_mul_backward_scalar)(want, want2,
                                                                                       dy, x, b, n);
                (kind ? var->gelu_mul_backward : var->silu_mul_backward)(got, got2, dy, x, b, n);
                widen(want_d, want, n);
                for (size_t i = 0; i < n; i++)
                    tol[i] = 8 * U * fabs(dy[i]) * fabs(b[i]) * (1.0 + (double)x[i] * x[i]);
                snprintf(what, sizeof what, "%s_backward %s da n=%zu", name, var->name, n);
                assert_int_equal(check(what, got, want_d, tol, n), 0);
                widen(want_d, want2, n);
                for (size_t i = 0; i < n; i++)
                    tol[i] = 8 * U * fabs(dy[i]) * fabs(x[i]);
                snprintf(what, sizeof what, "%s_backward %s db n=%zu", name, var->name, n);
                assert_int_equal(check(what, got2, want_d, tol, n), 0);
            }
        }
    }
    free(x), free(b), free(dy), free(want), free(got), free(want2), free(got2), free(want_d),
        free(tol);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalar_activations_match_double),
        cmocka_unit_test(scalar_gated_match_double),
        cmocka_unit_test(backward_activations_match_finite_differences),
        cmocka_unit_test(backward_gated_match_finite_differences),
        cmocka_unit_test(simd_matches_scalar),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("MLP kinds' kernels", tests, NULL, NULL);
}
