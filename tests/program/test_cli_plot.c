/* Figures from the command line: --plot to files and the terminal,
 * --plot-script, the figure set, and what happens without gnuplot. */
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

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void assert_starts_with_file(const char *path, const char *magic, size_t length)
{
    char head[16] = {0};
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(head, 1, length, f), length);
    fclose(f);
    assert_memory_equal(head, magic, length);
}

static void terminal_plot_has_its_axes(void **state)
{
    (void)state;
    /* the plot takes the terminal's width; at 80 gnuplot drops the stream
       panel's 85-character title */
    setenv("COLUMNS", "120", 1);
    program_run run = RUN("--placement", "all", "--plot", "-");
    unsetenv("COLUMNS");
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "layer (attention at k - 1/2, MLP at k)"));
    assert_non_null(strstr(run.out, "stream size"));
    assert_non_null(strstr(run.out, "update ratio"));
    assert_non_null(strstr(run.out, "embedding share"));
    assert_non_null(strstr(run.out, "Post-LN"));
    assert_non_null(strstr(run.out, "Output norm"));
    assert_null(strstr(run.out, "The top of each stack")); /* only the plot was asked for */
    program_run_free(&run);
}

static void model_figure_in_each_format(void **state)
{
    (void)state;
    const char *svg = in_scratch("gemma.svg"), *png = in_scratch("gemma.png"),
               *pdf = in_scratch("gemma.pdf");
    program_run run = RUN("--model", "gemma-2-27b", "--plot", svg);
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    assert_starts_with_file(svg, "<?xml", 5);
    run = RUN("--model", "gemma-2-27b", "--plot", png);
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    assert_starts_with_file(png, "\x89PNG\r\n\x1a\n", 8);
    assert_true(file_size(png) > 1000);
    run = RUN("--model", "gemma-2-27b", "--plot", pdf);
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    assert_starts_with_file(pdf, "%PDF-", 5);
    /* an existing figure is kept without --force */
    run = RUN("--model", "gemma-2-27b", "--plot", svg);
    assert_int_equal(run.status, 1);
    assert_non_null(strstr(run.err, "--force"));
    program_run_free(&run);
}

static void plot_script_reruns_under_gnuplot(void **state)
{
    (void)state;
    const char *svg = in_scratch("fig.svg"), *script = in_scratch("fig.gp");
    program_run run = RUN("--placement", "pre-norm,post-ln", "--plot", svg, "--plot-script", script,
                          "--quantity", "share");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    long first = file_size(svg);
    assert_true(first > 0);
    assert_int_equal(unlink(svg), 0);
    char command[1200];
    snprintf(command, sizeof command, "cd '%s' && gnuplot fig.gp", test_scratch());
    assert_int_equal(system(command), 0);
    /* the same figure; only its <title> is varprof's, set after gnuplot drew it:
       "varprof_figure" in the rerun, what was computed in the first */
    const char *title = "embedding share: 32 layers, gain 1, closed form";
    assert_int_equal(file_size(svg), first - (long)strlen(title) + (long)strlen("varprof_figure"));
}

static void bad_plot_requests(void **state)
{
    (void)state;
    program_run run = RUN("--plot", in_scratch("fig.txt"));
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, ".txt"));
    program_run_free(&run);
    run = RUN("--plot-script", in_scratch("x.gp"));
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "--plot"));
    program_run_free(&run);
    run = RUN("--plot", "-", "--quantity", "size");
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "'size'"));
    program_run_free(&run);
    run = RUN("--plot", "evil\nname.svg");
    assert_int_equal(run.status, 2);
    program_run_free(&run);
}

static void missing_gnuplot_still_writes_the_output(void **state)
{
    (void)state;
    const char *csv = in_scratch("kept.csv"), *svg = in_scratch("never.svg");
    setenv("VARPROF_GNUPLOT", "/nonexistent/gnuplot", 1);
    program_run run = RUN("--format", "csv", "--output", csv, "--plot", svg);
    unsetenv("VARPROF_GNUPLOT");
    assert_int_equal(run.status, 1);
    assert_non_null(strstr(run.err, "gnuplot-nox"));
    assert_true(file_size(csv) > 100);
    assert_int_equal(file_size(svg), -1);
    program_run_free(&run);
}

static void figure_set_is_regenerated(void **state)
{
    (void)state;
    const char *dir = in_scratch("figures");
    program_run run = RUN("figures", "--outdir", dir);
    assert_int_equal(run.status, 0);
    const char *names[] = {"stream-gain1",  "stream-gain2",       "share",
                           "update",        "gain-sweep",         "depth-sweep",
                           "mc-comparison", "forward-comparison", "gradient"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.svg", dir, names[i]);
        assert_true(file_size(path) > 1000);
        assert_non_null(strstr(run.out, names[i]));
    }
    program_run_free(&run);
    run = RUN("figures", "--format", "gif");
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "svg, png, pdf"));
    program_run_free(&run);
}

/* Plots that once failed: --force without --output, a thousand-layer Post-LN
 * whose shares underflow, a gain of 0 that leaves a log panel empty, and an
 * output folder whose name gnuplot must never see. */
static void awkward_plots(void **state)
{
    (void)state;
    const char *svg = in_scratch("again.svg");
    program_run run = RUN("--plot", svg);
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    run = RUN("--plot", svg, "--force");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    run = RUN("--placement", "post-ln", "--layers", "1100", "--plot", in_scratch("deep.svg"));
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    run = RUN("--gain", "0", "--plot", in_scratch("flat.svg"));
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    const char *evil = in_scratch("x`touch PWNED`");
    run = RUN("figures", "--outdir", evil);
    assert_int_equal(run.status, 2);
    assert_int_equal(file_size(evil), -1);
    program_run_free(&run);
}

static int file_contains(const char *path, const char *text)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}

static void plot_style_options_reach_the_script(void **state)
{
    (void)state;
    const char *pdf = in_scratch("styled.pdf"), *script = in_scratch("styled.gp");
    program_run run = RUN("--placement", "pre-norm,parallel", "--plot", pdf, "--plot-script",
                          script, "--size", "4.5,3", "--font-size", "10", "--x", "sub-block");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    assert_true(file_contains(script, "set terminal pdfcairo size 4.5in,3in font 'sans,10'"));
    assert_true(file_contains(script, "sub-block (2 per layer, parallel 1"));
    assert_true(file_contains(script, "title 'Parallel' noenhanced"));
    assert_starts_with_file(pdf, "%PDF-", 5);
    /* the default: layers, so that parallel and pre-norm meet at equal depth */
    const char *png = in_scratch("layers.png"), *png_script = in_scratch("layers.gp");
    run = RUN("--placement", "pre-norm,parallel", "--plot", png, "--plot-script", png_script,
              "--size", "800,500");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    assert_true(file_contains(png_script, "set terminal pngcairo size 800,500 font 'sans,9'"));
    assert_true(file_contains(png_script, "layer (attention at k - 1/2, MLP at k)"));
}

/* BAD INPUT rows: --size, --font-size and --x out of range, or without --plot. */
static void bad_plot_style_is_refused(void **state)
{
    (void)state;
    const char *svg = in_scratch("never-styled.svg");
    struct {
        const char *option, *value, *plot, *says;
    } cases[] = {
        {"--size", "0.5,3", svg, "1 to 50 inches"},
        {"--size", "60,3", svg, "1 to 50 inches"},
        {"--size", "5", svg, "W,H"},
        {"--size", "5,3,1", svg, "W,H"},
        {"--size", "5x3", svg, "W,H"},
        {"--size", "5.5,3.4", in_scratch("never.png"), "100 to 10000 pixels"},
        {"--font-size", "4", svg, "5 to 48"},
        {"--font-size", "big", svg, "5 to 48"},
        {"--x", "token", svg, "layer, sub-block"},
        {"--size", "5,3", NULL, "--plot"},
        {"--x", "layer", NULL, "--plot"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        program_run run = cases[i].plot
                              ? RUN(cases[i].option, cases[i].value, "--plot", cases[i].plot)
                              : RUN(cases[i].option, cases[i].value);
        if (run.status != 2 || !strstr(run.err, cases[i].says) ||
            !strstr(run.err, "Try 'varprof --help'.")) {
            fprintf(stderr, "%s %s: status %d, said: %s\n", cases[i].option, cases[i].value,
                    run.status, run.err);
            fail();
        }
        program_run_free(&run);
    }
    assert_int_equal(file_size(svg), -1);
    program_run run = RUN("figures", "--outdir", in_scratch("never"), "--size", "1,200");
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "1 to 50 inches"));
    program_run_free(&run);
    assert_int_equal(file_size(in_scratch("never")), -1);
}

static void figures_write_every_script(void **state)
{
    (void)state;
    const char *dir = in_scratch("fig-pdf"), *scripts = in_scratch("fig-scripts");
    program_run run = RUN("figures", "--outdir", dir, "--format", "pdf", "--plot-script", scripts,
                          "--font-size", "10");
    assert_int_equal(run.status, 0);
    const char *names[] = {"stream-gain1",  "stream-gain2",       "share",
                           "update",        "gain-sweep",         "depth-sweep",
                           "mc-comparison", "forward-comparison", "gradient"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.gp", scripts, names[i]);
        assert_true(file_contains(path, "font 'sans,10'"));
        assert_non_null(strstr(run.out, path));
    }
    program_run_free(&run);
    /* a script reruns alone, redrawing its figure */
    char command[1200];
    snprintf(command, sizeof command, "cd '%s' && gnuplot fig-scripts/share.gp", test_scratch());
    char share[600];
    snprintf(share, sizeof share, "%s/share.pdf", dir);
    assert_int_equal(unlink(share), 0);
    assert_int_equal(system(command), 0);
    assert_starts_with_file(share, "%PDF-", 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(terminal_plot_has_its_axes),
        cmocka_unit_test(model_figure_in_each_format),
        cmocka_unit_test(plot_script_reruns_under_gnuplot),
        cmocka_unit_test(bad_plot_requests),
        cmocka_unit_test(missing_gnuplot_still_writes_the_output),
        cmocka_unit_test(figure_set_is_regenerated),
        cmocka_unit_test(awkward_plots),
        cmocka_unit_test(plot_style_options_reach_the_script),
        cmocka_unit_test(bad_plot_style_is_refused),
        cmocka_unit_test(figures_write_every_script),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("figures from the command line", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
