/* Nothing false on the page (issue 32), read back from the SVG gnuplot
 * writes: tic labels are their tics' values (2e-4 reads 2×10^-4, not 10^-4),
 * a swept axis has a tic at every swept value, coinciding series stay in
 * sight and the legend says so, a title breaks only between words of prose
 * or is left off, and the last bits of a value move no coordinate. --no-title
 * on every figure command is tests/program/test_cli_plot_truth.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/varprof.h"

static void expect_ok(vp_status status, const vp_error *err)
{
    if (status != VP_OK)
        fail_msg("%s", err->message);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb"), *out;
    assert_non_null(f);
    char *text = NULL, buf[65536];
    size_t size = 0, got;
    out = open_memstream(&text, &size);
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, got, out);
    fclose(f);
    fclose(out);
    return text;
}

static char *script_for(const vp_figure *fig, const vp_plot_target *target)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    vp_error err;
    expect_ok(vp_plot_write_script(out, fig, target, &err), &err);
    fclose(out);
    return text;
}

/* The figure drawn as an SVG in the scratch folder, its text. */
static char *drawn(const vp_figure *fig, const char *name)
{
    const vp_plot_target target = {.path = in_scratch(name), .force = 1};
    vp_error err;
    expect_ok(vp_plot_run(fig, &target, &err), &err);
    return slurp(target.path);
}

/* A series of points (x[i], y[i]) in a colour of its own. */
static void add_line(vp_panel *panel, const char *label, int colour, const double *x,
                     const double *y, size_t n)
{
    vp_series *s;
    vp_error err;
    expect_ok(vp_panel_add_series(panel, label, colour, 1, VP_SERIES_LINE, n, &s, &err), &err);
    for (size_t i = 0; i < n; i++)
        expect_ok(vp_series_add_point(s, x[i], y[i], 0, 0, &err), &err);
}

/* ---- reading the SVG back ---- */

typedef struct {
    double at;    /* the tic's pixel: y on the y axis, x on the x axis */
    double value; /* what its label says */
} read_tic;

/* A label's value: "0.003", "10" with a raised "-4", "2×10" with "-4". */
static double label_value(const char *text)
{
    char base[64] = "", raised[64] = "";
    const char *span = strstr(text, "<tspan");
    for (int k = 0; span && k < 2; k++, span = strstr(span + 1, "<tspan")) {
        const char *open = strchr(span, '>'), *close = strstr(span, "</tspan>");
        const int up = strstr(span, "dy=\"-") && strstr(span, "dy=\"-") < open;
        char *into = k == 0 ? base : up ? raised : NULL;
        if (into && close > open)
            snprintf(into, 64, "%.*s", (int)(close - open - 1), open + 1);
    }
    if (!raised[0])
        return strtod(base, NULL);
    const size_t n = strlen(base);
    assert_true(n >= 2 && strcmp(base + n - 2, "10") == 0);
    const char *times = strstr(base, "×");
    const double mantissa = times ? strtod(base, NULL) : 1.0;
    return mantissa * pow(10.0, strtod(raised, NULL));
}

/* The labelled tics of one axis: gnuplot draws each as a short path in the
 * tics' grey, the label's group right after it on the same line. */
static size_t read_tics(const char *svg, int y_axis, read_tic *tics, size_t max)
{
    size_t n = 0;
    const char *mark = "<path stroke='rgb( 68,  68,  68)'  d='M";
    for (const char *p = strstr(svg, mark); p && n < max; p = strstr(p + 1, mark)) {
        double x0, y0, x1, y1;
        int used = 0;
        if (sscanf(p + strlen(mark), "%lf,%lf L%lf,%lf  '/>%n", &x0, &y0, &x1, &y1, &used) != 4 ||
            used == 0)
            continue;
        const char *after = p + strlen(mark) + used;
        if (strncmp(after, "\t<g transform", 13) != 0)
            continue; /* a minor tic: no label */
        if (y_axis ? y0 != y1 : x0 != x1)
            continue;
        const char *text = strstr(after, "<text>");
        assert_non_null(text);
        tics[n++] = (read_tic){y_axis ? y0 : x0, label_value(text)};
    }
    return n;
}

/* The vertices of the first path drawn in a colour, "#rrggbb". */
static size_t path_points(const char *svg, const char *colour, double *px, double *py, size_t max)
{
    unsigned r, g, b;
    assert_int_equal(sscanf(colour, "#%2x%2x%2x", &r, &g, &b), 3);
    char stroke[64];
    snprintf(stroke, sizeof stroke, "<path stroke='rgb(%3u, %3u, %3u)'", r, g, b);
    const char *p = strstr(svg, stroke);
    assert_non_null(p);
    p = strstr(p, "d='M") + 4;
    size_t n = 0;
    int used = 0;
    while (n < max && sscanf(p, "%lf,%lf %n", &px[n], &py[n], &used) == 2) {
        n++;
        p += used;
        if (*p == 'L')
            p++;
    }
    return n;
}

/* Two flat lines at 2.2e-4 and 1.2e-2 span under two decades: tics at 2e-4,
   5e-4, 1e-3, 2e-3, 5e-3 and 1e-2, which `set format y '10^{%L}'` labelled
   10^-4, 10^-4, 10^-3, 10^-3, 10^-3, 10^-2. Each label, read from the SVG,
   must sit where its value lies between the lines. */
static void log_tic_labels_are_their_values(void **state)
{
    (void)state;
    vp_figure *fig = vp_figure_alloc("");
    vp_panel *panel;
    vp_error err;
    expect_ok(vp_figure_add_panel(fig, "", "x", "loss", VP_AXIS_LOG_Y, &panel, &err), &err);
    panel->show_key = 0;
    const double x[] = {0, 1}, low[] = {2.2e-4, 2.2e-4}, high[] = {1.2e-2, 1.2e-2};
    add_line(panel, "low", VP_PRE_NORM, x, low, 2);
    add_line(panel, "high", VP_POST_LN, x, high, 2);
    char *svg = drawn(fig, "tics.svg");
    double px[4], y_low[4], y_high[4];
    assert_int_equal(path_points(svg, vp_plot_colour(VP_PRE_NORM), px, y_low, 4), 2);
    assert_int_equal(path_points(svg, vp_plot_colour(VP_POST_LN), px, y_high, 4), 2);
    read_tic tics[32];
    const size_t n = read_tics(svg, 1, tics, 32);
    assert_int_equal(n, 6);
    size_t other = 0; /* labels that are not decades */
    for (size_t i = 0; i < n; i++) {
        const double v = tics[i].value, share = log(v / 2.2e-4) / log(1.2e-2 / 2.2e-4);
        const double expected = y_low[0] + share * (y_high[0] - y_low[0]);
        if (fabs(expected - tics[i].at) > 0.05)
            fail_msg("the label %g is at y %.2f; its value lies at %.2f", v, tics[i].at, expected);
        other += fabs(log10(v) - round(log10(v))) > 1e-9;
    }
    assert_true(other >= 2);
    assert_non_null(strstr(svg, "2×10"));
    free(svg);
    /* the text plot writes them plainly */
    const vp_plot_target dumb = {.path = "-"};
    char *script = script_for(fig, &dumb);
    assert_non_null(strstr(script, "'2x10^-4' 0.00020000000000000001 0"));
    free(script);
    vp_figure_free(fig);
}

/* train-lr's final loss against learning rates 1e-3, 3e-3 and 1e-2: a
   labelled tic at each, 0.003 among them, where the line's vertex is. */
static void swept_axis_has_a_tic_at_every_value(void **state)
{
    (void)state;
    vp_figure *fig = vp_figure_alloc("");
    vp_panel *panel;
    vp_error err;
    expect_ok(vp_figure_add_panel(fig, "", "learning rate", "final loss",
                                  VP_AXIS_LOG_X | VP_AXIS_LOG_Y | VP_AXIS_X_SWEPT, &panel, &err),
              &err);
    panel->show_key = 0;
    const double lr[] = {1e-3, 3e-3, 1e-2}, loss[] = {2.3e-4, 7.5e-6, 3.1e-7};
    add_line(panel, "Pre-norm", VP_PRE_NORM, lr, loss, 3);
    char *svg = drawn(fig, "swept.svg");
    double px[4], py[4];
    assert_int_equal(path_points(svg, vp_plot_colour(VP_PRE_NORM), px, py, 4), 3);
    read_tic tics[16];
    const size_t n = read_tics(svg, 0, tics, 16);
    for (size_t k = 0; k < 3; k++) {
        size_t found = 0;
        for (size_t i = 0; i < n; i++)
            found += fabs(tics[i].value - lr[k]) < 1e-12 && fabs(tics[i].at - px[k]) < 0.02;
        if (found != 1)
            fail_msg("no tic labelled %g at x %.2f", lr[k], px[k]);
    }
    free(svg);
    vp_figure_free(fig);
}

/* The depth sweep at gain 1, 13 depths: Post-LN lies exactly under
   DeepNorm, pre-norm under sandwich, output norm and parallel. Each group's
   markers take turns, every point marked once; the legend says which lies
   on which. */
static void coinciding_series_take_turns(void **state)
{
    (void)state;
    static const size_t depths[] = {1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
    enum { D = sizeof depths / sizeof *depths, N = VP_PLACEMENT_COUNT * D };
    vp_sweep_top tops[N];
    vp_error err;
    for (size_t i = 0; i < N; i++) {
        vp_config cfg;
        vp_config_init(&cfg, (vp_placement)(i / D), depths[i % D]);
        vp_profile *profile;
        expect_ok(vp_closed_profile(&cfg, &profile, &err), &err);
        tops[i] = (vp_sweep_top){
            .point = {.placement = (vp_placement)(i / D), .gain = 1.0, .layers = depths[i % D]},
            .top = vp_profile_get_top(profile)};
        vp_profile_free(profile);
    }
    vp_figure *fig;
    expect_ok(vp_plot_sweep(tops, N, VP_SWEEP_LAYERS, VP_QUANTITY_STREAM, NULL, &fig, &err), &err);
    const vp_plot_target target = {.path = "depth.svg"};
    char *script = script_for(fig, &target);
    assert_non_null(strstr(script, "title 'DeepNorm (= Post-LN)'"));
    assert_non_null(strstr(script, "title 'Output norm (= Pre-norm)'"));
    assert_non_null(strstr(script, "title 'Post-LN' noenhanced"));
    assert_non_null(strstr(script, "title 'None' noenhanced"));
    /* $d1_1 Post-LN, $d1_5 DeepNorm: every second point, one even, one odd */
    assert_non_null(strstr(script, "$d1_1 using 1:(vp_sig($2,4)) every 2::0 with points"));
    assert_non_null(strstr(script, "$d1_5 using 1:(vp_sig($2,4)) every 2::1 with points"));
    /* pre-norm's four: every fourth, from 0, 1, 2 and 3 */
    for (int i = 0; i < 4; i++) {
        char every[96];
        snprintf(every, sizeof every, "$d1_%d using 1:(vp_sig($2,4)) every 4::%d with points",
                 (int[]){2, 3, 4, 6}[i], i);
        if (!strstr(script, every))
            fail_msg("expected '%s'", every);
    }
    /* a tic every 32 layers, and a minor one at each depth between */
    assert_non_null(strstr(script,
                           "set xtics 32\nunset mxtics\nset xtics add ('' 1 1, '' 2 1, "
                           "'' 4 1, '' 6 1, '' 8 1, '' 12 1, '' 16 1, '' 24 1, '' 48 1)\n"));
    free(script);
    vp_figure_free(fig);
}

/* Two lines that meet in one panel and part in the other share a key that
   says nothing of it; markers still take turns where they meet. */
static void a_shared_key_notes_only_what_holds_in_every_panel(void **state)
{
    (void)state;
    vp_figure *fig = vp_figure_alloc("two panels");
    vp_panel *top, *bottom;
    vp_error err;
    expect_ok(vp_figure_add_panel(fig, "same", "k", "y", 0, &top, &err), &err);
    expect_ok(vp_figure_add_panel(fig, "parted", "k", "y", 0, &bottom, &err), &err);
    bottom->show_key = 0;
    top = &fig->panels[0];
    const double x[] = {0, 1, 2}, a[] = {1, 2, 3}, b[] = {1, 2, 4};
    add_line(top, "A", VP_POST_LN, x, a, 3);
    add_line(top, "B", VP_DEEPNORM, x, a, 3);
    add_line(bottom, "A", VP_POST_LN, x, a, 3);
    add_line(bottom, "B", VP_DEEPNORM, x, b, 3);
    const vp_plot_target target = {.path = "two.svg"};
    char *script = script_for(fig, &target);
    assert_null(strstr(script, "(= A)"));
    assert_non_null(strstr(script, "$d1_2 using 1:(vp_step($2,0.001)) every 2::1 with points"));
    free(script);
    fig->panels[1].series[1].y[2] = 3.0; /* now they meet in both */
    script = script_for(fig, &target);
    assert_non_null(strstr(script, "title 'B (= A)' noenhanced"));
    free(script);
    vp_figure_free(fig);
}

/* A placement's closed form and Monte Carlo nearly meet (mc-comparison):
   the Monte Carlo's markers stand beside the closed form's, not under. */
static void engines_of_one_placement_mark_apart(void **state)
{
    (void)state;
    vp_figure *fig = vp_figure_alloc("");
    vp_panel *panel;
    vp_series *s;
    vp_error err;
    expect_ok(vp_figure_add_panel(fig, "", "k", "y", 0, &panel, &err), &err);
    for (int dash = 1; dash <= 2; dash++) {
        expect_ok(vp_panel_add_series(panel, dash == 1 ? "closed" : "Monte Carlo", VP_PRE_NORM,
                                      dash, VP_SERIES_LINE, 40, &s, &err),
                  &err);
        for (int k = 0; k < 40; k++)
            expect_ok(vp_series_add_point(s, k, sqrt(1.0 + k) * (1.0 + 1e-3 * dash), 0, 0, &err),
                      &err);
    }
    const vp_plot_target target = {.path = "mc.svg"};
    char *script = script_for(fig, &target);
    assert_non_null(strstr(script, "$d1_1 using 1:(vp_step($2,0.001)) every 5::0 with points"));
    assert_non_null(strstr(script, "$d1_2 using 1:(vp_step($2,0.001)) every 5::1 with points"));
    free(script);
    vp_figure_free(fig);
}

/* Whether a word holds a digit or a sign of an expression. */
static int is_expression(const char *word, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strchr("0123456789=+/_^", word[i]) || (n == 1 && word[0] == 'x'))
            return 1;
    return 0;
}

/* Each break of a written title ("'.\"\\n\".'") falls between two words of
   prose or after a clause's comma, semicolon or colon, never inside an
   expression ("2 | x 64", "g = | 0.42"); returns how many breaks. */
static size_t check_breaks(const char *script, const char *title_start)
{
    const char *title = strstr(script, title_start);
    assert_non_null(title);
    const char *end = strstr(title, " noenhanced");
    size_t breaks = 0;
    for (const char *b = strstr(title, "'.\"\\n\".'"); b && b < end;
         b = strstr(b + 1, "'.\"\\n\".'")) {
        const char *before = b, *after = b + 8;
        while (before > title && before[-1] != ' ' && before[-1] != '\'')
            before--;
        size_t n = strcspn(after, " '");
        const size_t m = (size_t)(b - before);
        const int clause = m > 0 && strchr(",;:", before[m - 1]);
        if (!clause && (is_expression(before, m) || is_expression(after, n)))
            fail_msg("a title breaks inside an expression: '%.*s' | '%.*s'", (int)(b - before),
                     before, (int)n, after);
        breaks++;
    }
    return breaks;
}

static void titles_break_between_words_of_prose(void **state)
{
    (void)state;
    static const char *const titles[] = {
        "stream size at the top, gain 1 (None leaves the axis at L = 8; 3.4e+38 at 128)",
        "stream size at the top, 32 layers (None leaves the axis at g = 0.42; 2.4e+39 at 4)",
        "closed form, Monte Carlo, a random network (d 256, 8 heads, 2 x 64 tokens), 32 layers, "
        "gain 1",
        "stream size: 32 layers, gain 1, closed form (off the top: None to 4.29e+09)",
    };
    size_t breaks = 0;
    for (size_t t = 0; t < sizeof titles / sizeof *titles; t++)
        for (double width = 3.0; width <= 6.0; width += 0.5) {
            vp_figure *fig = vp_figure_alloc(titles[t]);
            vp_panel *panel;
            vp_error err;
            expect_ok(vp_figure_add_panel(fig, "a", "x", "y", 0, &panel, &err), &err);
            expect_ok(vp_figure_add_panel(fig, "b", "x", "y", 0, &panel, &err), &err);
            const vp_plot_target target = {.path = "t.pdf", .width = width, .height = 4};
            char *script = script_for(fig, &target);
            breaks += check_breaks(script, "multiplot layout 2,1 title '");
            free(script);
            vp_figure_free(fig);
        }
    assert_true(breaks > 20); /* the narrow ones do break */
}

/* --no-title: nothing drawn above the plot but the shared key; the file
   keeps its own title; stacked panels keep their names. */
static void titles_can_be_left_off(void **state)
{
    (void)state;
    vp_figure *fig = vp_figure_alloc("the figure");
    vp_panel *panel;
    vp_error err;
    expect_ok(vp_figure_add_panel(fig, "the panel", "x", "y", 0, &panel, &err), &err);
    const double x[] = {0, 1}, y[] = {1, 2};
    add_line(panel, "A", VP_PRE_NORM, x, y, 2);
    vp_plot_target target = {.path = in_scratch("bare.svg"), .force = 1, .no_title = 1};
    char *script = script_for(fig, &target);
    assert_non_null(strstr(script, "set title '' noenhanced"));
    assert_null(strstr(script, "'the figure'"));
    free(script);
    expect_ok(vp_plot_run(fig, &target, &err), &err);
    char *svg = slurp(target.path);
    assert_non_null(strstr(svg, "<title>the figure</title>"));
    assert_null(strstr(svg, ">the figure</text>"));
    assert_null(strstr(svg, "the panel"));
    free(svg);
    expect_ok(vp_figure_add_panel(fig, "the second", "x", "y", 0, &panel, &err), &err);
    script = script_for(fig, &target);
    assert_null(strstr(script, "'the figure'"));
    assert_non_null(strstr(script, "set title 'the panel' noenhanced"));
    free(script);
    vp_figure_free(fig);
}

/* 400 values on a log panel of four decades, each of three significant
   digits, and the same moved by 1e-5 of themselves (ten times what the
   instruction sets make of a sum); 400 on a linear one, moved by 1e-4: at
   a thousandth of each axis both figures are the same, byte for byte. */
static vp_figure *noisy_figure(double noise)
{
    vp_figure *fig = vp_figure_alloc("");
    vp_panel *log_panel, *linear;
    vp_error err;
    expect_ok(vp_figure_add_panel(fig, "", "k", "y", VP_AXIS_LOG_Y, &log_panel, &err), &err);
    expect_ok(vp_figure_add_panel(fig, "", "k", "y", 0, &linear, &err), &err);
    enum { N = 400 };
    double x[N], y[N], z[N];
    for (size_t i = 0; i < N; i++) {
        char digits[32];
        snprintf(digits, sizeof digits, "%.3g", pow(10.0, -4.0 * (double)i / N));
        x[i] = (double)i;
        y[i] = strtod(digits, NULL) * (1.0 + (i % 2 ? noise : -noise));
        z[i] = 10.0 * (double)i / N + (i % 2 ? 1e-4 : -1e-4) * (noise > 0);
    }
    add_line(&fig->panels[0], "log", VP_PRE_NORM, x, y, N);
    add_line(&fig->panels[1], "linear", VP_POST_LN, x, z, N);
    return fig;
}

static void last_bits_move_no_coordinate(void **state)
{
    (void)state;
    vp_figure *exact = noisy_figure(0.0), *noisy = noisy_figure(1e-5);
    char *a = drawn(exact, "exact.svg"), *b = drawn(noisy, "noisy.svg");
    assert_true(strlen(a) > 10000);
    assert_string_equal(a, b);
    free(a);
    free(b);
    vp_figure_free(exact);
    vp_figure_free(noisy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(log_tic_labels_are_their_values),
        cmocka_unit_test(swept_axis_has_a_tic_at_every_value),
        cmocka_unit_test(coinciding_series_take_turns),
        cmocka_unit_test(a_shared_key_notes_only_what_holds_in_every_panel),
        cmocka_unit_test(engines_of_one_placement_mark_apart),
        cmocka_unit_test(titles_break_between_words_of_prose),
        cmocka_unit_test(titles_can_be_left_off),
        cmocka_unit_test(last_bits_move_no_coordinate),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, test_scratch_setup, test_scratch_teardown);
}
