/* The residual kernel (residual_body.h): the scalar build against sums in
 * long double written here, and every SIMD build this CPU supports against
 * the scalar one bit for bit, as its contract promises (kern_table.h), on
 * lengths that are and are not multiples of the eight lanes, with h = x
 * and f = o as the forward pass passes them; and |v|^2 (stream_body.h)
 * the same way. */
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
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kernels/kern_variants.h"
#include "test_filter.h"
#include "varprof/isa.h"

typedef void (*residual_fn)(float *, const float *, const float *, const float *, size_t, int,
                            double *);

typedef struct {
    vp_isa isa;
    const char *name;
    residual_fn residual;
    double (*square_sum)(const float *, size_t);
} variant;

static const variant VARIANTS[] = {
    {VP_ISA_SCALAR, "scalar", kern_residual_scalar, kern_square_sum_scalar},
#if defined(__x86_64__)
    {VP_ISA_AVX2, "avx2", kern_residual_avx2, kern_square_sum_avx2},
    {VP_ISA_AVX512, "avx512", kern_residual_avx512, kern_square_sum_avx512},
#endif
};
#define N_VARIANTS (sizeof VARIANTS / sizeof VARIANTS[0])

static const size_t LENGTHS[] = {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 384, 1000};
#define N_LENGTHS (sizeof LENGTHS / sizeof LENGTHS[0])

/* How h and f are passed: their own arrays, or x and o themselves. */
enum { OWN, H_IS_X, F_IS_O, BOTH, N_ALIASING };

typedef struct {
    size_t n;
    float *x, *o, *h, *f;
} operands;

/* Normal values over some forty binades, so that the sums round. */
static void fill(gsl_rng *rng, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)ldexp(gsl_ran_gaussian(rng, 1.0), (int)gsl_rng_uniform_int(rng, 41) - 20);
}

static operands make_operands(gsl_rng *rng, size_t n)
{
    operands op = {n, malloc((n + 1) * sizeof(float)), malloc((n + 1) * sizeof(float)),
                   malloc((n + 1) * sizeof(float)), malloc((n + 1) * sizeof(float))};
    assert_non_null(op.x);
    assert_non_null(op.o);
    assert_non_null(op.h);
    assert_non_null(op.f);
    fill(rng, op.x, n);
    fill(rng, op.o, n);
    fill(rng, op.h, n);
    fill(rng, op.f, n);
    return op;
}

static void free_operands(operands *op)
{
    free(op->x);
    free(op->o);
    free(op->h);
    free(op->f);
}

/* A copy of x (the kernel writes it) and the h and f to pass with it. */
typedef struct {
    float *x;
    const float *h, *f;
} call;

static call prepare(const operands *op, int aliasing)
{
    call c = {malloc((op->n + 1) * sizeof(float)), op->h, op->f};
    assert_non_null(c.x);
    memcpy(c.x, op->x, op->n * sizeof(float));
    if (aliasing == H_IS_X || aliasing == BOTH)
        c.h = c.x;
    if (aliasing == F_IS_O || aliasing == BOTH)
        c.f = op->o;
    return c;
}

/* sum a[i] b[i] in long double (64-bit significand: each product of two
   floats is exact, and n of them round about 2^11 times less than in
   double), and sum |a[i] b[i]| for the bound. */
static long double dot_ref(const float *a, const float *b, size_t n, long double *mag)
{
    long double s = 0.0L, m = 0.0L;
    for (size_t i = 0; i < n; i++) {
        long double t = (long double)a[i] * b[i];
        s += t;
        m += fabsl(t);
    }
    *mag = m;
    return s;
}

/* The kernel sums n terms in eight lanes of about n / 8 each, then three
   levels of pairs: at most n / 8 + 5 roundings of 2^-53 of sum |t| each,
   with the reference's own error far below that. */
static void check_sum(const char *what, double got, const float *a, const float *b, size_t n)
{
    long double mag, want = dot_ref(a, b, n, &mag);
    double tol = ((double)n / 8.0 + 5.0) * 0x1p-53 * (double)mag;
    if (!(fabs(got - (double)want) <= tol))
        fail_msg("%s: n=%zu: %.17g, want %.17Lg (tol %.3g)", what, n, got, want, tol);
}

static void scalar_matches_long_double(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 20261130);
    for (size_t li = 0; li < N_LENGTHS; li++)
        for (int aliasing = 0; aliasing < N_ALIASING; aliasing++)
            for (int add = 0; add <= 1; add++) {
                const size_t n = LENGTHS[li];
                operands op = make_operands(rng, n);
                call c = prepare(&op, aliasing);
                double sums[KERN_RESIDUAL_SUMS];
                const double untouched = -1.5; /* no sum of squares is negative */
                for (int s = 0; s < KERN_RESIDUAL_SUMS; s++)
                    sums[s] = untouched;
                kern_residual_scalar(c.x, op.o, c.h, c.f, n, add, sums);
                /* the sums are of the operands as they were before the add */
                const float *h0 = aliasing == H_IS_X || aliasing == BOTH ? op.x : op.h;
                const float *f0 = aliasing == F_IS_O || aliasing == BOTH ? op.o : op.f;
                check_sum("|x|^2", sums[KERN_RESIDUAL_XX_BEFORE], op.x, op.x, n);
                check_sum("|o|^2", sums[KERN_RESIDUAL_OO], op.o, op.o, n);
                check_sum("<x, o>", sums[KERN_RESIDUAL_XO], op.x, op.o, n);
                check_sum("|h|^2", sums[KERN_RESIDUAL_HH], h0, h0, n);
                check_sum("|f|^2", sums[KERN_RESIDUAL_FF], f0, f0, n);
                for (size_t i = 0; i < n; i++) {
                    /* one float addition, as PyTorch's x + o */
                    volatile float y = op.x[i] + op.o[i];
                    if (c.x[i] != (add ? y : op.x[i]))
                        fail_msg("n=%zu add=%d: x[%zu] = %a, want %a", n, add, i, c.x[i],
                                 add ? (double)y : (double)op.x[i]);
                }
                if (add)
                    check_sum("|x + o|^2", sums[KERN_RESIDUAL_XX], c.x, c.x, n);
                else
                    assert_true(sums[KERN_RESIDUAL_XX] == untouched);
                free(c.x);
                free_operands(&op);
            }
    gsl_rng_free(rng);
}

static void simd_gives_the_scalar_bits(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    size_t compared = 0;
    for (size_t v = 1; v < N_VARIANTS; v++) {
        if (!vp_isa_supported(VARIANTS[v].isa)) {
            printf("residual: %s not supported by this CPU, skipped\n", VARIANTS[v].name);
            continue;
        }
        for (size_t li = 0; li < N_LENGTHS; li++)
            for (int aliasing = 0; aliasing < N_ALIASING; aliasing++)
                for (int add = 0; add <= 1; add++) {
                    const size_t n = LENGTHS[li];
                    operands op = make_operands(rng, n);
                    call want = prepare(&op, aliasing), got = prepare(&op, aliasing);
                    double want_sums[KERN_RESIDUAL_SUMS] = {0}, got_sums[KERN_RESIDUAL_SUMS] = {0};
                    kern_residual_scalar(want.x, op.o, want.h, want.f, n, add, want_sums);
                    VARIANTS[v].residual(got.x, op.o, got.h, got.f, n, add, got_sums);
                    if (memcmp(want_sums, got_sums, sizeof want_sums) != 0 ||
                        (n > 0 && memcmp(want.x, got.x, n * sizeof(float)) != 0))
                        fail_msg("residual %s n=%zu aliasing=%d add=%d: not the scalar bits",
                                 VARIANTS[v].name, n, aliasing, add);
                    compared++;
                    free(want.x);
                    free(got.x);
                    free_operands(&op);
                }
    }
    printf("residual: %zu calls, every one with the scalar build's bits\n", compared);
    gsl_rng_free(rng);
}

/* |v|^2 (the forward pass's |c|^2 and post-norm |x|^2): the scalar build
   within 4 n ulps of a long double sum, every SIMD build its bits. */
static void square_sum_gives_the_scalar_bits(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    for (size_t li = 0; li < N_LENGTHS; li++) {
        const size_t n = LENGTHS[li];
        float *v = malloc((n + 1) * sizeof(float));
        fill(rng, v, n);
        long double exact = 0.0L;
        for (size_t i = 0; i < n; i++)
            exact += (long double)v[i] * v[i];
        const double want = kern_square_sum_scalar(v, n);
        if (fabsl(want - exact) > 4.0L * (long double)(n + 1) * DBL_EPSILON * exact)
            fail_msg("square_sum scalar n=%zu: %.17g, long double %.17Lg", n, want, exact);
        for (size_t k = 1; k < N_VARIANTS; k++) {
            if (!vp_isa_supported(VARIANTS[k].isa))
                continue;
            const double got = VARIANTS[k].square_sum(v, n);
            if (memcmp(&want, &got, sizeof got) != 0)
                fail_msg("square_sum %s n=%zu: %.17g, scalar %.17g", VARIANTS[k].name, n, got,
                         want);
        }
        free(v);
    }
    gsl_rng_free(rng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalar_matches_long_double),
        cmocka_unit_test(simd_gives_the_scalar_bits),
        cmocka_unit_test(square_sum_gives_the_scalar_bits),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
