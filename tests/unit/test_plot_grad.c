/* --quantity grad and weight-grad: the backward half drawn per sub-block,
 * its series' names and its points the profile's own figures; the program's
 * figure and its refusals are tests/program/test_cli_plot_grad.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/varprof.h"

static vp_profile *closed(vp_placement placement, size_t layers, int grad)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.grad = grad;
    vp_profile *p = NULL;
    vp_error err;
    assert_int_equal(vp_closed_profile(&cfg, &p, &err), VP_OK);
    return p;
}

static void test_names(void **state)
{
    (void)state;
    vp_plot_quantity q;
    vp_error err;
    assert_int_equal(vp_plot_quantity_parse("grad", &q, &err), VP_OK);
    assert_int_equal(q, VP_QUANTITY_GRAD);
    assert_int_equal(vp_plot_quantity_parse("weight-grad", &q, &err), VP_OK);
    assert_int_equal(q, VP_QUANTITY_WEIGHT_GRAD);
    assert_int_equal(vp_plot_quantity_parse("weight_grad", &q, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "grad, weight-grad"));
}

/* The points are the profile's figures exactly, on a log axis against the
 * layer: pre-norm's gradient size from sqrt(65) at layer 0 to 1 at 32, its
 * weight gradient from 1/sqrt(2) at layer 0.5 (sub-block 1) to 1/sqrt(65). */
static void test_points(void **state)
{
    (void)state;
    vp_profile *pre = closed(VP_PRE_NORM, 32, 1), *bare = closed(VP_POST_LN, 32, 0);
    const vp_profile *ps[] = {pre, bare};
    vp_figure *fig;
    vp_error err;
    assert_int_equal(vp_plot_profiles(ps, 2, VP_QUANTITY_GRAD, NULL, &fig, &err), VP_OK);
    assert_int_equal(fig->n_panels, 1);
    const vp_panel *panel = &fig->panels[0];
    assert_true(panel->flags & VP_AXIS_LOG_Y);
    assert_non_null(strstr(panel->title, "gradient size"));
    assert_int_equal(panel->series[0].n, 65);
    assert_true(panel->series[0].x[0] == 0.0 &&
                panel->series[0].y[0] == vp_profile_grad_size(pre, 0));
    assert_true(fabs(panel->series[0].y[0] - sqrt(65.0)) < 1e-14 * sqrt(65.0));
    assert_true(panel->series[0].x[64] == 32.0 && panel->series[0].y[64] == 1.0);
    /* a profile without the backward half draws nothing rather than zeros */
    assert_int_equal(panel->series[1].n, 0);
    vp_figure_free(fig);
    assert_int_equal(vp_plot_profiles(ps, 1, VP_QUANTITY_WEIGHT_GRAD, NULL, &fig, &err), VP_OK);
    const vp_series *s = &fig->panels[0].series[0];
    assert_int_equal(s->n, 64); /* sub-blocks 1..64: the embedding has no branch */
    assert_true(s->x[0] == 0.5 && s->y[0] == pre->rows[1].weight_grad);
    assert_true(fabs(s->y[0] - sqrt(0.5)) < 1e-15);
    assert_true(s->y[63] == pre->rows[64].weight_grad);
    vp_figure_free(fig);
    /* a silent branch under an output norm has an infinite weight gradient:
       left out, not drawn at the top of the axis */
    vp_config cfg;
    vp_config_init(&cfg, VP_OUTPUT_NORM, 2);
    cfg.grad = 1;
    cfg.gain = 0.0;
    vp_profile *silent = NULL;
    assert_int_equal(vp_closed_profile(&cfg, &silent, &err), VP_OK);
    const vp_profile *one[] = {silent};
    assert_int_equal(vp_plot_profiles(one, 1, VP_QUANTITY_WEIGHT_GRAD, NULL, &fig, &err), VP_OK);
    assert_int_equal(fig->panels[0].series[0].n, 0);
    vp_figure_free(fig);
    /* a sweep has tops, not sub-blocks: no gradient figure there */
    vp_sweep_top top = {0};
    assert_int_equal(vp_plot_sweep(&top, 1, VP_SWEEP_LAYERS, VP_QUANTITY_GRAD, NULL, &fig, &err),
                     VP_EINVAL);
    vp_profile_free(silent);
    vp_profile_free(pre);
    vp_profile_free(bare);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_points),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
