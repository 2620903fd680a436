/* --quantity grad and weight-grad through the program: the backward half
 * drawn in the terminal with its labels, and the refusals that keep a figure
 * from being drawn empty (the series and their points are
 * tests/unit/test_plot_grad.c). */
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

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

/* The program: a figure in the terminal with its labels, and each refusal. */
static void test_program(void **state)
{
    (void)state;
    program_run run = RUN("--grad", "--placement", "post-ln,pre-norm", "--quantity", "weight-grad",
                          "--plot", "-");
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "weight gradient: 32 layers, gain 1, closed form"));
    assert_non_null(strstr(run.out, "RMS(dL/do_k) RMS(h_k)"));
    program_run_free(&run);
    run = RUN("--quantity", "grad", "--plot", "-");
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "--quantity grad draws the backward half; add --grad"));
    program_run_free(&run);
    run = RUN("--grad", "--quantity", "grad", "--plot", "-", "--layers", "4,8");
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "the list in --layers makes a sweep"));
    program_run_free(&run);
    run = RUN("--grad", "--quantity", "gradient", "--plot", "-");
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "valid: stream, update, share, all, grad, weight-grad"));
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
