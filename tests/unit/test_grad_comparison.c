/* The backward half in the comparisons: vp_compare counts the gradient
 * figures where both profiles have them, and --engine all puts the Monte
 * Carlo's and the forward pass's gradients beside the closed form's, with
 * the forward verdict's gap in the gradient's size. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/varprof.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

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

static void engine_all_shows_the_sampled_gradients(void **state)
{
    (void)state;
    program_run run =
        RUN("--grad", "--engine", "closed,mc", "--placement", "post-ln", "--block", "mlp",
            "--layers", "3", "--width", "64", "--trials", "500", "--threads", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "post-ln: the backward half, a random loss's gradient at the "
                             "head's input with no\n  final norm");
    assert_contains(run.out, "grad var    (SE)  weight grad    (SE)    grad size");
    /* 4 rows: 3 figures at sub-block 0 and 5 at each branch */
    assert_true(strstr(run.out, "18 figures") || strstr(run.out, "all 3 sub-blocks"));
    program_run_free(&run);
}

/* Post-LN's prediction is flat (1 at every depth); the forward pass's
 * table and verdict show where the network parts from it. */
static void forward_comparison_shows_the_gradient_size(void **state)
{
    (void)state;
    program_run run = RUN("--grad", "--engine", "closed,forward", "--placement", "post-ln",
                          "--block", "mlp", "--layers", "3", "--width", "32", "--heads", "1",
                          "--batch", "2", "--tokens", "4", "--loss", "random", "--threads", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "post-ln: the forward pass's backward half (loss random");
    assert_contains(run.out, "size pred.   measured     G pred.   measured  weight grad");
    /* Post-LN's prediction is flat above the embedding */
    assert_contains(run.out, "        1  mlp                 1 ");
    assert_contains(run.out, "its gradient's size, by at most");
    program_run_free(&run);

    /* another loss: the prediction's G (a unit gradient's) is not shown */
    run = RUN("--grad", "--engine", "closed,forward", "--placement", "pre-norm", "--block", "mlp",
              "--layers", "2", "--width", "32", "--heads", "1", "--vocab", "16", "--batch", "2",
              "--tokens", "4", "--threads", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "(loss copy = ");
    assert_contains(run.out, "through a final norm");
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compare_counts_the_gradients_where_both_have_them),
        cmocka_unit_test(engine_all_shows_the_sampled_gradients),
        cmocka_unit_test(forward_comparison_shows_the_gradient_size),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
