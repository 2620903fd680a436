/* Progress: the program's line on standard error (shown with --progress,
 * erased at the end, silenced by --quiet, absent on a pipe by default, and
 * never a byte of standard output); the library's reports are
 * tests/unit/test_progress.c. */
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

/* The line's text ends with its erasure: a carriage return, spaces, and a
 * carriage return. */
static void assert_erased_at_end(const char *err)
{
    size_t n = strlen(err);
    assert_true(n >= 3);
    assert_int_equal(err[n - 1], '\r');
    size_t i = n - 2;
    while (i > 0 && err[i] == ' ')
        i--;
    assert_int_equal(err[i], '\r');
    assert_true(n - 2 - i >= 10); /* as wide as the line it erases */
}

static void program_shows_the_line_only_when_asked(void **state)
{
    (void)state;
    const char *mc[] = {"--engine", "mc", "--layers", "4", "--trials", "5000", NULL};
    program_run plain = run_varprof(mc);
    assert_int_equal(plain.status, 0);
    assert_string_equal(plain.err, ""); /* a pipe: nothing without --progress */

    program_run shown = RUN("--engine", "mc", "--layers", "4", "--trials", "5000", "--progress");
    assert_int_equal(shown.status, 0);
    assert_string_equal(shown.out, plain.out); /* not one byte of the output moves */
    assert_non_null(strstr(shown.err, "\rMonte Carlo, pre-norm:   0 %"));
    assert_non_null(strstr(shown.err, "\rMonte Carlo, pre-norm: 100 %"));
    assert_non_null(strstr(shown.err, "elapsed"));
    assert_null(strchr(shown.err, '\n'));
    assert_erased_at_end(shown.err);

    program_run quiet =
        RUN("--engine", "mc", "--layers", "4", "--trials", "5000", "--progress", "--quiet");
    assert_int_equal(quiet.status, 0);
    assert_string_equal(quiet.out, plain.out);
    assert_string_equal(quiet.err, "");
    program_run_free(&plain);
    program_run_free(&shown);
    program_run_free(&quiet);
}

/* Each engine of each placement has its own line, each erased before the next. */
static void program_labels_each_engine(void **state)
{
    (void)state;
    program_run plain = RUN("--engine", "all", "--placement", "post-ln,sandwich", "--layers", "2",
                            "--width", "32", "--trials", "500");
    program_run shown = RUN("--engine", "all", "--placement", "post-ln,sandwich", "--layers", "2",
                            "--width", "32", "--trials", "500", "--progress");
    assert_int_equal(shown.status, 0);
    assert_string_equal(shown.out, plain.out);
    const char *labels[] = {"Monte Carlo, post-ln: 100 %", "forward pass, post-ln: 100 %",
                            "Monte Carlo, sandwich: 100 %", "forward pass, sandwich: 100 %"};
    for (size_t i = 0; i < 4; i++)
        assert_non_null(strstr(shown.err, labels[i]));
    assert_erased_at_end(shown.err);
    program_run_free(&plain);
    program_run_free(&shown);
}

/* The heading is written before the engine runs: a forward pass that fails
 * in its run (a weights file without sandwich's output norms) has already
 * said what it was computing. */
static void heading_comes_before_the_run(void **state)
{
    (void)state;
    program_run run =
        RUN("--engine", "forward", "--weights", test_data_path("seed_stack_pre_norm.safetensors"),
            "--placement", "sandwich");
    assert_int_equal(run.status, 1);
    assert_non_null(strstr(run.err, "is missing"));
    assert_non_null(strstr(run.out, "varprof " VP_VERSION ": forward pass, sandwich"));
    assert_non_null(strstr(run.out, "weights from file"));
    program_run_free(&run);
}

static void figures_show_the_line(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    program_run run = RUN("figures", "--outdir", dir, "--progress");
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.err, "\rfigures:   0 %"));
    assert_non_null(strstr(run.err, "\rfigures: 100 %"));
    assert_erased_at_end(run.err);
    program_run_free(&run);
    test_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(program_shows_the_line_only_when_asked),
        cmocka_unit_test(program_labels_each_engine),
        cmocka_unit_test(heading_comes_before_the_run),
        cmocka_unit_test(figures_show_the_line),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("the progress line", tests, NULL, NULL);
}
