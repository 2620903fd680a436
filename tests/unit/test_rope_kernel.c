/* The rotary position embedding kernel (kern_table.h's rope) and the table of
 * angles it reads (fw_rope_table): every variant this CPU supports against a
 * direct double-precision evaluation of Hugging Face Llama's rotate-half
 * rotation at positions 0, 1, 17, 1000 and 4095 and theta 1e4, 5e5 and 1e6,
 * on head widths that are and are not multiples of the vector width; the
 * inverse as the exact transpose (forward then inverse returns the input);
 * and every SIMD variant equal to the scalar one bit for bit. Each kernel is
 * called by name (kern_variants.h), never through the dispatch table. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "forward/rope.h"
#include "kernels/kern_variants.h"
#include "test_filter.h"
#include "varprof/isa.h"

/* One float rounding, relative. */
static const double U = 0x1p-24;

typedef void (*rope_fn)(float *, size_t, const float *, const float *, size_t, size_t, size_t, int);

typedef struct {
    vp_isa isa;
    const char *name;
    rope_fn rope;
} variant;

static const variant VARIANTS[] = {
    {VP_ISA_SCALAR, "scalar", kern_rope_scalar},
#if defined(__x86_64__)
    {VP_ISA_AVX2, "avx2", kern_rope_avx2},
    {VP_ISA_AVX512, "avx512", kern_rope_avx512},
#endif
};
#define N_VARIANTS (sizeof VARIANTS / sizeof VARIANTS[0])

static const size_t POSITIONS[] = {0, 1, 17, 1000, 4095};
#define N_POSITIONS (sizeof POSITIONS / sizeof POSITIONS[0])
static const double THETAS[] = {10000.0, 500000.0, 1e6};
#define N_THETAS (sizeof THETAS / sizeof THETAS[0])
/* head widths: pairs per head below, at, between and above 8 and 16 lanes */
static const size_t HEAD_DIMS[] = {2, 6, 16, 34, 64, 128};
#define N_HEAD_DIMS (sizeof HEAD_DIMS / sizeof HEAD_DIMS[0])
#define HEADS 3
#define PAD 5 /* row stride beyond H hd */

/* ---- test helpers (not under test) ---- */

static uint64_t rng_state;

static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * 0x1p-53;
}

static float *new_floats(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    assert_non_null(p);
    return p;
}

/* The rows of x at the test's positions (one row per position), values of
   both signs over several binades, and the table at those positions. */
typedef struct {
    size_t hd, ld, rows;
    float *x, *cos_t, *sin_t;
} case_data;

static void make_case(case_data *c, size_t hd, double theta)
{
    const size_t half = hd / 2;
    c->hd = hd;
    c->ld = HEADS * hd + PAD;
    c->rows = N_POSITIONS;
    c->x = new_floats(c->rows * c->ld);
    for (size_t i = 0; i < c->rows * c->ld; i++)
        c->x[i] = (float)((2.0 * uniform() - 1.0) * pow(2.0, 8.0 * uniform() - 4.0));
    float *all_cos = new_floats((POSITIONS[N_POSITIONS - 1] + 1) * half);
    float *all_sin = new_floats((POSITIONS[N_POSITIONS - 1] + 1) * half);
    fw_rope_table(all_cos, all_sin, POSITIONS[N_POSITIONS - 1] + 1, hd, theta, NULL);
    c->cos_t = new_floats(c->rows * half);
    c->sin_t = new_floats(c->rows * half);
    for (size_t r = 0; r < c->rows; r++) {
        memcpy(c->cos_t + r * half, all_cos + POSITIONS[r] * half, half * sizeof(float));
        memcpy(c->sin_t + r * half, all_sin + POSITIONS[r] * half, half * sizeof(float));
    }
    free(all_cos), free(all_sin);
}

static void free_case(case_data *c)
{
    free(c->x), free(c->cos_t), free(c->sin_t);
}

/* The rotation evaluated directly in double from the position, theta and
 * the input's floats: want[r][j], and the tolerance of a float evaluation
 * with a float table, 4 u (|a c| + |b s|) + 1e-12 (|a| + |b|) (the table's
 * rounding and the three float roundings, each at most u of the terms it
 * touches; the absolute term for the double angle's own error at 4095
 * radians, ~1e-12). inverse: the transposed rotation. */
static void rope_reference(double *want, double *tol, const case_data *c, double theta, int inverse)
{
    const size_t half = c->hd / 2;
    for (size_t r = 0; r < c->rows; r++)
        for (size_t h = 0; h < HEADS; h++)
            for (size_t i = 0; i < half; i++) {
                const double angle =
                    (double)POSITIONS[r] * pow(theta, -2.0 * (double)i / (double)c->hd);
                const double cs = cos(angle), sn = inverse ? -sin(angle) : sin(angle);
                const size_t lo = r * c->ld + h * c->hd + i, hi = lo + half;
                const double a = c->x[lo], b = c->x[hi];
                want[lo] = a * cs - b * sn;
                want[hi] = b * cs + a * sn;
                const double slack = 1e-12 * (fabs(a) + fabs(b));
                tol[lo] = 4.0 * U * (fabs(a * cs) + fabs(b * sn)) + slack;
                tol[hi] = 4.0 * U * (fabs(b * cs) + fabs(a * sn)) + slack;
            }
}

/* The largest |got - want| / tol over the heads' columns; prints the first
   mismatch. Returns the number outside tolerance. */
static size_t compare(const char *what, const float *got, const double *want, const double *tol,
                      const case_data *c, double *worst_share)
{
    size_t bad = 0;
    for (size_t r = 0; r < c->rows; r++)
        for (size_t j = 0; j < HEADS * c->hd; j++) {
            const size_t at = r * c->ld + j;
            const double diff = fabs((double)got[at] - want[at]);
            const double share = diff / tol[at];
            if (!(diff <= tol[at]) && bad++ == 0)
                print_error("%s: first mismatch at position %zu, column %zu: got %.9g, want "
                            "%.17g, |diff| %.3g > tol %.3g\n",
                            what, POSITIONS[r], j, (double)got[at], want[at], diff, tol[at]);
            if (share > *worst_share || isnan(share))
                *worst_share = isnan(share) ? INFINITY : share;
        }
    return bad;
}

/* ---- the tests ---- */

static void table_matches_double(void **state)
{
    (void)state;
    /* each entry one float rounding of the double value: |err| <= u |v| */
    for (size_t t = 0; t < N_THETAS; t++)
        for (size_t d = 0; d < N_HEAD_DIMS; d++) {
            const size_t hd = HEAD_DIMS[d], half = hd / 2, n = 4096;
            float *cs = new_floats(n * half), *sn = new_floats(n * half);
            fw_rope_table(cs, sn, n, hd, THETAS[t], NULL);
            for (size_t p = 0; p < n; p++)
                for (size_t i = 0; i < half; i++) {
                    const double angle = (double)p * pow(THETAS[t], -2.0 * (double)i / (double)hd);
                    assert_true(fabs(cs[p * half + i] - cos(angle)) <= U * fabs(cos(angle)));
                    assert_true(fabs(sn[p * half + i] - sin(angle)) <= U * fabs(sin(angle)));
                }
            free(cs), free(sn);
        }
}

/* Llama 3.1's scaled frequencies (Meta-Llama-3.1's config.json: factor 8,
   low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings
   8192; theta 500000), each written out here from the definition: with
   hd 128 the first frequencies keep their value (wavelength below 2048),
   the last are divided by 8 (above 8192) and a band between is blended.
   Each entry one float rounding of the double value, as unscaled. */
static double llama31_frequency(size_t i, size_t hd)
{
    const double f = pow(500000.0, -2.0 * (double)i / (double)hd);
    const double w = 2.0 * 3.14159265358979323846 / f;
    if (w < 8192.0 / 4.0)
        return f;
    if (w > 8192.0 / 1.0)
        return f / 8.0;
    const double s = (8192.0 / w - 1.0) / (4.0 - 1.0);
    return (1.0 - s) * f / 8.0 + s * f;
}

static void llama31_scaled_table_matches_double(void **state)
{
    (void)state;
    const vp_rope_scaling llama31 = {8.0, 1.0, 4.0, 8192.0};
    const size_t hd = 128, half = hd / 2, n = 4096;
    float *cs = new_floats(n * half), *sn = new_floats(n * half);
    fw_rope_table(cs, sn, n, hd, 500000.0, &llama31);
    size_t kept = 0, divided = 0, blended = 0;
    for (size_t i = 0; i < half; i++) {
        const double f = llama31_frequency(i, hd), plain = pow(500000.0, -2.0 * (double)i / 128.0);
        kept += f == plain, divided += f == plain / 8.0;
        blended += f != plain && f != plain / 8.0;
        for (size_t p = 0; p < n; p++) {
            const double angle = (double)p * f;
            assert_true(fabs(cs[p * half + i] - cos(angle)) <= U * fabs(cos(angle)));
            assert_true(fabs(sn[p * half + i] - sin(angle)) <= U * fabs(sin(angle)));
        }
    }
    /* all three regimes met: 2 pi 500000^(2i/128) crosses 2048 and 8192 */
    assert_true(kept > 0 && divided > 0 && blended > 0);
    free(cs), free(sn);
}

static void rope_matches_double(void **state)
{
    (void)state;
    rng_state = 15;
    for (size_t v = 0; v < N_VARIANTS; v++) {
        const variant *var = &VARIANTS[v];
        if (!vp_isa_supported(var->isa)) {
            print_message("rope %s: not supported by this CPU, skipped\n", var->name);
            continue;
        }
        double worst = 0.0;
        for (size_t t = 0; t < N_THETAS; t++)
            for (size_t d = 0; d < N_HEAD_DIMS; d++)
                for (int inverse = 0; inverse <= 1; inverse++) {
                    case_data c;
                    make_case(&c, HEAD_DIMS[d], THETAS[t]);
                    const size_t n = c.rows * c.ld;
                    double *want = calloc(n, sizeof *want), *tol = calloc(n, sizeof *tol);
                    assert_non_null(want), assert_non_null(tol);
                    rope_reference(want, tol, &c, THETAS[t], inverse);
                    float *got = new_floats(n);
                    memcpy(got, c.x, n * sizeof *got);
                    var->rope(got, c.ld, c.cos_t, c.sin_t, c.rows, HEADS, c.hd, inverse);
                    char what[96];
                    snprintf(what, sizeof what, "rope %s, theta %g, hd %zu%s", var->name, THETAS[t],
                             c.hd, inverse ? ", inverse" : "");
                    assert_int_equal(compare(what, got, want, tol, &c, &worst), 0);
                    /* the padding between rows is left alone */
                    for (size_t r = 0; r < c.rows; r++)
                        assert_memory_equal(got + r * c.ld + HEADS * c.hd,
                                            c.x + r * c.ld + HEADS * c.hd, PAD * sizeof(float));
                    free(want), free(tol), free(got);
                    free_case(&c);
                }
        print_message("rope %s against double: at most %.3f of the tolerance 4 u (|a c| + "
                      "|b s|)\n",
                      var->name, worst);
    }
}

/* The inverse is the transpose: rotating then rotating back returns x
   within 8 u (|a| + |b|) per pair (two rotations of 3 roundings each, and
   c^2 + s^2 of the float table within 2 u of 1). */
static void inverse_undoes_rope(void **state)
{
    (void)state;
    rng_state = 16;
    for (size_t v = 0; v < N_VARIANTS; v++) {
        const variant *var = &VARIANTS[v];
        if (!vp_isa_supported(var->isa))
            continue;
        double worst = 0.0;
        for (size_t t = 0; t < N_THETAS; t++)
            for (size_t d = 0; d < N_HEAD_DIMS; d++) {
                case_data c;
                make_case(&c, HEAD_DIMS[d], THETAS[t]);
                const size_t n = c.rows * c.ld, half = c.hd / 2;
                float *y = new_floats(n);
                memcpy(y, c.x, n * sizeof *y);
                var->rope(y, c.ld, c.cos_t, c.sin_t, c.rows, HEADS, c.hd, 0);
                var->rope(y, c.ld, c.cos_t, c.sin_t, c.rows, HEADS, c.hd, 1);
                for (size_t r = 0; r < c.rows; r++)
                    for (size_t h = 0; h < HEADS; h++)
                        for (size_t i = 0; i < half; i++) {
                            const size_t lo = r * c.ld + h * c.hd + i, hi = lo + half;
                            const double tol = 8.0 * U * (fabs(c.x[lo]) + fabs(c.x[hi]));
                            const double e =
                                fmax(fabs((double)y[lo] - c.x[lo]), fabs((double)y[hi] - c.x[hi]));
                            if (!(e <= tol))
                                fail_msg("rope %s theta %g hd %zu position %zu pair %zu: "
                                         "round trip off by %.3g > %.3g",
                                         var->name, THETAS[t], c.hd, POSITIONS[r], i, e, tol);
                            worst = fmax(worst, e / tol);
                        }
                free(y);
                free_case(&c);
            }
        print_message("rope %s round trip: at most %.3f of the tolerance 8 u (|a| + |b|)\n",
                      var->name, worst);
    }
}

static void simd_equals_scalar_bits(void **state)
{
    (void)state;
    rng_state = 17;
    for (size_t v = 1; v < N_VARIANTS; v++) {
        const variant *var = &VARIANTS[v];
        if (!vp_isa_supported(var->isa))
            continue;
        for (size_t d = 0; d < N_HEAD_DIMS; d++)
            for (int inverse = 0; inverse <= 1; inverse++) {
                case_data c;
                make_case(&c, HEAD_DIMS[d], THETAS[d % N_THETAS]);
                const size_t n = c.rows * c.ld;
                float *a = new_floats(n), *b = new_floats(n);
                memcpy(a, c.x, n * sizeof *a);
                memcpy(b, c.x, n * sizeof *b);
                kern_rope_scalar(a, c.ld, c.cos_t, c.sin_t, c.rows, HEADS, c.hd, inverse);
                var->rope(b, c.ld, c.cos_t, c.sin_t, c.rows, HEADS, c.hd, inverse);
                if (memcmp(a, b, n * sizeof *a) != 0)
                    fail_msg("rope %s hd %zu%s: not the scalar one's bits", var->name, c.hd,
                             inverse ? " inverse" : "");
                free(a), free(b);
                free_case(&c);
            }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_matches_double),
        cmocka_unit_test(llama31_scaled_table_matches_double),
        cmocka_unit_test(rope_matches_double),
        cmocka_unit_test(inverse_undoes_rope),
        cmocka_unit_test(simd_equals_scalar_bits),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("rope kernel", tests, NULL, NULL);
}
