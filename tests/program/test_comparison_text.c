/* The comparison of engines (--engine closed,mc, closed,forward, all) fits
 * 80 columns by default, its tables, titles, verdicts and a sweep's table
 * of tops; --wide gives every column, the closed form's figures beside the
 * sampled ones. */
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

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})
#define MAX_ARGS 24

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

/* A small network, for the forward pass to be quick. */
#define SMALL_NETWORK                                                                              \
    "--width", "32", "--heads", "4", "--vocab", "64", "--batch", "2", "--tokens", "8"

static const char *const comparisons[][MAX_ARGS] = {
    {"--engine", "closed,mc", "--layers", "4", "--width", "64", NULL},
    /* post-ln's variance is exactly 1: its differences run to thousands of
       standard errors, and its share falls to 6e-08 */
    {"--engine", "closed,mc", "--placement", "all", "--layers", "12", "--width", "64", NULL},
    /* a verdict that differs, with its why line */
    {"--engine", "closed,mc", "--placement", "post-ln", "--layers", "32", "--every", "16", NULL},
    {"--engine", "all", "--placement", "all", "--layers", "2", SMALL_NETWORK, "--trials", "64",
     NULL},
    {"--engine", "closed,forward", "--placement", "pre-norm,output-norm", "--layers", "2",
     SMALL_NETWORK, NULL},
    {"--gain", "1,2", "--engine", "closed,mc", "--layers", "2", NULL},
    {"--gain", "1,2", "--engine", "all", "--placement", "deepnorm,sandwich", "--layers", "2",
     SMALL_NETWORK, "--trials", "64", NULL},
};

static size_t count_args(const char *const *args)
{
    size_t n = 0;
    while (args[n])
        n++;
    return n;
}

/* The why line's own lines are indented under it. */
static void a_why_line_breaks_under_itself(void **state)
{
    (void)state;
    program_run run = RUN("--engine", "closed,mc", "--placement", "post-ln", "--layers", "32");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "\n  why: the closed form is the infinite-width limit; at width 512 "
                             "each token's\n    norm divides");
    program_run_free(&run);
}

static void every_line_fits_80_columns(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof comparisons / sizeof *comparisons; i++) {
        program_run run = run_varprof(comparisons[i]);
        assert_int_equal(run.status, 0);
        if (widest_line(run.out) > 80) {
            print_error("comparison %zu: a line of %zu columns:\n%s\n", i, widest_line(run.out),
                        run.out);
            fail();
        }
        program_run_free(&run);
    }
}

/* --wide: the layout as it was, wider than 80 columns, with the same
 * figures the 80 columns show. */
static void wide_gives_every_column(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof comparisons / sizeof *comparisons; i++) {
        const char *args[MAX_ARGS + 1] = {0};
        const size_t n = count_args(comparisons[i]);
        memcpy(args, comparisons[i], n * sizeof *args);
        args[n] = "--wide";
        program_run run = run_varprof(args);
        assert_int_equal(run.status, 0);
        assert_true(widest_line(run.out) > 100);
        program_run_free(&run);
    }
    program_run wide = RUN("--engine", "closed,mc", "--layers", "2", "--wide");
    program_run narrow = RUN("--engine", "closed,mc", "--layers", "2");
    assert_int_equal(wide.status, 0);
    assert_int_equal(narrow.status, 0);
    assert_contains(wide.out, "var closed     sampled   (SE)");
    assert_contains(wide.out, "; (SE): the difference in standard errors\n");
    assert_null(strstr(narrow.out, "var closed"));
    assert_contains(narrow.out, "stream var    (SE)");
    /* the sampled stream variance at sub-block 4, the same in both */
    const char *row = strstr(wide.out, "\n        4  mlp  ");
    assert_non_null(row);
    double closed, sampled;
    assert_int_equal(sscanf(row, "%*u %*s %lf %lf", &closed, &sampled), 2);
    const char *narrow_row = strstr(narrow.out, "\n        4  mlp  ");
    assert_non_null(narrow_row);
    double narrow_sampled;
    assert_int_equal(sscanf(narrow_row, "%*u %*s %lf", &narrow_sampled), 1);
    assert_true(narrow_sampled == sampled);
    program_run_free(&wide);
    program_run_free(&narrow);
}

/* A sweep's verdicts and its table of tops: in 80 columns the verdict starts
 * a line after its point, and the table leaves out the sub-blocks. */
static void a_sweep_fits_and_widens(void **state)
{
    (void)state;
    program_run narrow = RUN("--gain", "1,2", "--engine", "closed,mc", "--layers", "2");
    program_run wide = RUN("--gain", "1,2", "--engine", "closed,mc", "--layers", "2", "--wide");
    assert_int_equal(narrow.status, 0);
    assert_int_equal(wide.status, 0);
    assert_contains(narrow.out, "gain 2, 2 layers:\npre-norm: agrees");
    assert_contains(wide.out, "gain 2, 2 layers: pre-norm: agrees");
    assert_contains(wide.out, "sub-blocks  stream size");
    assert_null(strstr(narrow.out, "sub-blocks  stream size"));
    program_run_free(&narrow);
    program_run_free(&wide);
}

/* In 80 columns a top that overflowed says so on a line of its own, under
 * its row; --wide at the row's end. */
static void a_sweeps_overflow_goes_under_its_row(void **state)
{
    (void)state;
    program_run narrow = RUN("--placement", "none", "--gain", "1,100", "--layers", "40");
    program_run wide = RUN("--placement", "none", "--gain", "1,100", "--layers", "40", "--wide");
    assert_int_equal(narrow.status, 0);
    assert_int_equal(wide.status, 0);
    const char *tops = strstr(narrow.out, "\nThe top of each stack:\n");
    assert_non_null(tops);
    assert_true(widest_line(tops) <= 80);
    assert_contains(tops, "%\n  (stream variance overflows at sub-block 78)\n");
    assert_contains(wide.out, "%  (stream variance overflows at sub-block 78)\n");
    program_run_free(&narrow);
    program_run_free(&wide);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_line_fits_80_columns),
        cmocka_unit_test(wide_gives_every_column),
        cmocka_unit_test(a_sweep_fits_and_widens),
        cmocka_unit_test(a_why_line_breaks_under_itself),
        cmocka_unit_test(a_sweeps_overflow_goes_under_its_row),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
