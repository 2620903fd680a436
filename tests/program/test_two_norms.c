/* A parallel block with a norm for each branch (GPT-NeoX's
 * use_parallel_residual, Falcon's new decoder) is, at init, the block with
 * one shared norm: both norms are the identity affine map (weight 1, bias
 * 0), so they compute the same function. Measured here on the forward
 * pass, both inits: every forward figure the same bits, the backward's
 * within rounding; and so the closed form and the Monte Carlo, which model
 * the shared norm, run beside a two-norm forward pass and give what they
 * give beside the shared one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "csv_text.h"
#include "run_program.h"
#include "test_filter.h"

#define ROUNDING 1e-7 /* relative: a float backward summed in another order */

static program_run run_form(const char *form, const char *engine, const char *init)
{
    program_run run = run_varprof((const char *const[]){
        "--engine", engine, "--placement", "parallel", "--residual", form, "--layers", "4",
        "--width", "64", "--heads", "4", "--init", init, "--grad", "--format", "csv", NULL});
    if (run.status != 0)
        fail_msg("--residual %s --engine %s: exit %d: %s", form, engine, run.status, run.err);
    return run;
}

/* column name of every row: the same text (exact) or within ROUNDING */
static void same_column(const char *a, const char *b, const char *name, int exact)
{
    const int col = csv_column_of(a, name);
    assert_true(col >= 0);
    const char *la = strchr(a, '\n'), *lb = strchr(b, '\n');
    for (int row = 1; la && lb && la[1] && lb[1]; row++) {
        const double x = csv_number_at(la + 1, col), y = csv_number_at(lb + 1, col);
        if (!(isnan(x) && isnan(y))) {
            const double diff = fabs(x - y) / (fabs(y) > 0 ? fabs(y) : 1.0);
            if (exact ? x != y : !(diff <= ROUNDING))
                fail_msg("row %d, %s: two norms %.17g, one shared %.17g", row, name, x, y);
        }
        la = strchr(la + 1, '\n');
        lb = strchr(lb + 1, '\n');
    }
    assert_true(!la == !lb || (la && !la[1]) || (lb && !lb[1]));
}

static void forward_figures_agree(void **state)
{
    (void)state;
    static const char *const forward_columns[] = {"stream_var",    "stream_size",
                                                  "update_ratio",  "embedding_share",
                                                  "update_cosine", "stream_norm"};
    static const char *const backward_columns[] = {"grad_var", "grad_size", "weight_grad"};
    static const char *const inits[] = {"gain", "torch"};
    for (size_t i = 0; i < 2; i++) {
        program_run two = run_form("parallel-two-norms", "forward", inits[i]);
        program_run one = run_form("parallel-shared-norm", "forward", inits[i]);
        for (size_t c = 0; c < sizeof forward_columns / sizeof *forward_columns; c++)
            same_column(two.out, one.out, forward_columns[c], 1);
        for (size_t c = 0; c < sizeof backward_columns / sizeof *backward_columns; c++)
            same_column(two.out, one.out, backward_columns[c], 0);
        program_run_free(&two);
        program_run_free(&one);
    }
}

/* --engine all: the closed form's and the Monte Carlo's rows are the same
   beside either form */
static void closed_and_mc_run_beside_it(void **state)
{
    (void)state;
    program_run two = run_form("parallel-two-norms", "all", "gain");
    program_run one = run_form("parallel-shared-norm", "all", "gain");
    size_t closed = 0;
    for (const char *a = two.out, *b = one.out; a && b; a = strchr(a, '\n'), b = strchr(b, '\n')) {
        a += *a == '\n';
        b += *b == '\n';
        const size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (strncmp(a, "closed,", 7) == 0 || strncmp(a, "mc,", 3) == 0) {
            assert_true(la == lb && strncmp(a, b, la) == 0);
            closed++;
        }
        if (!*a || !*b)
            break;
    }
    assert_true(closed >= 10); /* 5 rows each */
    program_run_free(&two);
    program_run_free(&one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forward_figures_agree),
        cmocka_unit_test(closed_and_mc_run_beside_it),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("a norm for each parallel branch", tests, NULL, NULL);
}
