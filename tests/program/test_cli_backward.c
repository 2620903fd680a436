/* The forward engine's backward on the command line: --loss, --grads-out and
 * each refusal of bad input, as a user meets them. */
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

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

/* A usage error (exit 2) whose message holds `says`. */
static void refused(program_run run, const char *says)
{
    if (run.status != 2) {
        print_error("exit %d, want 2; stderr:\n%s\n", run.status, run.err);
        fail();
    }
    assert_contains(run.err, says);
    program_run_free(&run);
}

#define SMALL                                                                                      \
    "--engine", "forward", "--block", "mlp", "--layers", "2", "--width", "16", "--vocab", "20",    \
        "--tokens", "6", "--threads", "1"

static void bad_input_is_a_usage_error(void **state)
{
    (void)state;
    refused(RUN(SMALL, "--loss", "next"), "--loss applies to the backward pass: add --grad");
    refused(RUN(SMALL, "--grads-out", in_scratch("g.csv")),
            "--grads-out applies to the backward pass: add --grad");
    refused(RUN(SMALL, "--grad", "--loss", "mse"),
            "--loss: 'mse' is not one of: copy, next, random");
    refused(RUN(SMALL, "--grad", "--loss", "next", "--tokens", "1"), "loss next with 1 token");
    refused(RUN(SMALL, "--grad", "--grads-out", in_scratch("g.csv"), "--layers", "2,3"),
            "--grads-out holds one network's gradients");
    /* the seed's stack has no head: copy needs one, and says which tensor */
    refused(RUN("--engine", "forward", "--weights",
                test_data_path("seed_stack_pre_norm.safetensors"), "--grad"),
            "tensor 'head.weight' is missing: loss copy needs the output head");
    refused(RUN("--engine", "forward", "--weights",
                test_data_path("seed_stack_pre_norm.safetensors"), "--grad", "--loss", "random",
                "--final-norm", "yes"),
            "the weights file has no final_norm.weight");
    /* a head of 4 rows for a vocabulary of 5 (gen_backward_edge_cases.py) */
    refused(RUN("--engine", "forward", "--weights", test_data_path("grad_bad_head.safetensors"),
                "--grad", "--batch", "1", "--tokens", "3"),
            "tensor 'head.weight' is not [5, 8]: the head must map the width 8 to the "
            "vocabulary of 5");
}

/* A final norm of weight 1e38 on a stream of sigma about 1e-3
 * (gen_backward_edge_cases.py): the forward fits float, the gradient
 * through the norm (1e38 r / sigma) does not. The run says where, on
 * standard error and in the text, and writes no number for the gradients
 * it could not carry. */
static void a_float_gradient_overflow_is_reported_by_sub_block(void **state)
{
    (void)state;
    char weights[512];
    snprintf(weights, sizeof weights, "%s", test_data_path("grad_float_overflow.safetensors"));
    program_run run = RUN("--engine", "forward", "--weights", weights, "--grad", "--loss", "random",
                          "--batch", "2", "--tokens", "4");
    assert_int_equal(run.status, 0);
    assert_contains(run.err, "the gradient overflows float at sub-block 1");
    assert_contains(run.out, "The gradient goes out of range at sub-block 1 (layer 0, mlp)");
    assert_false(strstr(run.out, "inf") || strstr(run.out, "nan"));
    program_run_free(&run);

    run = RUN("--engine", "forward", "--weights", weights, "--grad", "--loss", "random", "--batch",
              "2", "--tokens", "4", "--format", "csv");
    assert_int_equal(run.status, 0);
    /* sub-block 1's row: every figure of the forward, none of the backward */
    const char *row = strstr(run.out, "\nforward,pre-norm,layernorm,1,1,");
    assert_non_null(row);
    const char *grad = strstr(run.out, "grad_var");
    assert_non_null(grad);
    size_t column = 0;
    for (const char *c = run.out; c < grad; c++)
        column += *c == ',';
    const char *cell = row + 1;
    for (size_t i = 0; i < column; i++)
        cell = strchr(cell, ',') + 1;
    assert_true(cell[0] == ',' && cell[1] == ','); /* grad_var and grad_size empty */
    program_run_free(&run);
}

/* The brief's command line, on the seed stack with the random loss (its file
 * has no head): one row per tensor, the embedding first, and a second run
 * refuses to replace the file without --force. */
static void grads_out_writes_every_tensor(void **state)
{
    (void)state;
    char path[512]; /* in_scratch's buffer is reused by the next call */
    snprintf(path, sizeof path, "%s", in_scratch("grads.csv"));
    char weights[512], tokens[512]; /* test_data_path's buffer is reused too */
    snprintf(weights, sizeof weights, "%s", test_data_path("seed_stack_pre_norm.safetensors"));
    snprintf(tokens, sizeof tokens, "%s", test_data_path("seed_tokens.csv"));
    program_run run =
        RUN("--engine", "forward", "--weights", weights, "--token-ids", tokens, "--block", "mlp",
            "--layers", "24", "--width", "48", "--ffn-mult", "2", "--vocab", "24", "--grad",
            "--loss", "random", "--grads-out", path, "--format", "csv");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    size_t rows = 0;
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "name,shape,frobenius,rms\n");
    assert_non_null(fgets(line, sizeof line, f));
    assert_int_equal(strncmp(line, "embed.weight,24x48,", 19), 0);
    for (rows = 1; fgets(line, sizeof line, f); rows++)
        ;
    fclose(f);
    assert_int_equal(rows, 1 + 24 * 6); /* embed, and per layer fc1, fc2, mlp_norm x2 each */
    run = RUN(SMALL, "--grad", "--grads-out", path);
    assert_int_equal(run.status, 1);
    assert_contains(run.err, "--force");
    program_run_free(&run);
    run = RUN(SMALL, "--grad", "--grads-out", path, "--force");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_input_is_a_usage_error),
        cmocka_unit_test(grads_out_writes_every_tensor),
        cmocka_unit_test(a_float_gradient_overflow_is_reported_by_sub_block),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, test_scratch_setup, test_scratch_teardown);
}
