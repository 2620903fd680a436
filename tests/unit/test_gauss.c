/* The counter-based Gaussian generator: the scalar reference against a
 * double-precision Box-Muller of the same Philox words, every SIMD variant
 * against the scalar one, independence from how the draws are requested, the
 * distribution (moments, Kolmogorov-Smirnov with GSL), independence of
 * streams, and the choice of variant through $VARPROF_ISA. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <Random123/philox.h>

#include "test_filter.h"
#include "varprof/gauss.h"
#include "varprof/isa.h"

/* SIMD against scalar: |simd - scalar| <= GAUSS_SIMD_TOL_ULPS float ulps of
 * max(|scalar|, 1). Absolute below 1 because a draw near 0 comes from a
 * cosine near its zero, where only the absolute error is meaningful. The
 * variants run the same operations in the same order, so in practice the
 * difference is 0; the tolerance leaves room for a future variant that
 * rounds one step differently. */
#define GAUSS_SIMD_TOL_ULPS 4.0

/* Scalar reference against double precision: |z - z_double| <= 4 * 2^-24 * R
 * with R the double-precision radius: about 2 float ulps each for the radius
 * and for the sine or cosine, scaled by the radius they multiply. */
#define GAUSS_REF_TOL_UNITS 4.0

static const double PI = 3.14159265358979323846;

/* A small deterministic generator for test parameters (not under test). */
static uint64_t lcg_next(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 11;
}

static float float_ulp(float x)
{
    x = fabsf(x);
    return nextafterf(x, INFINITY) - x;
}

/* ---- $VARPROF_ISA: runs first, before anything in this process selects ---- */

/* Forks a child that sets $VARPROF_ISA (NULL: unsets it) before the first
 * selection and checks what vp_isa_select reports; returns the child's exit
 * status, 0 when every check held. The child exits without returning into
 * cmocka. */
static int isa_select_in_child(const char *env_value, vp_status want_status, vp_isa want_isa)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (env_value)
            setenv("VARPROF_ISA", env_value, 1);
        else
            unsetenv("VARPROF_ISA");
        vp_isa isa = VP_ISA_COUNT;
        vp_error err = {0};
        vp_status status = vp_isa_select(&isa, &err);
        if (status != want_status) {
            fprintf(stderr, "VARPROF_ISA=%s: status %d, want %d\n",
                    env_value ? env_value : "(unset)", (int)status, (int)want_status);
            _exit(1);
        }
        if (isa != want_isa || vp_isa_current() != want_isa) {
            fprintf(stderr, "VARPROF_ISA=%s: chose %s, want %s\n",
                    env_value ? env_value : "(unset)", vp_isa_name(isa), vp_isa_name(want_isa));
            _exit(2);
        }
        if (status != VP_OK) {
            /* the message names the variable, the bad value and what is supported */
            if (!strstr(err.message, "VARPROF_ISA") || !strstr(err.message, env_value) ||
                !strstr(err.message, "supported: scalar")) {
                fprintf(stderr, "unhelpful message: %s\n", err.message);
                _exit(3);
            }
            vp_error again = {0};
            if (vp_isa_select(NULL, &again) != status || strcmp(again.message, err.message) != 0)
                _exit(4); /* the one choice is reported the same way every time */
        }
        /* the dispatching entry point runs the chosen variant */
        float a[37], b[37];
        vp_gauss_fill(a, 37, 9, 8, 7, 6);
        vp_gauss_fill_with(want_isa, b, 37, 9, 8, 7, 6);
        _exit(memcmp(a, b, sizeof a) == 0 ? 0 : 5);
    }
    int wstatus = 0;
    assert_true(waitpid(pid, &wstatus, 0) == pid);
    assert_true(WIFEXITED(wstatus));
    return WEXITSTATUS(wstatus);
}

static void varprof_isa_chooses_the_variant(void **state)
{
    (void)state;
    assert_int_equal(isa_select_in_child(NULL, VP_OK, vp_isa_best()), 0);
    assert_int_equal(isa_select_in_child("", VP_OK, vp_isa_best()), 0); /* empty = unset */
    assert_int_equal(isa_select_in_child("scalar", VP_OK, VP_ISA_SCALAR), 0);
    for (int isa = VP_ISA_AVX2; isa < VP_ISA_COUNT; isa++)
        if (vp_isa_supported((vp_isa)isa))
            assert_int_equal(isa_select_in_child(vp_isa_name((vp_isa)isa), VP_OK, (vp_isa)isa), 0);
    /* a bad value fails cleanly and the process runs scalar */
    assert_int_equal(isa_select_in_child("avx1024", VP_EINVAL, VP_ISA_SCALAR), 0);
    assert_int_equal(isa_select_in_child("AVX2", VP_EINVAL, VP_ISA_SCALAR), 0);
    for (int isa = VP_ISA_AVX2; isa < VP_ISA_COUNT; isa++)
        if (!vp_isa_supported((vp_isa)isa))
            assert_int_equal(
                isa_select_in_child(vp_isa_name((vp_isa)isa), VP_EINVAL, VP_ISA_SCALAR), 0);
}

static void isa_names_and_support(void **state)
{
    (void)state;
    assert_string_equal(vp_isa_name(VP_ISA_SCALAR), "scalar");
    assert_string_equal(vp_isa_name(VP_ISA_AVX2), "avx2");
    assert_string_equal(vp_isa_name(VP_ISA_AVX512), "avx512");
    assert_string_equal(vp_isa_name(VP_ISA_COUNT), "unknown");
    assert_true(vp_isa_supported(VP_ISA_SCALAR));
    assert_false(vp_isa_supported(VP_ISA_COUNT));
    assert_true(vp_isa_supported(vp_isa_best()));
    /* AVX-512 here implies AVX2 + FMA */
    if (vp_isa_supported(VP_ISA_AVX512))
        assert_true(vp_isa_supported(VP_ISA_AVX2));
    print_message("supported:");
    for (int isa = 0; isa < VP_ISA_COUNT; isa++)
        if (vp_isa_supported((vp_isa)isa))
            print_message(" %s", vp_isa_name((vp_isa)isa));
    print_message("; best %s\n", vp_isa_name(vp_isa_best()));

    vp_isa isa = VP_ISA_COUNT;
    vp_error err = {0};
    assert_int_equal(vp_isa_from_name("scalar", &isa, &err), VP_OK);
    assert_int_equal(isa, VP_ISA_SCALAR);
    const char *bad[] = {"", "avx1024", "Scalar", "avx2 ", "sse2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        isa = VP_ISA_COUNT;
        assert_int_equal(vp_isa_from_name(bad[i], &isa, &err), VP_EINVAL);
        assert_int_equal(isa, VP_ISA_COUNT); /* untouched */
        assert_non_null(strstr(err.message, bad[i]));
        assert_non_null(strstr(err.message, "supported: scalar"));
    }
    assert_int_equal(vp_isa_from_name(NULL, &isa, &err), VP_EINVAL);
}

/* ---- the scalar reference against an independent double-precision one ---- */

/* Draws 4*block .. +3 in double: the same Philox words and the same float
 * radius uniform (part of the definition), then libm's log, sqrt, cos and sin
 * in double. radius[j] gets the radius that draw j was scaled by. */
static void reference_block(double z[4], double radius[4], uint64_t seed, uint32_t token,
                            uint32_t sub_block, uint64_t block)
{
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t ctr = {{(uint32_t)block, (uint32_t)(block >> 32), token, sub_block}};
    philox4x32_ctr_t r = philox4x32(ctr, key);
    for (int pair = 0; pair < 2; pair++) {
        uint32_t r_radius = r.v[2 * pair], r_angle = r.v[2 * pair + 1];
        float u =
            (float)(int32_t)(r_radius >> 1) * 0x1p-31f + 0x1p-32f; /* exact sum of 2 powers of 2 */
        double rad = sqrt(-2.0 * log((double)u));
        /* the angle straight from its word, in double (the generator keeps it to float
         * resolution, about 0.4 of the units compared) */
        double theta = 2.0 * PI * ((double)r_angle * 0x1p-32);
        z[2 * pair] = rad * cos(theta);
        z[2 * pair + 1] = rad * sin(theta);
        radius[2 * pair] = radius[2 * pair + 1] = rad;
    }
}

static void scalar_matches_double_precision(void **state)
{
    (void)state;
    enum { N = 200000 };
    float *z = malloc(N * sizeof *z);
    assert_non_null(z);
    const uint64_t seeds[] = {0, 1, 0xfedcba9876543210ull};
    double worst = 0.0;
    size_t worst_i = 0, compared = 0, failures = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        vp_gauss_fill_with(VP_ISA_SCALAR, z, N, seeds[s], (uint32_t)s, 11, 0);
        for (size_t b = 0; b < N / 4; b++) {
            double ref[4], radius[4];
            reference_block(ref, radius, seeds[s], (uint32_t)s, 11, b);
            for (int j = 0; j < 4; j++) {
                size_t i = 4 * b + (size_t)j;
                /* error in units of 2^-24 of the radius (see GAUSS_REF_TOL_UNITS) */
                double units = fabs((double)z[i] - ref[j]) / (0x1p-24 * fmax(radius[j], 0x1p-40));
                if (radius[j] == 0.0)
                    units = z[i] == 0.0f ? 0.0 : INFINITY;
                if (units > GAUSS_REF_TOL_UNITS && failures++ == 0)
                    print_error("seed %llu draw %zu: %.9g, double precision %.12g (%.2f units of "
                                "2^-24 radius, tolerance %.1f)\n",
                                (unsigned long long)seeds[s], i, z[i], ref[j], units,
                                GAUSS_REF_TOL_UNITS);
                if (units > worst) {
                    worst = units;
                    worst_i = i;
                }
                compared++;
            }
        }
    }
    print_message("scalar vs double precision: %zu draws, max error %.2f units of 2^-24 radius "
                  "(at draw %zu), tolerance %.1f, %zu beyond\n",
                  compared, worst, worst_i, GAUSS_REF_TOL_UNITS, failures);
    free(z);
    assert_int_equal(failures, 0);
}

/* ---- SIMD variants against the scalar reference ---- */

typedef struct {
    size_t compared, differing, failures;
    double max_ulps;
} simd_tally;

/* Compares one request through isa and through scalar; counts into *tally and
 * prints the first mismatch beyond the tolerance. */
static void compare_request(vp_isa isa, uint64_t seed, uint32_t token, uint32_t sub_block,
                            uint64_t first, size_t n, float *simd, float *ref, simd_tally *tally)
{
    /* poison: a draw the variant fails to write shows up as a mismatch */
    for (size_t i = 0; i < n; i++)
        simd[i] = NAN;
    vp_gauss_fill_with(isa, simd, n, seed, token, sub_block, first);
    vp_gauss_fill_with(VP_ISA_SCALAR, ref, n, seed, token, sub_block, first);
    for (size_t i = 0; i < n; i++) {
        float unit = float_ulp(fmaxf(fabsf(ref[i]), 1.0f));
        double ulps = fabs((double)simd[i] - (double)ref[i]) / unit;
        if (isnan(simd[i]))
            ulps = INFINITY;
        if (simd[i] != ref[i])
            tally->differing++;
        if (ulps > tally->max_ulps)
            tally->max_ulps = ulps;
        if (ulps > GAUSS_SIMD_TOL_ULPS && tally->failures++ == 0)
            print_error("%s: seed %#llx token %u sub-block %u first %llu n %zu: draw %llu is %.9g, "
                        "scalar %.9g (%.1f ulps, tolerance %.1f)\n",
                        vp_isa_name(isa), (unsigned long long)seed, token, sub_block,
                        (unsigned long long)first, n, (unsigned long long)(first + i), simd[i],
                        ref[i], ulps, GAUSS_SIMD_TOL_ULPS);
        tally->compared++;
    }
}

static void simd_variants_match_scalar(void **state)
{
    (void)state;
    enum { MAX_N = 100000 };
    float *simd = malloc(MAX_N * sizeof *simd), *ref = malloc(MAX_N * sizeof *ref);
    assert_non_null(simd);
    assert_non_null(ref);
    const uint64_t seeds[] = {0, 1, 0x0123456789abcdefull, UINT64_MAX};
    const uint32_t tokens[] = {0, 5, UINT32_MAX};
    const uint32_t subs[] = {0, 31, UINT32_MAX};
    const struct {
        uint64_t first;
        size_t n;
    } spans[] = {
        {0, 0},
        {0, 1},
        {1, 3},
        {2, 7},
        {3, 64},
        {0, 128},
        {5, 131},
        {7, 1000},
        {0, 512},
        {4 * 0xffffffffull - 5, 300}, /* the block counter's low word wraps */
        {UINT64_MAX - 300 + 1, 300},  /* the last draws of a stream */
    };
    size_t variants = 0;
    for (int isa = VP_ISA_AVX2; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa)) {
            print_message("%s: not supported here, not compared\n", vp_isa_name((vp_isa)isa));
            continue;
        }
        variants++;
        simd_tally tally = {0, 0, 0, 0.0};
        for (size_t a = 0; a < sizeof seeds / sizeof seeds[0]; a++)
            for (size_t b = 0; b < sizeof tokens / sizeof tokens[0]; b++)
                for (size_t c = 0; c < sizeof subs / sizeof subs[0]; c++)
                    for (size_t d = 0; d < sizeof spans / sizeof spans[0]; d++)
                        compare_request((vp_isa)isa, seeds[a], tokens[b], subs[c], spans[d].first,
                                        spans[d].n, simd, ref, &tally);
        /* random requests, and one long one */
        uint64_t rng = 12345;
        for (int k = 0; k < 300; k++) {
            uint64_t first = lcg_next(&rng) % 100000;
            size_t n = (size_t)(lcg_next(&rng) % 300);
            compare_request((vp_isa)isa, lcg_next(&rng), (uint32_t)lcg_next(&rng),
                            (uint32_t)lcg_next(&rng), first, n, simd, ref, &tally);
        }
        compare_request((vp_isa)isa, 77, 1, 2, 3, MAX_N, simd, ref, &tally);
        print_message("%s vs scalar: %zu draws, %zu not bit-identical, max difference %.2f ulps "
                      "(tolerance %.1f ulps of max(|draw|, 1)), %zu beyond\n",
                      vp_isa_name((vp_isa)isa), tally.compared, tally.differing, tally.max_ulps,
                      GAUSS_SIMD_TOL_ULPS, tally.failures);
        assert_int_equal(tally.failures, 0);
    }
    if (variants == 0)
        print_message("no SIMD variant supported here: nothing to compare\n");
    free(simd);
    free(ref);
}

/* ---- draw i does not depend on how the draws are asked for ---- */

static void draws_do_not_depend_on_the_split(void **state)
{
    (void)state;
    enum { N = 3000 };
    static float whole[N], pieces[N];
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        vp_gauss_fill_with((vp_isa)isa, whole, N, 2024, 3, 4, 0);
        uint64_t rng = (uint64_t)isa + 99;
        for (int trial = 0; trial < 20; trial++) {
            memset(pieces, 0, sizeof pieces);
            size_t at = 0;
            while (at < N) {
                /* pieces of 1 .. 200 draws, mostly unaligned */
                size_t len = 1 + (size_t)(lcg_next(&rng) % 200);
                if (len > N - at)
                    len = N - at;
                vp_gauss_fill_with((vp_isa)isa, pieces + at, len, 2024, 3, 4, at);
                at += len;
            }
            for (size_t i = 0; i < N; i++) {
                if (memcmp(&pieces[i], &whole[i], sizeof(float)) != 0) {
                    print_error("%s trial %d: draw %zu is %.9g in pieces, %.9g in one call\n",
                                vp_isa_name((vp_isa)isa), trial, i, pieces[i], whole[i]);
                    fail();
                }
            }
        }
    }
    /* the dispatching entry point gives the variant in use; n = 0 writes nothing */
    vp_gauss_fill(pieces, N, 2024, 3, 4, 0);
    vp_gauss_fill_with(vp_isa_current(), whole, N, 2024, 3, 4, 0);
    assert_memory_equal(pieces, whole, sizeof whole);
    vp_gauss_fill(NULL, 0, 1, 2, 3, 4);
    vp_gauss_fill_with(VP_ISA_SCALAR, NULL, 0, 1, 2, 3, 4);
}

/* ---- the distribution ---- */

/* Mean, variance, skewness and excess kurtosis of 10^6 draws (1000 tokens of
 * 1000, as the Monte Carlo engine asks for them), each within 5 standard
 * errors of N(0,1)'s: sqrt(1/n), sqrt(2/n), sqrt(6/n), sqrt(24/n). */
static void moments_of_a_million_draws(void **state)
{
    (void)state;
    enum { TOKENS = 1000, PER_TOKEN = 1000 };
    const double n = (double)TOKENS * PER_TOKEN;
    static float z[PER_TOKEN];
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        double s1 = 0, s2 = 0, s3 = 0, s4 = 0, biggest = 0;
        for (uint32_t token = 0; token < TOKENS; token++) {
            vp_gauss_fill_with((vp_isa)isa, z, PER_TOKEN, 7, token, 2, 0);
            for (size_t i = 0; i < PER_TOKEN; i++) {
                double x = z[i];
                assert_true(isfinite(x));
                biggest = fmax(biggest, fabs(x));
                s1 += x;
                s2 += x * x;
                s3 += x * x * x;
                s4 += x * x * x * x;
            }
        }
        double mean = s1 / n;
        double var = s2 / n - mean * mean;
        double m3 = s3 / n - 3 * mean * s2 / n + 2 * mean * mean * mean;
        double m4 = s4 / n - 4 * mean * s3 / n + 6 * mean * mean * s2 / n - 3 * pow(mean, 4);
        double skew = m3 / pow(var, 1.5), kurt = m4 / (var * var) - 3;
        const double k = 5.0;
        print_message(
            "%s, 10^6 draws: mean %+.5f (bound %.5f), variance %.5f (1 +- %.5f), "
            "skewness %+.5f (bound %.5f), excess kurtosis %+.5f (bound %.5f), max |z| %.3f\n",
            vp_isa_name((vp_isa)isa), mean, k * sqrt(1 / n), var, k * sqrt(2 / n), skew,
            k * sqrt(6 / n), kurt, k * sqrt(24 / n), biggest);
        assert_true(fabs(mean) < k * sqrt(1 / n));
        assert_true(fabs(var - 1) < k * sqrt(2 / n));
        assert_true(fabs(skew) < k * sqrt(6 / n));
        assert_true(fabs(kurt) < k * sqrt(24 / n));
        assert_true(biggest < 6.67); /* radius uniform >= 2^-32 */
    }
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Kolmogorov-Smirnov of 10^5 draws against N(0,1) (GSL's CDF): the statistic
 * below the 0.001-level critical value 1.95/sqrt(n). */
static void kolmogorov_smirnov_against_the_normal(void **state)
{
    (void)state;
    enum { N = 100000 };
    gsl_set_error_handler_off();
    float *z = malloc(N * sizeof *z);
    double *x = malloc(N * sizeof *x);
    assert_non_null(z);
    assert_non_null(x);
    const double critical = 1.95 / sqrt((double)N);
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        const struct {
            uint64_t seed;
            uint32_t token, sub_block;
            uint64_t first;
        } streams[] = {
            {1, 0, 0, 0}, {0xdeadbeefull << 32, 123456, 31, 5}, {42, UINT32_MAX, 7, 1ull << 40}};
        for (size_t s = 0; s < sizeof streams / sizeof streams[0]; s++) {
            vp_gauss_fill_with((vp_isa)isa, z, N, streams[s].seed, streams[s].token,
                               streams[s].sub_block, streams[s].first);
            for (size_t i = 0; i < N; i++)
                x[i] = z[i];
            qsort(x, N, sizeof *x, compare_double);
            double d = 0;
            for (size_t i = 0; i < N; i++) {
                double cdf = gsl_cdf_ugaussian_P(x[i]);
                d = fmax(d, fmax(cdf - (double)i / N, (double)(i + 1) / N - cdf));
            }
            print_message("%s stream %zu: KS statistic %.5f, critical value (0.001) %.5f\n",
                          vp_isa_name((vp_isa)isa), s, d, critical);
            assert_true(d < critical);
        }
    }
    free(z);
    free(x);
}

/* ---- streams are independent ---- */

static double correlation(const float *a, const float *b, size_t n)
{
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    for (size_t i = 0; i < n; i++) {
        sa += a[i];
        sb += b[i];
        saa += (double)a[i] * a[i];
        sbb += (double)b[i] * b[i];
        sab += (double)a[i] * b[i];
    }
    double cov = sab / n - (sa / n) * (sb / n);
    return cov / sqrt((saa / n - (sa / n) * (sa / n)) * (sbb / n - (sb / n) * (sb / n)));
}

/* Neighbouring tokens, sub-blocks and seeds (low and high key word), swapped
 * token and sub-block, and neighbours within a stream: the correlation of
 * 10^5 pairs within 5/sqrt(n) of 0. */
static void streams_are_uncorrelated(void **state)
{
    (void)state;
    enum { N = 100000 };
    float *base = malloc((N + 1) * sizeof *base), *other = malloc(N * sizeof *other);
    assert_non_null(base);
    assert_non_null(other);
    const uint64_t seed = 5;
    const uint32_t token = 10, sub_block = 3;
    vp_gauss_fill(base, N + 1, seed, token, sub_block, 0);
    const struct {
        const char *what;
        uint64_t seed;
        uint32_t token, sub_block;
    } others[] = {
        {"next token", seed, token + 1, sub_block},
        {"next sub-block", seed, token, sub_block + 1},
        {"next seed", seed + 1, token, sub_block},
        {"seed + 2^32", seed + (1ull << 32), token, sub_block},
        {"token and sub-block swapped", seed, sub_block, token},
    };
    const double bound = 5.0 / sqrt((double)N);
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        vp_gauss_fill(other, N, others[k].seed, others[k].token, others[k].sub_block, 0);
        double r = correlation(base, other, N);
        print_message("%-28s correlation %+.5f (bound %.5f)\n", others[k].what, r, bound);
        assert_true(fabs(r) < bound);
    }
    /* draw i against draw i+1: crosses Box-Muller pairs and Philox blocks */
    double lag1 = correlation(base, base + 1, N);
    print_message("%-28s correlation %+.5f (bound %.5f)\n", "draw i and i+1", lag1, bound);
    assert_true(fabs(lag1) < bound);
    /* the two draws of one Box-Muller pair */
    size_t pairs = N / 2;
    for (size_t i = 0; i < pairs; i++) {
        other[i] = base[2 * i];
        other[pairs + i] = base[2 * i + 1];
    }
    double partners = correlation(other, other + pairs, pairs);
    double pair_bound = 5.0 / sqrt((double)pairs);
    print_message("%-28s correlation %+.5f (bound %.5f)\n", "Box-Muller partners", partners,
                  pair_bound);
    assert_true(fabs(partners) < pair_bound);
    free(base);
    free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: its children must make the process's first ISA selection */
        cmocka_unit_test(varprof_isa_chooses_the_variant),
        cmocka_unit_test(isa_names_and_support),
        cmocka_unit_test(scalar_matches_double_precision),
        cmocka_unit_test(simd_variants_match_scalar),
        cmocka_unit_test(draws_do_not_depend_on_the_split),
        cmocka_unit_test(moments_of_a_million_draws),
        cmocka_unit_test(kolmogorov_smirnov_against_the_normal),
        cmocka_unit_test(streams_are_uncorrelated),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("gaussian generator", tests, NULL, NULL);
}
