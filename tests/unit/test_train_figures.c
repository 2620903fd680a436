/* The training figures' pieces (issue 14): the colour-map series and its
 * script, the layers' gradient map, the loss curves with a final-loss panel
 * for a sweep along one axis, each drawn by gnuplot; and the figure set's
 * refusals. (`make figures` draws the set itself, about a minute of
 * training: too long for a test under the sanitizers.) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/varprof.h"

static void expect_ok(vp_status status, const vp_error *err)
{
    if (status != VP_OK)
        fail_msg("%s", err->message);
}

static char *script_for(const vp_figure *fig, const char *path)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    vp_error err;
    const vp_plot_target target = {.path = path};
    expect_ok(vp_plot_write_script(out, fig, &target, &err), &err);
    fclose(out);
    return text;
}

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("expected '%s' in the script", part);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Two maps of 3 steps x 2 layers: every cell in the data, the colour scale
   shared (from the smallest cell of either to the largest), a cell at 0
   left out, and gnuplot draws it. */
static void layer_map_is_drawn(void **state)
{
    (void)state;
    const double a[] = {1.0, 2.0, 4.0, 8.0, 0.0, 16.0}, b[] = {0.5, 1.0, 1.0, 1.0, 1.0, 32.0};
    const vp_layer_grad_map maps[] = {{"no warm-up", 3, 2, a}, {"warm-up", 3, 2, b}};
    vp_figure *fig = NULL;
    vp_error err;
    expect_ok(vp_plot_layer_grads(maps, 2, &fig, &err), &err);
    assert_int_equal(fig->n_panels, 2);
    assert_int_equal(fig->panels[1].series[0].n, 6);
    assert_string_equal(fig->panels[0].x_label, ""); /* named once, under the last */
    assert_string_equal(fig->panels[1].x_label, "step");
    char *text = script_for(fig, "map.svg");
    assert_contains(text, "# x y z\n0 0 1\n0 1 2\n1 0 4\n1 1 8\n2 0 NaN\n2 1 16\nEOD");
    assert_contains(text, "with image notitle");
    assert_contains(text, "set logscale cb 10");
    assert_contains(text, "set cbrange [0.5:32]");
    assert_contains(text, "set cblabel 'gradient norm'");
    free(text);
    const char *path = in_scratch("map.svg");
    const vp_plot_target target = {.path = path, .force = 1};
    expect_ok(vp_plot_run(fig, &target, &err), &err);
    assert_true(file_size(path) > 1000);
    vp_figure_free(fig);
    /* and on the text terminal, a sentence where a map cannot be drawn */
    expect_ok(vp_plot_layer_grads(maps, 1, &fig, &err), &err);
    text = script_for(fig, "-");
    assert_contains(text, "a colour map: draw it as svg, png or pdf");
    free(text);
    vp_figure_free(fig);
}

static void colour_maps_are_refused_where_wrong(void **state)
{
    (void)state;
    const double a[] = {1.0};
    const vp_layer_grad_map maps[4] = {
        {"a", 1, 1, a}, {"b", 1, 1, a}, {"c", 1, 1, a}, {"d", 1, 1, a}};
    vp_figure *fig = NULL;
    vp_error err;
    assert_int_equal(vp_plot_layer_grads(maps, 0, &fig, &err), VP_EINVAL);
    assert_int_equal(vp_plot_layer_grads(maps, 4, &fig, &err), VP_EINVAL);
    assert_null(fig);
    fig = vp_figure_alloc("");
    vp_panel *panel;
    vp_series *line, *map;
    expect_ok(vp_figure_add_panel(fig, "", "x", "y", 0, &panel, &err), &err);
    expect_ok(vp_panel_add_series(panel, "line", 0, 1, VP_SERIES_LINE, 2, &line, &err), &err);
    expect_ok(vp_panel_add_series(panel, "map", 0, 1, VP_SERIES_HEATMAP, 1, &map, &err), &err);
    line = &panel->series[0]; /* the second series may have moved the first */
    assert_int_equal(vp_series_add_cell(line, 0, 0, 1, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "not a colour map"));
    assert_int_equal(vp_series_add_point(map, 0, 0, 0, 0, &err), VP_EINVAL);
    assert_int_equal(vp_series_add_cell(map, 0, 0, NAN, &err), VP_EINVAL);
    expect_ok(vp_series_add_cell(map, 0, 0, 1, &err), &err);
    assert_int_equal(vp_series_add_cell(map, 1, 0, 1, &err), VP_EINVAL); /* full */
    vp_figure_free(fig);
    vp_figures_options opts = {.outdir = in_scratch("never"), .extension = "gif"};
    assert_int_equal(vp_training_figures_write(&opts, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "svg, png, pdf"));
    assert_true(file_size(opts.outdir) < 0); /* refused before any folder */
}

/* Tiny runs along the learning rate: a curve per run and, the rate the one
   axis swept, the final loss against it, a line per placement without the
   diverged run; along two axes, the curves alone. */
static void loss_curves_and_final_losses(void **state)
{
    (void)state;
    vp_train_job jobs[4];
    const double lrs[] = {1e-3, 1e30};
    for (size_t i = 0; i < 4; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        vp_config_init(&jobs[i].config, i < 2 ? VP_PRE_NORM : VP_POST_LN, 2);
        jobs[i].config.mlp_only = 1;
        vp_forward_options_init(&jobs[i].network);
        jobs[i].network.width = 16;
        jobs[i].network.vocab = 8;
        jobs[i].network.batch = 2;
        jobs[i].network.tokens = 4;
        jobs[i].network.init = VP_INIT_TORCH;
        vp_train_options_init(&jobs[i].train);
        jobs[i].train.steps = 5;
        jobs[i].train.lr = lrs[i % 2];
    }
    vp_error err;
    expect_ok(vp_train_many(jobs, 4, 2, NULL, &err), &err);
    vp_figure *fig = NULL;
    expect_ok(vp_plot_training(jobs, 4, &fig, &err), &err);
    assert_int_equal(fig->n_panels, 2);
    assert_int_equal(fig->panels[0].n_series, 4);
    assert_non_null(strstr(fig->panels[0].series[1].label, "(diverged at 1)"));
    assert_int_equal(fig->panels[1].n_series, 2);    /* a line per placement */
    assert_int_equal(fig->panels[1].series[0].n, 1); /* the diverged run left out */
    assert_true(fig->panels[1].flags & VP_AXIS_LOG_X);
    assert_true(fig->panels[1].flags & VP_AXIS_X_SWEPT); /* a tic at each rate */
    const char *path = in_scratch("curves.svg");
    const vp_plot_target target = {.path = path, .force = 1};
    expect_ok(vp_plot_run(fig, &target, &err), &err);
    assert_true(file_size(path) > 1000);
    vp_figure_free(fig);
    jobs[3].config.layers = 3; /* two axes differ now: no final-loss panel */
    expect_ok(vp_plot_training(jobs, 4, &fig, &err), &err);
    assert_int_equal(fig->n_panels, 1);
    vp_figure_free(fig);
    for (size_t i = 0; i < 4; i++)
        vp_train_result_free(jobs[i].result);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layer_map_is_drawn),
        cmocka_unit_test(colour_maps_are_refused_where_wrong),
        cmocka_unit_test(loss_curves_and_final_losses),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, test_scratch_setup, test_scratch_teardown);
}
