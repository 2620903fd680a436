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

#define SMALL "--engine", "forward", "--block", "mlp", "--layers", "2", "--width", "16", \
              "--vocab", "20", "--tokens", "6", "--threads", "1"

static void bad_input_is_a_usage_error(void **state)
{
    (void)state;
    refused(RUN(SMALL, "--loss", "next"), "--loss applies to the backward pass: add --grad");
    refused(RUN(SMALL, "--grads-out", in_scratch("g.csv")),
            "--grads-out applies to the backward pass: add --grad");
    refused(RUN(SMALL, "--grad", "--loss", "mse"), "--loss: 'mse' is not one of: copy, next, random");
    refused(RUN(SMALL, "--grad", "--loss", "next", "--tokens", "1"), "loss next with 1 token");
    refused(RUN(SMALL, "--grad", "--grads-out", in_scratch("g.csv"), "--layers", "2,3"),
            "--grads-out holds one network's gradients");
    /* the seed's stack has no head: copy needs one, and says which tensor */
    refused(RUN("--engine", "forward", "--weights", test_data_path("seed_stack_pre_norm.safetensors"),
                "--grad"),
            "tensor 'head.weight' is missing: loss copy needs the output head");
    refused(RUN("--engine", "forward", "--weights", test_data_path("seed_stack_pre_norm.safetensors"),
                "--grad", "--loss", "random", "--final-norm", "yes"),
            "the weights file has no final_norm.weight");
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
    program_run run = RUN("--engine", "forward", "--weights", weights, "--token-ids", tokens,
                          "--block", "mlp", "--layers", "24",
                          "--width", "48", "--ffn-mult", "2", "--vocab", "24", "--grad", "--loss",
                          "random", "--grads-out", path, "--format", "csv");
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
    };
    return cmocka_run_group_tests(tests, test_scratch_setup, test_scratch_teardown);
}
