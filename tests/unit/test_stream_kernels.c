/* The Post-LN stream's elementwise kernels and the gradients' |v|^2
 * (src/kernels/stream_body.h): the scalar one against its formula written
 * here in double, element by element (|v|^2 lane by lane), and each
 * instruction set's variant this CPU runs against the
 * scalar one bit for bit, for every length from 0 to 67 (whole vectors and
 * the elements left over), in place and not, with and without o and the
 * bias. test_golden holds the Post-LN forward pass built on them to its
 * recorded bytes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kern_variants.h"
#include "test_filter.h"
#include "varprof/isa.h"

enum { MAX_N = 67 };

static const double ALPHA = 2.8284271247461903; /* DeepNorm's (2N)^(1/4) at N = 32 */

/* a spread of values, from tiny to large and both signs, -0 among them */
static float value(size_t i, size_t salt)
{
    if ((i + salt) % 23 == 0)
        return -0.0f;
    const double x = sin(0.7 * (double)i + 1.3 * (double)salt);
    return (float)(x * pow(10.0, (double)((i * 7 + salt) % 9) - 4.0));
}

/* The scalar variant is the formula: each element rounded from double once. */
static void scalar_is_the_formula(void **state)
{
    (void)state;
    const kern_table *k = kern_for(VP_ISA_SCALAR);
    float x[MAX_N], o[MAX_N], w[MAX_N], b[MAX_N], out[MAX_N];
    for (size_t i = 0; i < MAX_N; i++)
        x[i] = value(i, 1), o[i] = value(i, 2), w[i] = value(i, 3), b[i] = value(i, 4);
    k->scale_add(out, x, o, MAX_N, ALPHA);
    for (size_t i = 0; i < MAX_N; i++)
        assert_true(out[i] == (float)(ALPHA * (double)x[i] + (double)o[i]));
    k->scale_add(out, x, NULL, MAX_N, ALPHA);
    for (size_t i = 0; i < MAX_N; i++)
        assert_true(out[i] == (float)(ALPHA * (double)x[i]));
    /* alpha 1 (Post-LN) takes float lanes: still the double formula's bits,
       here over sums that cancel, carry and round at every magnitude */
    for (size_t salt = 0; salt < 200; salt++) {
        float u[MAX_N], v[MAX_N], sum[MAX_N];
        for (size_t i = 0; i < MAX_N; i++)
            u[i] = value(i, salt), v[i] = (i % 3 ? 1.0f : -1.0f) * value(i + salt, salt + 7);
        k->scale_add(sum, u, v, MAX_N, 1.0);
        for (size_t i = 0; i < MAX_N; i++)
            assert_true(sum[i] == (float)(1.0 * (double)u[i] + (double)v[i]));
        k->scale_add(sum, u, NULL, MAX_N, 1.0);
        assert_memory_equal(sum, u, sizeof sum);
    }
    const double mean = 0.125, inv = 3.0;
    memcpy(out, x, sizeof out);
    k->norm_apply(out, w, b, MAX_N, mean, inv);
    for (size_t i = 0; i < MAX_N; i++)
        assert_true(out[i] == (float)(((double)x[i] - mean) * inv * w[i] + b[i]));
    /* no bias: + 0.0, so a -0 product comes out +0, as a bias of zeros gives */
    memcpy(out, x, sizeof out);
    k->norm_apply(out, w, NULL, MAX_N, 0.0, 1.0);
    for (size_t i = 0; i < MAX_N; i++) {
        const float want = (float)((double)x[i] * w[i] + 0.0);
        assert_true(out[i] == want && signbit(out[i]) == signbit(want));
    }
    /* square_sum_wide: 32 lanes in element order, then pairwise */
    for (size_t n = 0; n <= MAX_N; n++) {
        double lane[32] = {0};
        for (size_t i = 0; i < n; i++)
            lane[i % 32] += (double)x[i] * (double)x[i];
        for (size_t half = 16; half >= 1; half /= 2)
            for (size_t l = 0; l < half; l++)
                lane[l] += lane[l + half];
        const double got = k->square_sum_wide(x, n);
        assert_memory_equal(&got, &lane[0], sizeof got);
    }
}

/* 0 if variant isa gives the scalar bits at length n, else prints the case */
static int same_bits(vp_isa isa, size_t n)
{
    const kern_table *kern[2] = {kern_for(VP_ISA_SCALAR), kern_for(isa)};
    float x[MAX_N], o[MAX_N], w[MAX_N], b[MAX_N], got[2][6][MAX_N];
    for (size_t i = 0; i < n; i++)
        x[i] = value(i, 5), o[i] = value(i, 6), w[i] = value(i, 7), b[i] = value(i, 8);
    for (int v = 0; v < 2; v++) {
        kern[v]->scale_add(got[v][0], x, o, n, ALPHA);
        memcpy(got[v][1], x, n * sizeof *x);
        kern[v]->scale_add(got[v][1], got[v][1], NULL, n, ALPHA); /* in place */
        memcpy(got[v][2], x, n * sizeof *x);
        kern[v]->norm_apply(got[v][2], w, b, n, -0.3, 1.7);
        memcpy(got[v][3], x, n * sizeof *x);
        kern[v]->norm_apply(got[v][3], w, NULL, n, 0.01, 0.9);
        kern[v]->scale_add(got[v][4], x, o, n, 1.0);
        memcpy(got[v][5], x, n * sizeof *x);
        kern[v]->scale_add(got[v][5], got[v][5], o, n, 1.0); /* in place */
    }
    static const char *const what[6] = {"scale_add",          "scale_add in place, no o",
                                        "norm_apply",         "norm_apply, no bias",
                                        "scale_add, alpha 1", "scale_add in place, alpha 1"};
    for (int c = 0; c < 6; c++)
        if (n && memcmp(got[0][c], got[1][c], n * sizeof(float)) != 0) {
            print_error("%s %s at length %zu: not the scalar bits\n", vp_isa_name(isa), what[c], n);
            return 1;
        }
    const double wide[2] = {kern[0]->square_sum_wide(x, n), kern[1]->square_sum_wide(x, n)};
    if (memcmp(&wide[0], &wide[1], sizeof wide[0]) != 0) {
        print_error("%s square_sum_wide at length %zu: not the scalar bits\n", vp_isa_name(isa), n);
        return 1;
    }
    return 0;
}

static void every_set_gives_the_scalar_bits(void **state)
{
    (void)state;
    int failed = 0, sets = 0;
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (isa == VP_ISA_SCALAR || !vp_isa_supported((vp_isa)isa))
            continue;
        sets++;
        for (size_t n = 0; n <= MAX_N && !failed; n++)
            failed = same_bits((vp_isa)isa, n);
    }
    print_message("stream kernels: %d SIMD set%s against the scalar, lengths 0 to %d: %s\n", sets,
                  sets == 1 ? "" : "s", MAX_N, failed ? "DIFFERENT" : "same bits");
    assert_false(failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalar_is_the_formula),
        cmocka_unit_test(every_set_gives_the_scalar_bits),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
