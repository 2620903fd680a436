/* The chapter's gradient figure ("gradient" in `varprof figures`): drawn
 * with the rest of the set, leaving nothing else behind; its closed-form
 * curves the maths' own figures (varprof-maths(7), GRADIENTS), computed here
 * from the telescoping law, not from the library; its sampled curves over
 * their bands; and the network's the figures its caption quotes.
 *
 * The figure set is written once for the group (about 2 s); every test reads
 * the gradient figure's script, which holds its data inline. */
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
#include "varprof/figures.h"
#include "varprof/varprof.h"

/* The closed form's figures are exact up to a few ulps a sub-block over 64
 * sub-blocks and %.17g printing: 1e-12 relative. */
#define CLOSED_TOLERANCE 1e-12

enum { MOST_POINTS = 128, MOST_SERIES = 8, PANELS = 2 };

/* One datablock of the script: "# x y" or "# x y lo hi" rows. */
typedef struct {
    size_t n, columns;
    double x[MOST_POINTS], y[MOST_POINTS], lo[MOST_POINTS], hi[MOST_POINTS];
} series;

static char *script;                     /* gradient.gp */
static series data[PANELS][MOST_SERIES]; /* $d<panel>_<series> */
static size_t n_series[PANELS];

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    if (!buf)
        abort();
    while ((got = fread(buf + n, 1, cap - n, f)) > 0)
        if ((n += got) == cap && !(buf = realloc(buf, (cap *= 2) + 1)))
            abort();
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Reads every "$dP_S << EOD" block of the script into data[P-1][S-1]. */
static int parse_datablocks(const char *text)
{
    for (const char *at = strstr(text, "\n$d"); at; at = strstr(at + 1, "\n$d")) {
        unsigned panel, index;
        if (sscanf(at, "\n$d%u_%u << EOD", &panel, &index) != 2 || panel < 1 || panel > PANELS ||
            index < 1 || index > MOST_SERIES)
            return 0;
        series *s = &data[panel - 1][index - 1];
        n_series[panel - 1] = index > n_series[panel - 1] ? index : n_series[panel - 1];
        const char *line = strchr(at + 1, '\n') + 1;
        s->columns = strncmp(line, "# x y lo hi", 11) == 0 ? 4 : 2;
        for (line = strchr(line, '\n') + 1; strncmp(line, "EOD", 3) != 0;
             line = strchr(line, '\n') + 1) {
            if (s->n == MOST_POINTS)
                return 0;
            const size_t k = s->n++;
            char row[256]; // one line: sscanf alone would read on into the next
            const size_t len = strcspn(line, "\n");
            if (len >= sizeof row)
                return 0;
            memcpy(row, line, len);
            row[len] = '\0';
            if (sscanf(row, "%lf %lf %lf %lf", &s->x[k], &s->y[k], &s->lo[k], &s->hi[k]) !=
                (int)s->columns)
                return 0;
        }
    }
    return n_series[0] > 0;
}

static int write_the_set(void **state)
{
    test_scratch_setup(state);
    char outdir[600], scripts[600];
    snprintf(outdir, sizeof outdir, "%s", in_scratch("plots"));
    snprintf(scripts, sizeof scripts, "%s", in_scratch("scripts"));
    const vp_figures_options opts = {
        .outdir = outdir, .extension = "svg", .force = 1, .script_dir = scripts};
    vp_error err = {0};
    if (vp_figures_write_with(&opts, &err) != VP_OK) {
        fprintf(stderr, "vp_figures_write_with: %s\n", err.message);
        return -1;
    }
    char path[700];
    snprintf(path, sizeof path, "%s/gradient.gp", scripts);
    script = read_text(path);
    if (!script || !parse_datablocks(script)) {
        fprintf(stderr, "%s: no datablocks read\n", path);
        return -1;
    }
    return 0;
}

static int remove_the_set(void **state)
{
    free(script);
    return test_scratch_teardown(state);
}

static void assert_rel(double got, double want, double tolerance, const char *what, size_t k)
{
    const double diff = fabs(got - want) / fabs(want);
    if (!(diff <= tolerance)) {
        fprintf(stderr, "%s, point %zu: got %.17g, want %.17g, relative difference %.3g > %.3g\n",
                what, k, got, want, diff, tolerance);
        fail();
    }
}

/* Listed last, drawn with the others, and nothing else is left: no
 * temporary file beside a figure, no script but the figures'. */
static void drawn_with_the_set_leaving_nothing_else(void **state)
{
    (void)state;
    size_t n;
    const vp_figure_info *list = vp_figures_list(&n);
    assert_string_equal(list[n - 1].name, "gradient");
    char names[2048];
    assert_int_equal(list_dir(in_scratch("plots"), names, sizeof names), n);
    for (size_t i = 0; i < n; i++) {
        char want[128];
        snprintf(want, sizeof want, "%s.svg ", list[i].name);
        assert_non_null(strstr(names, want));
    }
    assert_int_equal(list_dir(in_scratch("scripts"), names, sizeof names), n);
    assert_int_equal(list_dir(test_scratch(), names, sizeof names), 2); /* plots, scripts */
    char *svg = read_text(in_scratch("plots/gradient.svg"));
    assert_non_null(svg);
    assert_non_null(strstr(svg, "<title>gradients: 32 layers, gain 1, width 256, random loss"));
    assert_non_null(strstr(svg, "Post-LN, forward pass"));
    assert_non_null(strstr(svg, "Pre-norm, Monte Carlo"));
    free(svg);
}

/* Two panels, gradient size over weight gradient, one x axis: six curves
 * above (three engines, two placements), the idealisations' four below. */
static void two_panels_six_curves_and_four(void **state)
{
    (void)state;
    assert_non_null(strstr(script, "set multiplot layout 2,1"));
    assert_non_null(strstr(script, "set title 'gradient size'"));
    assert_non_null(strstr(script, "set title 'weight gradient'"));
    assert_non_null(strstr(script, "set ylabel 'sqrt(G_k/G_K)'"));
    assert_int_equal(n_series[0], 6);
    assert_int_equal(n_series[1], 4);
    /* pre-norm, then Post-LN; closed form, Monte Carlo, forward pass */
    assert_non_null(strstr(script, "title 'Pre-norm, closed form'"));
    assert_non_null(strstr(script, "title 'Post-LN, forward pass'"));
    for (size_t s = 0; s < 6; s++)
        assert_int_equal(data[0][s].n, 65); /* sub-blocks 0 .. 64 */
    for (size_t s = 0; s < 4; s++)
        assert_int_equal(data[1][s].n, 64); /* branches 1 .. 64 */
}

/* Pre-norm telescopes: G_k v_k is the same at every depth, v_k = 1 + k at
 * gain 1, so the gradient's size is sqrt(65 / (1 + k)), sqrt(65) = 8.06 at
 * the embedding, and weight_grad_k = sqrt(G_k) = 1/sqrt(1 + k), 1/sqrt(2)
 * at the first branch and 1/sqrt(65) = 0.124 at the last. Post-LN's are 1
 * and 1/sqrt(1 + g^2) = 1/sqrt(2) at every depth. */
static void closed_form_holds_the_maths(void **state)
{
    (void)state;
    const series *pre = &data[0][0], *post = &data[0][3];
    assert_true(pre->x[0] == 0.0);
    assert_rel(pre->y[0], 8.0622577482985491, CLOSED_TOLERANCE, "pre-norm at the embedding", 0);
    for (size_t k = 0; k <= 64; k++) {
        assert_true(pre->x[k] == (double)k / 2.0 && post->x[k] == (double)k / 2.0);
        assert_rel(pre->y[k], sqrt(65.0 / (1.0 + (double)k)), CLOSED_TOLERANCE,
                   "pre-norm's gradient size", k);
        assert_rel(post->y[k], 1.0, CLOSED_TOLERANCE, "Post-LN's gradient size", k);
    }
    const series *pre_w = &data[1][0], *post_w = &data[1][2];
    for (size_t i = 0; i < 64; i++) {
        const double k = (double)(i + 1);
        assert_true(pre_w->x[i] == k / 2.0);
        assert_rel(pre_w->y[i], 1.0 / sqrt(1.0 + k), CLOSED_TOLERANCE, "pre-norm's weight grad",
                   i + 1);
        assert_rel(post_w->y[i], sqrt(0.5), CLOSED_TOLERANCE, "Post-LN's weight grad", i + 1);
    }
    assert_rel(pre_w->y[63], 0.12403473458920847, CLOSED_TOLERANCE, "1/sqrt(65)", 64);
    /* Xiong et al.'s ratio at the top, sqrt(65/2) = 5.70 */
    assert_rel(post_w->y[63] / pre_w->y[63], sqrt(32.5), CLOSED_TOLERANCE, "the top's ratio", 64);
    /* the figures quoted are marked on their panels */
    assert_non_null(strstr(script, "first 8.0622577482985491 to graph 1"));
    assert_non_null(strstr(script, "set label 'sqrt(65) = 8.06'"));
    assert_non_null(strstr(script, "set label '1/sqrt(65) = 0.124'"));
}

/* The Monte Carlo (width 256, 1024 tokens): every point inside its band;
 * pre-norm within 3 % of the closed form at every depth (its finite-width
 * excess is +1.4 % at the embedding); Post-LN's gradient above 1 toward the
 * bottom, its band at the embedding clear of the closed form's 1. */
static void monte_carlo_over_its_bands(void **state)
{
    (void)state;
    const size_t sampled[][2] = {{0, 1}, {0, 4}, {1, 1}, {1, 3}};
    for (size_t i = 0; i < 4; i++) {
        const series *s = &data[sampled[i][0]][sampled[i][1]];
        assert_int_equal(s->columns, 4);
        for (size_t k = 0; k < s->n; k++)
            assert_true(s->lo[k] <= s->y[k] && s->y[k] <= s->hi[k]);
    }
    const series *pre = &data[0][1], *post = &data[0][4];
    for (size_t k = 0; k <= 64; k++)
        assert_rel(pre->y[k], sqrt(65.0 / (1.0 + (double)k)), 0.03, "pre-norm, Monte Carlo", k);
    assert_true(post->lo[0] > 1.0 && post->y[0] < 1.2);
}

/* The network run backward: the caption's figures, to the digits it gives
 * them (they hold on every ISA and thread count: 3.93812 .. 3.93813 at the
 * embedding). Pre-norm's gradient reaches the embedding below the closed
 * form's 8.06 (7.33); Post-LN's falls to 0.48 of the top's at layer 28,
 * then grows to 3.9 at the embedding, where the idealisation stays at 1. */
static void the_network_shows_what_the_caption_says(void **state)
{
    (void)state;
    const series *pre = &data[0][2], *post = &data[0][5];
    assert_int_equal(pre->columns, 2);
    assert_true(fabs(pre->y[0] - 7.33) < 0.005);
    size_t lowest = 0;
    for (size_t k = 1; k < post->n; k++)
        lowest = post->y[k] < post->y[lowest] ? k : lowest;
    assert_true(post->x[lowest] == 28.0);
    assert_true(fabs(post->y[lowest] - 0.48) < 0.005);
    assert_true(fabs(post->y[0] - 3.9) < 0.05);
    size_t n;
    const char *caption = vp_figures_list(&n)[n - 1].caption;
    assert_non_null(strstr(caption, "sqrt(65) = 8.06"));
    assert_non_null(strstr(caption, "1/sqrt(65) = 0.124"));
    assert_non_null(strstr(caption, "0.48 by layer 28"));
    assert_non_null(strstr(caption, "3.9 at the embedding"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drawn_with_the_set_leaving_nothing_else),
        cmocka_unit_test(two_panels_six_curves_and_four),
        cmocka_unit_test(closed_form_holds_the_maths),
        cmocka_unit_test(monte_carlo_over_its_bands),
        cmocka_unit_test(the_network_shows_what_the_caption_says),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("the chapter's gradient figure", tests, write_the_set,
                                       remove_the_set);
}
