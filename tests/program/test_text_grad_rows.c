/* --grad in the text of the sampled engines: the Monte Carlo's and the
 * forward pass's rows carry the gradient's size and the weight gradient in
 * 80 columns, every figure with --wide, and the summary the batch's loss. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

/* The seed's pre-norm stack with its head, on the first batch of its
 * train(): the loss PyTorch gives (gen_torch_grads.py, 3.597547) and the
 * seed prints (3.5975). */
static void forward_rows_and_loss(void **state)
{
    (void)state;
    char weights[512], tokens[512];
    snprintf(weights, sizeof weights, "%s", test_data_path("seed_grads_pre_norm.safetensors"));
    snprintf(tokens, sizeof tokens, "%s", test_data_path("seed_grads_tokens.csv"));
    program_run run =
        RUN("--engine", "forward", "--weights", weights, "--token-ids", tokens, "--grad");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "gradients from the head, no final norm (the weights file's)");
    assert_contains(run.out, "stream size    grad size  weight grad    gain");
    assert_contains(run.out, "  loss              copy, 3.59755 on the batch");
    assert_true(widest_line(run.out) <= 80);
    program_run_free(&run);

    run =
        RUN("--engine", "forward", "--weights", weights, "--token-ids", tokens, "--grad", "--wide");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "meas. gain      grad var    grad size  weight grad");
    program_run_free(&run);
}

static void monte_carlo_rows(void **state)
{
    (void)state;
    program_run run = RUN("--engine", "mc", "--grad", "--layers", "2", "--width", "64", "--trials",
                          "200", "--threads", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "full method, width 64"); /* --grad made full the default */
    assert_contains(run.out, "stream size  grad size    weight grad +- 95%");
    assert_contains(run.out, "  gradient size     ");
    assert_true(widest_line(run.out) <= 80);
    program_run_free(&run);

    run = RUN("--engine", "mc", "--grad", "--layers", "2", "--width", "64", "--trials", "200",
              "--threads", "1", "--wide");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "grad var +- 95%  grad size    weight grad +- 95%");
    program_run_free(&run);

    /* the reduced method keeps no gradient: refused, naming the one that does */
    run = RUN("--engine", "mc", "--grad", "--method", "reduced", "--layers", "2");
    assert_int_equal(run.status, 2);
    assert_contains(run.err, "add --method full");
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forward_rows_and_loss),
        cmocka_unit_test(monte_carlo_rows),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
