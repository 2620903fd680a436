/* Nothing false on the page (issue 32), through the program: every figure
 * command takes --no-title and leaves the title off, and --no-title without
 * a figure is refused (the figures' other truths, read back from the SVG
 * the library writes, are tests/unit/test_plot_truth.c). */
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

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

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

/* On every figure command; only with --plot where a figure is optional. */
static void no_title_on_every_figure_command(void **state)
{
    (void)state;
    program_run run = RUN("--placement", "pre-norm", "--quantity", "share", "--no-title", "--plot",
                          in_scratch("cli.svg"), "--force");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    char *svg = slurp(in_scratch("cli.svg"));
    assert_null(strstr(svg, "closed form</text>"));
    free(svg);
    run = RUN("--no-title");
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "give --plot too"));
    program_run_free(&run);
    run = RUN("train", "--steps", "2", "--no-title");
    assert_int_equal(run.status, 2);
    program_run_free(&run);
    const char *dir = in_scratch("set"), *scripts = in_scratch("set-scripts");
    run = RUN("figures", "--no-title", "--outdir", dir, "--plot-script", scripts);
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    char path[1200];
    snprintf(path, sizeof path, "%s/gain-sweep.gp", scripts);
    char *text = slurp(path);
    assert_non_null(strstr(text, "set title '' noenhanced"));
    free(text);
    snprintf(path, sizeof path, "%s/gradient.gp", scripts);
    text = slurp(path);
    assert_non_null(strstr(text, "set multiplot layout 2,1 margins"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_title_on_every_figure_command),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, test_scratch_setup, test_scratch_teardown);
}
