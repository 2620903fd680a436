/* The backward half in the comparisons: vp_compare counts the gradient
 * figures where both profiles have them (the program's tables of them are
 * tests/program/test_cli_grad_comparison.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/varprof.h"

static vp_profile *closed_of(const vp_config *cfg)
{
    vp_profile *p = NULL;
    vp_error err;
    assert_int_equal(vp_closed_profile(cfg, &p, &err), VP_OK);
    return p;
}

static vp_profile *mc_of(const vp_config *cfg)
{
    vp_mc_options o;
    vp_mc_options_init(&o);
    o.method = VP_MC_FULL;
    o.width = 128;
    o.trials = 400;
    o.threads = 1;
    vp_profile *p = NULL;
    vp_error err;
    if (vp_mc_profile(cfg, &o, &p, &err) != VP_OK)
        fail_msg("%s", err.message);
    return p;
}

/* Four MLP-only pre-norm layers: rows 0..4. Without the backward half the
 * comparison holds the forward half's three figures (two at sub-block 0);
 * with it, the gradient variance at every row and the weight gradient at
 * every branch row besides: 14 + 5 + 4 = 23. One side without it leaves
 * the gradients out. */
static void compare_counts_the_gradients_where_both_have_them(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 4);
    cfg.mlp_only = 1;
    vp_profile *closed = closed_of(&cfg), *mc = mc_of(&cfg);
    vp_comparison cmp;
    assert_int_equal(vp_compare(closed, mc, 3.0, 1e-4, &cmp), VP_OK);
    assert_int_equal(cmp.checked, 14);
    vp_profile_free(closed);
    vp_profile_free(mc);

    cfg.grad = 1;
    closed = closed_of(&cfg);
    mc = mc_of(&cfg);
    assert_true(closed->fields & mc->fields & VP_HAS_GRAD);
    assert_int_equal(vp_compare(closed, mc, 3.0, 1e-4, &cmp), VP_OK);
    assert_int_equal(cmp.checked, 23);
    /* the Bonferroni bound grows with the figures compared */
    assert_true(cmp.family_se > 3.0);

    cfg.grad = 0;
    vp_profile *closed_forward_only = closed_of(&cfg);
    assert_int_equal(vp_compare(closed_forward_only, mc, 3.0, 1e-4, &cmp), VP_OK);
    assert_int_equal(cmp.checked, 14);
    vp_profile_free(closed_forward_only);
    vp_profile_free(closed);
    vp_profile_free(mc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compare_counts_the_gradients_where_both_have_them),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
