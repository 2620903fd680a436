/* The Adam kernel (src/kernels/adam_body.h): each instruction set's variant
 * this CPU runs gives the scalar one's bits, for every length from 0 to
 * 67 (whole vectors and the elements left over) and over many steps, with
 * and without weight decay. The scalar one is held against the formula in
 * double by test_train. */
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
#include "train/adam.h"
#include "varprof/isa.h"

enum { MAX_N = 67, STEPS = 20 };

/* a spread of values, from tiny to large and both signs */
static float value(size_t i, size_t salt)
{
    const double x = sin(0.7 * (double)i + 1.3 * (double)salt);
    return (float)(x * pow(10.0, (double)((i * 7 + salt) % 9) - 6.0));
}

/* STEPS updates of n floats with set isa against scalar: 0 if every bit
   of p, m and v agrees, else prints the first difference */
static int same_bits(vp_isa isa, size_t n, double weight_decay)
{
    float p[2][MAX_N], m[2][MAX_N] = {{0}}, v[2][MAX_N] = {{0}}, g[MAX_N];
    for (size_t i = 0; i < n; i++)
        p[0][i] = p[1][i] = value(i, 1);
    const kern_table *kern[2] = {kern_for(VP_ISA_SCALAR), kern_for(isa)};
    for (size_t s = 1; s <= STEPS; s++) {
        for (size_t i = 0; i < n; i++)
            g[i] = value(i, s + 2);
        const adam_step step = {1e-3, 0.9, 0.999, 1e-8, weight_decay, s};
        for (int k = 0; k < 2; k++)
            adam_update(kern[k], p[k], m[k], v[k], g, n, &step);
        for (size_t i = 0; i < n; i++)
            if (memcmp(&p[0][i], &p[1][i], sizeof(float)) != 0 ||
                memcmp(&m[0][i], &m[1][i], sizeof(float)) != 0 ||
                memcmp(&v[0][i], &v[1][i], sizeof(float)) != 0) {
                print_error("%s, n %zu, decay %g, step %zu, element %zu: p %.9g against the "
                            "scalar's %.9g (m %.9g, %.9g; v %.9g, %.9g)\n",
                            vp_isa_name(isa), n, weight_decay, s, i, (double)p[1][i],
                            (double)p[0][i], (double)m[1][i], (double)m[0][i], (double)v[1][i],
                            (double)v[0][i]);
                return 1;
            }
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
            failed = same_bits((vp_isa)isa, n, 0.0) || same_bits((vp_isa)isa, n, 0.01);
    }
    print_message("Adam: %d SIMD set%s against the scalar, lengths 0 to %d, %d steps: %s\n", sets,
                  sets == 1 ? "" : "s", MAX_N, STEPS, failed ? "DIFFERENT" : "same bits");
    assert_false(failed);
}

/* no decay multiplies by exactly 1: p moves by the Adam step alone */
static void no_decay_is_plain_adam(void **state)
{
    (void)state;
    float p = 1.0f, m = 0.0f, v = 0.0f;
    const float g = 0.5f;
    const adam_step step = {1e-3, 0.9, 0.999, 1e-8, 0.0, 1};
    adam_update(kern_for(VP_ISA_SCALAR), &p, &m, &v, &g, 1, &step);
    /* step 1: m / (1 - b1) = g and sqrt(v / (1 - b2)) = |g|, so p moves by lr */
    assert_true(fabsf(p - (1.0f - 1e-3f)) < 1e-6f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_set_gives_the_scalar_bits),
        cmocka_unit_test(no_decay_is_plain_adam),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
