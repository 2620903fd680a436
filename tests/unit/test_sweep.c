/* Sweeps (issue 12) in the library: vp_sweep's combinations, widths
 * fastest, then layers, gains and placements; the axis a figure takes; the
 * cap on how many. The program's sweeps are tests/program/test_cli_sweep.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/sweep.h"

static void sweep_order_and_cap(void **state)
{
    (void)state;
    const vp_placement placements[] = {VP_POST_LN, VP_PRE_NORM};
    const double gains[] = {0.5, 1, 2};
    const size_t layers[] = {8, 16}, widths[] = {64, 256};
    vp_sweep s = {placements, 2, gains, 3, layers, 2, widths, 2};
    size_t n;
    vp_error err;
    assert_int_equal(vp_sweep_count(&s, &n, &err), VP_OK);
    assert_int_equal(n, 24);
    /* widths fastest, then layers, gains, placements */
    vp_sweep_point p = vp_sweep_point_at(&s, 0);
    assert_true(p.placement == VP_POST_LN && p.gain == 0.5 && p.layers == 8 && p.width == 64);
    p = vp_sweep_point_at(&s, 1);
    assert_true(p.placement == VP_POST_LN && p.gain == 0.5 && p.layers == 8 && p.width == 256);
    p = vp_sweep_point_at(&s, 2);
    assert_true(p.layers == 16 && p.width == 64);
    p = vp_sweep_point_at(&s, 4);
    assert_true(p.gain == 1 && p.layers == 8);
    p = vp_sweep_point_at(&s, 23);
    assert_true(p.placement == VP_PRE_NORM && p.gain == 2 && p.layers == 16 && p.width == 256);
    assert_int_equal(vp_sweep_x_axis(&s), VP_SWEEP_GAIN);
    s.n_gains = 1;
    assert_int_equal(vp_sweep_x_axis(&s), VP_SWEEP_LAYERS);
    s.n_layers = 0;
    assert_int_equal(vp_sweep_count(&s, &n, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "no layers"));
    const double many[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
    s = (vp_sweep){placements, 2, many, 17, layers, 2, widths, 2};
    /* 2 x 17 x 2 x 2 = 136: within; 4 widths make 272 */
    assert_int_equal(vp_sweep_count(&s, &n, &err), VP_OK);
    const size_t four[] = {1, 2, 3, 4};
    s.widths = four;
    s.n_widths = 4;
    assert_int_equal(vp_sweep_count(&s, &n, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "make 272 combinations"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sweep_order_and_cap),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("sweeps", tests, NULL, NULL);
}
