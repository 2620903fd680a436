/* The backward half in the program's comparisons: --engine all puts the
 * Monte Carlo's and the forward pass's gradients beside the closed form's,
 * with the forward verdict's gap in the gradient's size (vp_compare's counts
 * are tests/unit/test_grad_comparison.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/varprof.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

static void engine_all_shows_the_sampled_gradients(void **state)
{
    (void)state;
    program_run run =
        RUN("--grad", "--engine", "closed,mc", "--placement", "post-ln", "--block", "mlp",
            "--layers", "3", "--width", "64", "--trials", "500", "--threads", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "post-ln: the backward half, a random loss's gradient at the "
                             "head's input with no\n  final norm");
    assert_contains(run.out, "grad var    (SE)  weight grad    (SE)    grad size");
    /* 4 rows: 3 figures at sub-block 0 and 5 at each branch */
    assert_true(strstr(run.out, "18 figures") || strstr(run.out, "all 3 sub-blocks"));
    program_run_free(&run);
}

/* Post-LN's prediction is flat (1 at every depth); the forward pass's
 * table and verdict show where the network parts from it. */
static void forward_comparison_shows_the_gradient_size(void **state)
{
    (void)state;
    program_run run = RUN("--grad", "--engine", "closed,forward", "--placement", "post-ln",
                          "--block", "mlp", "--layers", "3", "--width", "32", "--heads", "1",
                          "--batch", "2", "--tokens", "4", "--loss", "random", "--threads", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "post-ln: the forward pass's backward half (loss random");
    assert_contains(run.out, "size pred.   measured     G pred.   measured  weight grad");
    /* Post-LN's prediction is flat above the embedding */
    assert_contains(run.out, "        1  mlp                 1 ");
    assert_contains(run.out, "its gradient's size, by at most");
    program_run_free(&run);

    /* another loss: the prediction's G (a unit gradient's) is not shown */
    run = RUN("--grad", "--engine", "closed,forward", "--placement", "pre-norm", "--block", "mlp",
              "--layers", "2", "--width", "32", "--heads", "1", "--vocab", "16", "--batch", "2",
              "--tokens", "4", "--threads", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "(loss copy = ");
    assert_contains(run.out, "through a final norm");
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(engine_all_shows_the_sampled_gradients),
        cmocka_unit_test(forward_comparison_shows_the_gradient_size),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
