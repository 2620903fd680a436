/* The plotter against real gnuplot: every format a valid file, the text plot
 * labelled, hostile names refused or inert, a written script redrawing the
 * same figure, a missing or failing gnuplot reported without leaving files. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/figures.h"
#include "varprof/plot.h"
#include "varprof/varprof.h"

/* ---- helpers ---- */

static vp_profile *closed(vp_placement placement, size_t layers, double gain)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.gain = gain;
    vp_profile *p = NULL;
    assert_int_equal(vp_closed_profile(&cfg, &p, NULL), VP_OK);
    return p;
}

/* Every placement at the given depth, drawn as quantity. */
static vp_figure *all_placements(size_t layers, vp_plot_quantity quantity, const char *title)
{
    vp_profile *ps[VP_PLACEMENT_COUNT];
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
        ps[p] = closed((vp_placement)p, layers, 1.0);
    vp_figure *fig = NULL;
    vp_error err = {0};
    vp_status status = vp_plot_profiles((const vp_profile *const *)ps, VP_PLACEMENT_COUNT, quantity,
                                        title, &fig, &err);
    if (status != VP_OK)
        fprintf(stderr, "vp_plot_profiles: %s\n", err.message);
    assert_int_equal(status, VP_OK);
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
        vp_profile_free(ps[p]);
    return fig;
}

static size_t total_series(const vp_figure *fig)
{
    size_t n = 0;
    for (size_t p = 0; p < fig->n_panels; p++)
        n += fig->panels[p].n_series;
    return n;
}

static char *path_in(const char *dir, const char *name)
{
    static char buf[4][2048];
    static int next;
    char *out = buf[next++ % 4];
    size_t d = strlen(dir), n = strlen(name);
    assert_true(d + n + 2 <= sizeof buf[0]);
    memcpy(out, dir, d);
    out[d] = '/';
    memcpy(out + d + 1, name, n + 1);
    return out;
}

static char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (size)
        *size = n;
    return buf;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static vp_status run(const vp_figure *fig, const char *path, int force, vp_error *err)
{
    vp_plot_target target = {.path = path, .force = force};
    return vp_plot_run(fig, &target, err);
}

static void expect_ok(vp_status status, const vp_error *err)
{
    if (status != VP_OK)
        fprintf(stderr, "expected success, got %s: %s\n", vp_strerror(status), err->message);
    assert_int_equal(status, VP_OK);
}

static void expect_message(const vp_error *err, const char *fragment)
{
    if (!strstr(err->message, fragment)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", err->message, fragment);
        fail();
    }
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static int have_xmllint(void)
{
    return system("command -v xmllint >/dev/null 2>&1") == 0;
}

/* gnuplot's svg terminal draws each plot element as <g id="NAME_plot_N">,
 * NAME the terminal's name, varprof_figure.
 * A curve is three elements: its line, a single <path>; its markers, <use>
 * of a point symbol and no path; and its key entry, the one path of the
 * legend's sample. Checks that, and well-formedness with xmllint if present. */
static void check_svg(const char *path, size_t curves)
{
    char *svg = read_all(path, NULL);
    assert_non_null(svg);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "</svg>"));
    if (have_xmllint()) {
        char command[1200];
        snprintf(command, sizeof command, "xmllint --noout '%s'", path);
        assert_int_equal(system(command), 0);
    }
    size_t groups = 0;
    // in a multiplot the ids run varprof_figure_plot_1a .. 7a, 1b .. 7b, ...
    for (const char *start = svg; (start = strstr(start, "<g id=\"varprof_figure_plot_"));
         start++) {
        groups++;
        // the group's own </g>: groups nest
        const char *end = start + 1;
        for (int depth = 1; depth > 0; end++) {
            const char *open = strstr(end, "<g"), *close = strstr(end, "</g>");
            assert_non_null(close);
            if (open && open < close && (open[2] == ' ' || open[2] == '>')) {
                depth++;
                end = open;
            } else {
                depth--;
                end = close;
            }
        }
        size_t paths = 0, uses = 0;
        for (const char *p = start; (p = strstr(p, "<path")) && p < end; p++)
            paths++;
        for (const char *p = start; (p = strstr(p, "<use")) && p < end; p++)
            uses++;
        /* the line: one path; the markers: none (those above a cut axis are
         * not drawn at all); the key entry: one path, none where the panel
         * shows no key */
        const size_t kind = (groups - 1) % 3;
        const int ok = kind == 0 ? paths == 1 && uses == 0 : kind == 1 ? paths == 0 : paths <= 1;
        if (!ok) {
            fprintf(stderr, "%s: plot element %zu has %zu paths and %zu markers\n", path, groups,
                    paths, uses);
            fail();
        }
    }
    if (groups != 3 * curves) {
        fprintf(stderr, "%s: %zu plot elements drawn, want 3 for each of %zu curves\n", path,
                groups, curves);
        fail();
    }
    free(svg);
}

/* ---- formats ---- */

static void png_svg_pdf_are_valid(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    vp_figure *fig = all_placements(32, VP_QUANTITY_ALL, "every placement");
    vp_error err;
    expect_ok(run(fig, path_in(dir, "fig.png"), 0, &err), &err);
    expect_ok(run(fig, path_in(dir, "fig.svg"), 0, &err), &err);
    expect_ok(run(fig, path_in(dir, "fig.PDF"), 0, &err), &err);

    size_t size;
    char *png = read_all(path_in(dir, "fig.png"), &size);
    assert_non_null(png);
    assert_true(size > 1000);
    assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
    free(png);
    check_svg(path_in(dir, "fig.svg"), total_series(fig));
    assert_int_equal(total_series(fig), 3 * VP_PLACEMENT_COUNT);
    char *pdf = read_all(path_in(dir, "fig.PDF"), &size);
    assert_non_null(pdf);
    assert_memory_equal(pdf, "%PDF-", 5);
    free(pdf);

    // nothing else left behind: no temporary files
    char names[1024];
    assert_int_equal(list_dir(dir, names, sizeof names), 3);
    vp_figure_free(fig);
    test_remove_tree(dir);
}

static void one_quantity_is_one_panel(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    vp_figure *fig = all_placements(8, VP_QUANTITY_SHARE, NULL);
    assert_int_equal(fig->n_panels, 1);
    assert_true(fig->panels[0].flags & VP_AXIS_LOG_Y);
    vp_error err;
    expect_ok(run(fig, path_in(dir, "share.svg"), 0, &err), &err);
    check_svg(path_in(dir, "share.svg"), VP_PLACEMENT_COUNT);
    vp_figure_free(fig);
    test_remove_tree(dir);
}

static void dumb_terminal_has_the_labels(void **state)
{
    (void)state;
    vp_figure *fig = all_placements(32, VP_QUANTITY_ALL, NULL);
    FILE *text = tmpfile();
    assert_non_null(text);
    vp_plot_target target = {.path = "-", .terminal_out = text};
    vp_error err;
    expect_ok(vp_plot_run(fig, &target, &err), &err);
    rewind(text);
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, text);
    buf[n] = '\0';
    fclose(text);
    // the text plot cannot turn the y label on its side: it joins the title
    const char *labels[] = {"layer (attention at k - 1/2, MLP at k)",
                            "[y: sqrt(v_k/v_0)]",
                            "[y: u_k]",
                            "[y: e_k]",
                            "stream size",
                            "update ratio",
                            "embedding share",
                            "Pre-norm",
                            "Post-LN",
                            "Output norm"};
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (!strstr(buf, labels[i])) {
            fprintf(stderr, "text plot lacks '%s':\n%s\n", labels[i], buf);
            fail();
        }
    vp_figure_free(fig);
}

static void bad_extension_is_refused(void **state)
{
    (void)state;
    vp_figure *fig = all_placements(4, VP_QUANTITY_STREAM, NULL);
    vp_error err;
    assert_int_equal(run(fig, "figure.jpg", 0, &err), VP_EINVAL);
    expect_message(&err, "'.jpg'");
    expect_message(&err, ".png, .svg, .pdf");
    assert_int_equal(run(fig, "figure", 0, &err), VP_EINVAL);
    expect_message(&err, "no extension");
    vp_plot_format format;
    assert_int_equal(vp_plot_format_for_path("a/b.Svg", &format, NULL), VP_OK);
    assert_int_equal(format, VP_PLOT_SVG);
    assert_int_equal(vp_plot_format_for_path("-", &format, NULL), VP_OK);
    assert_int_equal(format, VP_PLOT_DUMB);
    vp_figure_free(fig);
}

/* ---- the data ---- */

static void script_carries_exact_data(void **state)
{
    (void)state;
    vp_profile *p = closed(VP_PRE_NORM, 32, 1.0);
    const vp_profile *ps[] = {p};
    vp_figure *fig;
    assert_int_equal(vp_plot_profiles_on(ps, 1, VP_QUANTITY_ALL, VP_X_SUB_BLOCK, NULL, &fig, NULL),
                     VP_OK);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    vp_plot_target target = {.path = "fig.svg"};
    vp_error err;
    expect_ok(vp_plot_write_script(out, fig, &target, &err), &err);
    fclose(out);
    assert_non_null(strstr(text, "set terminal svg size 528,720"));
    assert_non_null(strstr(text, "set output 'fig.svg'\n"));
    assert_non_null(strstr(text, "$d1_1 << EOD\n"));
    assert_non_null(strstr(text, "$d3_1 << EOD\n"));
    assert_non_null(strstr(text, "set logscale y 10"));
    assert_non_null(strstr(text, "title 'Pre-norm' noenhanced"));
    // %.17g: the stream size at the top reads back exactly
    char top[64];
    snprintf(top, sizeof top, "\n64 %.17g\n", vp_profile_stream_size(p, 64));
    assert_non_null(strstr(text, top));
    assert_true(strtod(strstr(text, top) + 4, NULL) == sqrt(65.0));
    // update ratio from k = 1: the second datablock starts at sub-block 1
    assert_non_null(strstr(text, "$d2_1 << EOD\n# x y\n1 "));
    free(text);
    vp_figure_free(fig);
    vp_profile_free(p);
}

static void underflowed_shares_are_left_out(void **state)
{
    (void)state;
    // Post-LN's share is 2^-L: at 2000 layers it underflows double (0 in the row)
    vp_profile *p = closed(VP_POST_LN, 2000, 1.0);
    assert_true(p->rows[p->sub_blocks].embedding_share == 0.0);
    const vp_profile *ps[] = {p};
    vp_figure *fig;
    assert_int_equal(vp_plot_profiles(ps, 1, VP_QUANTITY_SHARE, NULL, &fig, NULL), VP_OK);
    const vp_series *s = &fig->panels[0].series[0];
    assert_true(s->n > 1000 && s->n < p->n_rows);
    for (size_t i = 0; i < s->n; i++)
        assert_true(s->y[i] > 0.0);
    vp_figure_free(fig);
    vp_profile_free(p);
}

static void runaway_curve_cuts_the_linear_axis(void **state)
{
    (void)state;
    vp_figure *fig = all_placements(32, VP_QUANTITY_STREAM, NULL);
    const vp_panel *panel = &fig->panels[0];
    // none reaches 2^32; the others at most sqrt(65)
    assert_true(panel->y_max > 8.0 && panel->y_max < 20.0);
    assert_non_null(strstr(panel->title, "off the top: None to 4.29e+09"));
    vp_figure_free(fig);
}

static void bands_for_sampled_profiles(void **state)
{
    (void)state;
    vp_profile *p = closed(VP_PRE_NORM, 4, 1.0);
    p->engine = VP_ENGINE_MC;
    p->fields |= VP_HAS_BOUNDS;
    for (size_t k = 0; k < p->n_rows; k++) {
        vp_row *r = &p->rows[k];
        r->stream_var_lo = 0.9 * r->stream_var, r->stream_var_hi = 1.1 * r->stream_var;
        r->update_ratio_lo = 0.9 * r->update_ratio, r->update_ratio_hi = 1.1 * r->update_ratio;
        r->embedding_share_lo = 0.9 * r->embedding_share;
        r->embedding_share_hi = 1.1 * r->embedding_share;
    }
    const vp_profile *ps[] = {p};
    vp_figure *fig;
    assert_int_equal(vp_plot_profiles(ps, 1, VP_QUANTITY_ALL, NULL, &fig, NULL), VP_OK);
    assert_int_equal(fig->panels[0].series[0].style, VP_SERIES_BAND);
    // one engine: the legend names the placement alone, the title the engine
    assert_string_equal(fig->panels[0].series[0].label, "Pre-norm");
    assert_non_null(strstr(fig->title, "Monte Carlo"));
    const char *dir = test_scratch_dir();
    vp_error err;
    expect_ok(run(fig, path_in(dir, "band.png"), 0, &err), &err);
    vp_figure_free(fig);
    vp_profile_free(p);
    test_remove_tree(dir);
}

/* ---- safety ---- */

static void hostile_title_with_quotes_is_inert(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char saved[2048];
    assert_non_null(getcwd(saved, sizeof saved));
    // gnuplot runs in the scratch folder: a `touch PWNED` that ran would show there
    assert_int_equal(chdir(dir), 0);
    const char *hostile = "x'; system('touch PWNED'); '";
    vp_figure *fig = all_placements(4, VP_QUANTITY_ALL, hostile);
    vp_error err;
    // as a title, and as the file's name
    const char *name = "x'; system('touch PWNED'); '.svg";
    vp_status status = run(fig, name, 0, &err);
    const int made = exists(name), pwned = exists("PWNED");
    char *svg = read_all(name, NULL);
    assert_int_equal(chdir(saved), 0);
    expect_ok(status, &err);
    assert_true(made);
    assert_false(pwned);
    // the title is shown as typed, quote and all (&apos; or ' in the SVG)
    assert_non_null(svg);
    assert_non_null(strstr(svg, "system("));
    assert_non_null(strstr(svg, "touch PWNED"));
    free(svg);
    vp_figure_free(fig);
    test_remove_tree(dir);
}

static void backquote_and_newline_are_refused(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char bad[3][512];
    snprintf(bad[0], sizeof bad[0], "`touch %s/PWNED`", dir);
    snprintf(bad[1], sizeof bad[1], "a\nsystem('touch %s/PWNED')", dir);
    snprintf(bad[2], sizeof bad[2], "a\rb");
    const char *why[] = {"backquote", "newline", "carriage return"};
    for (int i = 0; i < 3; i++) {
        vp_figure *fig = all_placements(4, VP_QUANTITY_STREAM, bad[i]);
        vp_error err;
        assert_int_equal(run(fig, path_in(dir, "fig.svg"), 0, &err), VP_EINVAL);
        expect_message(&err, why[i]);
        // the script writer refuses before writing a byte
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);
        vp_plot_target target = {.path = "fig.svg"};
        assert_int_equal(vp_plot_write_script(out, fig, &target, &err), VP_EINVAL);
        fclose(out);
        assert_int_equal(size, 0);
        free(text);
        vp_figure_free(fig);
        // the same in a file name
        char name[600];
        snprintf(name, sizeof name, "%s/%s.svg", dir, bad[i]);
        fig = all_placements(4, VP_QUANTITY_STREAM, NULL);
        assert_int_equal(run(fig, name, 0, &err), VP_EINVAL);
        expect_message(&err, why[i]);
        vp_figure_free(fig);
    }
    char names[1024];
    if (list_dir(dir, names, sizeof names) != 0) {
        fprintf(stderr, "left behind: %s\n", names);
        fail();
    }
    test_remove_tree(dir);
}

static void macro_and_backslash_are_shown_as_typed(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    const char *titles[] = {"@macro", "a\\", "\\' @x", "100% {^_&}"};
    for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++) {
        vp_figure *fig = all_placements(4, VP_QUANTITY_STREAM, titles[i]);
        vp_error err;
        expect_ok(run(fig, path_in(dir, "fig.svg"), 1, &err), &err);
        vp_figure_free(fig);
    }
    vp_error err;
    assert_int_equal(vp_plot_check_text("tab\there", "a title", &err), VP_EINVAL);
    expect_message(&err, "tab");
    assert_int_equal(vp_plot_check_text("caf\xc3\xa9 \xe2\x88\x9a", "a title", &err), VP_OK);
    test_remove_tree(dir);
}

/* gnuplot opens `set output '|cmd'` as a pipe: the script names ./|cmd instead. */
static void pipe_output_name_is_a_file(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    vp_figure *fig = all_placements(4, VP_QUANTITY_STREAM, NULL);
    FILE *out = fopen(path_in(dir, "s.gp"), "w");
    assert_non_null(out);
    vp_plot_target target = {.path = "|touch PWNED #.svg"};
    vp_error err;
    expect_ok(vp_plot_write_script(out, fig, &target, &err), &err);
    fclose(out);
    char command[1200];
    snprintf(command, sizeof command, "cd '%s' && gnuplot s.gp 2>/dev/null", dir);
    assert_int_equal(system(command), 0);
    assert_false(exists(path_in(dir, "PWNED")));
    assert_true(exists(path_in(dir, "|touch PWNED #.svg")));
    vp_figure_free(fig);
    test_remove_tree(dir);
}

/* ---- the script alone ---- */

static void rerun_script_gives_the_same_figure(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    vp_figure *fig = all_placements(32, VP_QUANTITY_ALL, "rerun");
    const char *formats[] = {"svg", "png"};
    for (int i = 0; i < 2; i++) {
        char drawn[64], script[64], rerun[64];
        snprintf(drawn, sizeof drawn, "drawn.%s", formats[i]);
        snprintf(script, sizeof script, "script-%s.gp", formats[i]);
        snprintf(rerun, sizeof rerun, "rerun.%s", formats[i]);
        vp_error err;
        expect_ok(run(fig, path_in(dir, drawn), 0, &err), &err);
        FILE *out = fopen(path_in(dir, script), "w");
        assert_non_null(out);
        vp_plot_target target = {.path = path_in(dir, rerun)};
        expect_ok(vp_plot_write_script(out, fig, &target, &err), &err);
        fclose(out);
        // the scratch folder's name is mkdtemp's: no quote in it
        char command[1200];
        snprintf(command, sizeof command, "gnuplot '%s'", path_in(dir, script));
        assert_int_equal(system(command), 0);
        size_t a_size, b_size;
        char *a = read_all(path_in(dir, drawn), &a_size);
        char *b = read_all(path_in(dir, rerun), &b_size);
        assert_non_null(a);
        assert_non_null(b);
        // the same but for the SVG's <title>, which only vp_plot_run sets
        const char *a_rest = strstr(a, "</title>"), *b_rest = strstr(b, "</title>");
        if (i == 0 && a_rest && b_rest) {
            assert_string_equal(a_rest, b_rest);
        } else {
            assert_int_equal(a_size, b_size);
            assert_memory_equal(a, b, a_size);
        }
        free(a);
        free(b);
    }
    vp_figure_free(fig);
    test_remove_tree(dir);
}

/* ---- existing files, a missing or failing gnuplot ---- */

static void existing_file_needs_force(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    const char *target = path_in(dir, "fig.svg");
    FILE *f = fopen(target, "w");
    fputs("keep me", f);
    fclose(f);
    vp_figure *fig = all_placements(4, VP_QUANTITY_STREAM, NULL);
    vp_error err;
    assert_int_equal(run(fig, target, 0, &err), VP_EEXIST);
    expect_message(&err, "fig.svg' already exists");
    assert_null(strstr(err.message, "--")); /* the fact; the program names the option */
    char *kept = read_all(target, NULL);
    assert_string_equal(kept, "keep me");
    free(kept);
    expect_ok(run(fig, target, 1, &err), &err);
    check_svg(target, VP_PLACEMENT_COUNT);
    /* the mode any program's new file gets, as `>` gives */
    const mode_t mask = umask(022);
    umask(mask);
    struct stat st;
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
    char names[1024];
    assert_int_equal(list_dir(dir, names, sizeof names), 1);
    vp_figure_free(fig);
    test_remove_tree(dir);
}

static void missing_gnuplot_names_the_package(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    vp_figure *fig = all_placements(4, VP_QUANTITY_STREAM, NULL);
    setenv("VARPROF_GNUPLOT", "/nonexistent/gnuplot", 1);
    vp_error err;
    assert_int_equal(run(fig, path_in(dir, "fig.svg"), 0, &err), VP_EIO);
    expect_message(&err, "gnuplot is not installed");
    expect_message(&err, "gnuplot-nox");
    setenv("VARPROF_GNUPLOT", "no-such-gnuplot-anywhere", 1);
    assert_int_equal(run(fig, path_in(dir, "fig.svg"), 0, &err), VP_EIO);
    expect_message(&err, "on PATH");
    unsetenv("VARPROF_GNUPLOT");
    char names[1024];
    assert_int_equal(list_dir(dir, names, sizeof names), 0);
    vp_figure_free(fig);
    test_remove_tree(dir);
}

static void write_fake_gnuplot(const char *path, const char *body)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s", body);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
}

static void failing_gnuplot_leaves_nothing(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char bin[1024], out_dir[1024];
    snprintf(bin, sizeof bin, "%s/bin", dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    assert_int_equal(mkdir(bin, 0755), 0);
    assert_int_equal(mkdir(out_dir, 0755), 0);
    // reads the whole script, writes half a figure, complains, fails
    write_fake_gnuplot(path_in(bin, "reads"),
                       "cat >/dev/null\n"
                       "echo 'gnuplot> plot $d1_1'\n"
                       "echo '         line 12: fake gnuplot: something broke' >&2\n"
                       "exit 1\n");
    // quits at once, before the script is through: the pipe breaks
    write_fake_gnuplot(path_in(bin, "quits"), "echo 'fake gnuplot: gave up early' >&2\nexit 3\n");
    // succeeds without drawing
    write_fake_gnuplot(path_in(bin, "idle"), "cat >/dev/null\nexit 0\n");
    vp_figure *small = all_placements(4, VP_QUANTITY_STREAM, NULL);
    vp_figure *large = all_placements(400, VP_QUANTITY_ALL, NULL); // > 64 KiB of script
    const char *target = path_in(out_dir, "fig.png");
    vp_error err;

    setenv("VARPROF_GNUPLOT", path_in(bin, "reads"), 1);
    assert_int_equal(run(small, target, 0, &err), VP_EIO);
    expect_message(&err, "exit status 1");
    expect_message(&err, "something broke");

    setenv("VARPROF_GNUPLOT", path_in(bin, "quits"), 1);
    assert_int_equal(run(large, target, 0, &err), VP_EIO);
    expect_message(&err, "exit status 3");
    expect_message(&err, "gave up early");

    setenv("VARPROF_GNUPLOT", path_in(bin, "idle"), 1);
    assert_int_equal(run(small, target, 0, &err), VP_EIO);
    expect_message(&err, "wrote nothing");
    unsetenv("VARPROF_GNUPLOT");

    // no folder to put the figure in: refused before gnuplot starts
    assert_int_equal(run(small, path_in(dir, "no/such/folder/fig.png"), 0, &err), VP_EIO);
    expect_message(&err, "its folder");

    char names[1024];
    if (list_dir(out_dir, names, sizeof names) != 0) {
        fprintf(stderr, "left behind: %s\n", names);
        fail();
    }
    vp_figure_free(small);
    vp_figure_free(large);
    test_remove_tree(dir);
}

/* ---- the chapter's figures ---- */

static void chapter_figures_are_written(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char outdir[1200];
    snprintf(outdir, sizeof outdir, "%s", path_in(dir, "plots"));
    vp_error err;
    expect_ok(vp_figures_write(outdir, "svg", 1, &err), &err);
    size_t n;
    const vp_figure_info *list = vp_figures_list(&n);
    assert_int_equal(n, 9);
    for (size_t i = 0; i < n; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s.svg", list[i].name);
        if (strcmp(list[i].name, "mc-comparison") == 0 ||
            strcmp(list[i].name, "forward-comparison") == 0 ||
            strcmp(list[i].name, "gradient") == 0) {
            /* (g) to (i): closed and sampled curves, the sampled ones over their bands */
            char *svg = read_all(path_in(outdir, name), NULL);
            assert_non_null(svg);
            assert_non_null(strstr(svg, "Pre-norm, Monte Carlo"));
            assert_non_null(strstr(svg, "Post-LN, closed form"));
            free(svg);
            continue;
        }
        check_svg(path_in(outdir, name), VP_PLACEMENT_COUNT);
    }
    char names[1024];
    assert_int_equal(list_dir(outdir, names, sizeof names), n);
    // regenerating replaces them
    expect_ok(vp_figures_write(outdir, "svg", 1, &err), &err);
    assert_int_equal(vp_figures_write(outdir, "svg", 0, &err), VP_EEXIST);
    expect_message(&err, "already exists");
    assert_int_equal(vp_figures_write(outdir, "gif", 1, &err), VP_EINVAL);
    expect_message(&err, "svg, png, pdf");

    // (c) marks 2^-32, the exponent raised (enhanced text: its own <tspan>)
    char *share = read_all(path_in(outdir, "share.svg"), NULL);
    assert_non_null(strstr(share, ">-32<"));
    assert_non_null(strstr(share, ": Post-LN at 32 layers"));
    free(share);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    expect_ok(vp_figures_write_markdown(out, "plots", "svg", &err), &err);
    fclose(out);
    assert_int_equal(count(text, "\n"), n);
    assert_non_null(strstr(text, "(plots/gain-sweep.svg)"));
    free(text);
    test_remove_tree(dir);
}

/* ---- the model ---- */

static void model_refuses_what_it_cannot_draw(void **state)
{
    (void)state;
    vp_figure *fig = vp_figure_alloc(NULL);
    vp_panel *panel;
    vp_series *s;
    vp_error err;
    for (int i = 0; i < VP_PLOT_MAX_PANELS; i++)
        assert_int_equal(vp_figure_add_panel(fig, "t", "x", "y", VP_AXIS_LOG_Y, &panel, NULL),
                         VP_OK);
    assert_int_equal(vp_figure_add_panel(fig, "t", "x", "y", 0, &panel, &err), VP_EINVAL);
    panel = &fig->panels[0];
    assert_int_equal(
        vp_panel_add_series(panel, "a", VP_PLOT_COLOURS, 1, VP_SERIES_LINE, 2, &s, &err),
        VP_EINVAL);
    assert_int_equal(vp_panel_add_series(panel, "a", 0, 1, VP_SERIES_LINE, 1, &s, &err), VP_OK);
    assert_int_equal(vp_series_add_point(s, 1.0, NAN, 0, 0, &err), VP_EINVAL);
    assert_int_equal(vp_series_add_point(s, 1.0, 2.0, 0, 0, &err), VP_OK);
    assert_int_equal(vp_series_add_point(s, 2.0, 2.0, 0, 0, &err), VP_EINVAL);
    assert_int_equal(vp_panel_add_marker(panel, 0.0, "zero", &err), VP_EINVAL);
    // panels 2 and 3 have nothing to draw: they are drawn with a note saying so
    vp_plot_target target = {.path = "x.svg"};
    char *script = NULL;
    size_t length = 0;
    FILE *memory = open_memstream(&script, &length);
    assert_int_equal(vp_plot_write_script(memory, fig, &target, &err), VP_OK);
    fclose(memory);
    assert_int_equal(count(script, "nothing to draw here"), 2);
    free(script);
    for (int c = 0; c < VP_PLOT_COLOURS; c++)
        for (int d = c + 1; d < VP_PLOT_COLOURS; d++)
            assert_string_not_equal(vp_plot_colour(c), vp_plot_colour(d));
    vp_plot_quantity q;
    assert_int_equal(vp_plot_quantity_parse("update", &q, NULL), VP_OK);
    assert_int_equal(q, VP_QUANTITY_UPDATE);
    assert_int_equal(vp_plot_quantity_parse("volume", &q, &err), VP_EINVAL);
    expect_message(&err, "stream, update, share");
    vp_figure_free(fig);
    vp_figure_free(NULL);
}

/* ---- print-ready style ---- */

/* The script for fig at path with the target's size, in a new string. */
static char *script_for(const vp_figure *fig, const vp_plot_target *target)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    vp_error err;
    expect_ok(vp_plot_write_script(out, fig, target, &err), &err);
    fclose(out);
    return text;
}

static void script_carries_size_and_font(void **state)
{
    (void)state;
    vp_figure *fig = all_placements(32, VP_QUANTITY_SHARE, NULL);
    // the defaults: 5.5 in wide, 9 pt text at that size
    vp_plot_target target = {.path = "fig.pdf"};
    char *text = script_for(fig, &target);
    assert_non_null(strstr(text, "set terminal pdfcairo size 5.5in,3.4in font 'sans,9' "
                                 "fontscale 0.75 enhanced"));
    free(text);
    target = (vp_plot_target){.path = "fig.pdf", .width = 4, .height = 2.5, .font_size = 11};
    text = script_for(fig, &target);
    assert_non_null(strstr(text, "size 4in,2.5in font 'sans,11'"));
    free(text);
    // PNG in pixels at 200 dpi; SVG at 96 px to the inch, its font a CSS family
    target = (vp_plot_target){.path = "fig.png"};
    text = script_for(fig, &target);
    assert_non_null(strstr(text, "set terminal pngcairo size 1100,680 font 'sans,9'"));
    free(text);
    target = (vp_plot_target){.path = "fig.png", .width = 800, .height = 600};
    text = script_for(fig, &target);
    assert_non_null(strstr(text, "size 800,600 "));
    free(text);
    target = (vp_plot_target){.path = "fig.svg"};
    text = script_for(fig, &target);
    assert_non_null(strstr(text, "set terminal svg size 528,326 fixed name 'varprof_figure'"));
    assert_non_null(strstr(text, "font 'sans-serif,12' enhanced"));
    free(text);
    // sizes out of range are refused before a byte is written, naming the range
    vp_error err;
    assert_int_equal(vp_plot_check_size(VP_PLOT_PDF, 0.5, 3, 0, &err), VP_EINVAL);
    expect_message(&err, "1 to 50 inches");
    assert_int_equal(vp_plot_check_size(VP_PLOT_PNG, 20, 3000, 0, &err), VP_EINVAL);
    expect_message(&err, "100 to 10000 pixels");
    assert_int_equal(vp_plot_check_size(VP_PLOT_SVG, 0, 0, 4, &err), VP_EINVAL);
    expect_message(&err, "5 to 48 pt");
    assert_int_equal(vp_plot_check_size(VP_PLOT_PNG, 800, 600, 9, &err), VP_OK);
    char *refused = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&refused, &length);
    target = (vp_plot_target){.path = "fig.svg", .width = 100, .height = 3};
    assert_int_equal(vp_plot_write_script(out, fig, &target, &err), VP_EINVAL);
    fclose(out);
    assert_int_equal(length, 0);
    free(refused);
    vp_figure_free(fig);
}

static void labels_are_enhanced_text(void **state)
{
    (void)state;
    vp_figure *fig = all_placements(32, VP_QUANTITY_ALL, NULL);
    vp_plot_target target = {.path = "fig.svg"};
    char *text = script_for(fig, &target);
    // v_k subscripted; the log axis's decades as powers of ten, each label
    // written out (not %L, the power at or below a tic); titles and keys as typed
    assert_non_null(strstr(text, "set ylabel 'sqrt(v_k/v_0)'\n"));
    assert_non_null(strstr(text, "'10^{-2}' 0.01 0"));
    assert_null(strstr(text, "%L"));
    assert_non_null(strstr(text, "title 'Post-LN' noenhanced"));
    assert_non_null(strstr(text, "set title 'embedding share' noenhanced"));
    assert_null(strstr(text, "noenhanced background")); // the terminal itself is enhanced
    free(text);
    // the text plot keeps plain text: 10^-6, no braces
    target.path = "-";
    text = script_for(fig, &target);
    assert_non_null(strstr(text, "set terminal dumb size 120,90 noenhanced"));
    assert_non_null(strstr(text, "'10^-2' 0.01 0"));
    assert_null(strstr(text, "{"));
    free(text);
    vp_figure_free(fig);
}

static void log_axes_end_near_the_data(void **state)
{
    (void)state;
    // Post-LN's share at 32 layers ends at 2^-32
    vp_profile *p = closed(VP_POST_LN, 32, 1.0);
    const vp_profile *ps[] = {p};
    vp_figure *fig;
    assert_int_equal(vp_plot_profiles(ps, 1, VP_QUANTITY_SHARE, NULL, &fig, NULL), VP_OK);
    vp_plot_target target = {.path = "fig.svg"};
    char *text = script_for(fig, &target);
    const char *range = strstr(text, "set yrange [");
    assert_non_null(range);
    double lo = 0, hi = 0;
    assert_int_equal(sscanf(range, "set yrange [%lf:%lf]", &lo, &hi), 2);
    const double min = p->rows[p->sub_blocks].embedding_share;
    // within a fraction of a decade of the data, not at the next decades
    assert_true(lo < min && lo > min / 10.0);
    assert_true(hi > 1.0 && hi < 10.0);
    free(text);
    vp_figure_free(fig);
    vp_profile_free(p);
    // an axis spanning less than two decades gets tics at 1, 2 and 5, plainly
    p = closed(VP_PRE_NORM, 32, 1.0);
    ps[0] = p;
    assert_int_equal(vp_plot_profiles(ps, 1, VP_QUANTITY_UPDATE, NULL, &fig, NULL), VP_OK);
    text = script_for(fig, &target);
    assert_non_null(
        strstr(text, "set ytics ('0.2' 0.20000000000000001 0, '0.5' 0.5 0, '1' 1 0)\n"));
    free(text);
    vp_figure_free(fig);
    vp_profile_free(p);
}

static void layer_axis_lines_up_parallel(void **state)
{
    (void)state;
    vp_profile *pre = closed(VP_PRE_NORM, 8, 1.0), *par = closed(VP_PARALLEL, 8, 1.0);
    const vp_profile *ps[] = {pre, par};
    vp_figure *fig;
    // the layer axis: both stacks end at 8, pre-norm's attention at a half layer
    assert_int_equal(vp_plot_profiles(ps, 2, VP_QUANTITY_STREAM, NULL, &fig, NULL), VP_OK);
    const vp_series *a = &fig->panels[0].series[0], *b = &fig->panels[0].series[1];
    assert_true(a->x[a->n - 1] == 8.0 && b->x[b->n - 1] == 8.0);
    assert_true(a->x[1] == 0.5 && b->x[1] == 1.0);
    // equal depth, equal stream: the curves meet at every whole layer
    assert_true(fabs(a->y[16] - b->y[8]) < 1e-12);
    assert_non_null(strstr(fig->panels[0].x_label, "layer"));
    assert_string_equal(a->label, "Pre-norm");
    assert_string_equal(b->label, "Parallel");
    vp_figure_free(fig);
    // the sub-block axis: each at its own sub-block, as before
    assert_int_equal(
        vp_plot_profiles_on(ps, 2, VP_QUANTITY_STREAM, VP_X_SUB_BLOCK, NULL, &fig, NULL), VP_OK);
    a = &fig->panels[0].series[0];
    b = &fig->panels[0].series[1];
    assert_true(a->x[a->n - 1] == 16.0 && b->x[b->n - 1] == 8.0);
    assert_non_null(strstr(fig->panels[0].x_label, "sub-block"));
    vp_figure_free(fig);
    vp_plot_x_axis axis;
    vp_error err;
    assert_int_equal(vp_plot_x_axis_parse("sub-block", &axis, NULL), VP_OK);
    assert_int_equal(axis, VP_X_SUB_BLOCK);
    assert_int_equal(vp_plot_x_axis_parse("token", &axis, &err), VP_EINVAL);
    expect_message(&err, "layer, sub-block");
    assert_int_equal(
        vp_plot_profiles_on(ps, 2, VP_QUANTITY_STREAM, (vp_plot_x_axis)7, NULL, &fig, &err),
        VP_EINVAL);
    vp_profile_free(pre);
    vp_profile_free(par);
}

static void title_says_what_was_computed(void **state)
{
    (void)state;
    vp_profile *p = closed(VP_PRE_NORM, 24, 2.0);
    vp_profile *q = closed(VP_POST_LN, 24, 2.0);
    q->engine = VP_ENGINE_MC;
    q->sampling.width = 64;
    const vp_profile *ps[] = {p, q};
    vp_figure *fig;
    assert_int_equal(vp_plot_profiles(ps, 1, VP_QUANTITY_STREAM, NULL, &fig, NULL), VP_OK);
    assert_string_equal(fig->panels[0].title, "stream size: 24 layers, gain 2, closed form");
    vp_figure_free(fig);
    // two engines: each legend entry names its engine, the title both and the width
    assert_int_equal(vp_plot_profiles(ps, 2, VP_QUANTITY_ALL, NULL, &fig, NULL), VP_OK);
    assert_string_equal(fig->title, "24 layers, gain 2, closed form, Monte Carlo (width 64)");
    assert_string_equal(fig->panels[0].series[0].label, "Pre-norm, closed form");
    assert_string_equal(fig->panels[0].series[1].label, "Post-LN, Monte Carlo");
    vp_figure_free(fig);
    // a title given is kept
    assert_int_equal(vp_plot_profiles(ps, 1, VP_QUANTITY_ALL, "mine", &fig, NULL), VP_OK);
    assert_string_equal(fig->title, "mine");
    vp_figure_free(fig);
    vp_profile_free(p);
    vp_profile_free(q);
}

/* The drawn files carry the title: SVG's <title>, PDF's Info /Title. */
static void svg_and_pdf_have_a_title(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    vp_figure *fig = all_placements(8, VP_QUANTITY_ALL, "a <title> & more");
    vp_error err;
    expect_ok(run(fig, path_in(dir, "t.svg"), 0, &err), &err);
    char *svg = read_all(path_in(dir, "t.svg"), NULL);
    assert_non_null(strstr(svg, "<title>a &lt;title&gt; &amp; more</title>"));
    assert_non_null(strstr(svg, "font-family=\"sans-serif\""));
    assert_null(strstr(svg, "font-family=\"sans\""));
    free(svg);
    if (have_xmllint()) {
        char command[1200];
        snprintf(command, sizeof command, "xmllint --noout '%s'", path_in(dir, "t.svg"));
        assert_int_equal(system(command), 0);
    }
    expect_ok(run(fig, path_in(dir, "t.pdf"), 0, &err), &err);
    size_t size;
    char *pdf = read_all(path_in(dir, "t.pdf"), &size);
    // "a <" in UTF-16BE, after its byte-order mark
    const char *title = "/Title <FEFF00610020003C";
    int found = 0;
    for (size_t i = 0; i + strlen(title) < size && !found; i++)
        found = memcmp(pdf + i, title, strlen(title)) == 0;
    assert_true(found);
    free(pdf);
    if (system("command -v pdfinfo >/dev/null 2>&1") == 0) {
        char command[1200];
        snprintf(command, sizeof command,
                 "pdfinfo '%s' 2>&1 | grep -q '^Title: *a <title> & more$'", path_in(dir, "t.pdf"));
        assert_int_equal(system(command), 0);
    }
    vp_figure_free(fig);
    test_remove_tree(dir);
}

static void figure_set_writes_its_scripts(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char outdir[1200], scripts[1200];
    snprintf(outdir, sizeof outdir, "%s", path_in(dir, "plots"));
    snprintf(scripts, sizeof scripts, "%s", path_in(dir, "scripts"));
    vp_figures_options opts = {.outdir = outdir,
                               .extension = "pdf",
                               .force = 1,
                               .width = 4,
                               .height = 3,
                               .font_size = 10,
                               .script_dir = scripts};
    vp_error err;
    expect_ok(vp_figures_write_with(&opts, &err), &err);
    size_t n;
    const vp_figure_info *list = vp_figures_list(&n);
    char names[1024];
    assert_int_equal(list_dir(scripts, names, sizeof names), n);
    for (size_t i = 0; i < n; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s.gp", list[i].name);
        char *text = read_all(path_in(scripts, name), NULL);
        assert_non_null(text);
        // each script draws its own figure at the size asked for
        assert_non_null(strstr(text, "set terminal pdfcairo size 4in,3in font 'sans,10'"));
        snprintf(name, sizeof name, "%s.pdf'", list[i].name);
        assert_non_null(strstr(text, name));
        free(text);
    }
    opts.width = 0.2;
    assert_int_equal(vp_figures_write_with(&opts, &err), VP_EINVAL);
    expect_message(&err, "1 to 50 inches");
    test_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(png_svg_pdf_are_valid),
        cmocka_unit_test(one_quantity_is_one_panel),
        cmocka_unit_test(dumb_terminal_has_the_labels),
        cmocka_unit_test(bad_extension_is_refused),
        cmocka_unit_test(script_carries_exact_data),
        cmocka_unit_test(underflowed_shares_are_left_out),
        cmocka_unit_test(runaway_curve_cuts_the_linear_axis),
        cmocka_unit_test(bands_for_sampled_profiles),
        cmocka_unit_test(hostile_title_with_quotes_is_inert),
        cmocka_unit_test(backquote_and_newline_are_refused),
        cmocka_unit_test(macro_and_backslash_are_shown_as_typed),
        cmocka_unit_test(pipe_output_name_is_a_file),
        cmocka_unit_test(rerun_script_gives_the_same_figure),
        cmocka_unit_test(existing_file_needs_force),
        cmocka_unit_test(missing_gnuplot_names_the_package),
        cmocka_unit_test(failing_gnuplot_leaves_nothing),
        cmocka_unit_test(chapter_figures_are_written),
        cmocka_unit_test(model_refuses_what_it_cannot_draw),
        cmocka_unit_test(script_carries_size_and_font),
        cmocka_unit_test(labels_are_enhanced_text),
        cmocka_unit_test(log_axes_end_near_the_data),
        cmocka_unit_test(layer_axis_lines_up_parallel),
        cmocka_unit_test(title_says_what_was_computed),
        cmocka_unit_test(svg_and_pdf_have_a_title),
        cmocka_unit_test(figure_set_writes_its_scripts),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("plot: figures through gnuplot", tests, NULL, NULL);
}
