/* Learned and rotary positions matched to PyTorch (issue 15): four tiny
 * pre-norm networks of tests/data/gen_positions_reference.py, each written
 * with its own PyTorch implementation (GPT-2's wpe; Hugging Face Llama's
 * rotate-half RoPE, after QK-norm in one case and without it in another;
 * widths 32 and 64, 13 tokens a sequence), give on every instruction set
 * the per-sub-block stream norms, the loss, every named tensor's gradient
 * norm (--grads-out) and every sub-block's grad_var and weight_grad that
 * PyTorch gives. Besides: a table shorter than the tokens is refused,
 * training updates the learned positions, and bad positions options are
 * usage errors naming the fix. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output_check.h"
#include "run_program.h"
#include "test_filter.h"
#include "torch_case.h"
#include "torch_expected.h"
#include "varprof/isa.h"
#include "varprof/varprof.h"

/* The forward's stream norms against PyTorch in float64 on the same float32
 * weights: 1e-5 relative, the bound. The gradients: the bound
 * test_pytorch_grads.c holds the backward to, also 1e-5 relative. PyTorch's
 * own float32 run moves no figure here by more than 1e-6 from float64
 * (DATA_FLOAT32_NOISE), but the exactly-zero ones below. */
#define STREAM_TOLERANCE 1e-5
#define GRAD_TOLERANCE 1e-5
#define DATA_FLOAT32_NOISE 1e-6

/* A gradient that is zero in exact arithmetic (the keys' bias without
 * QK-norm or rope: softmax ignores a shift shared by every key; PyTorch's
 * float64 gives ~1e-18) is held to this absolute bound instead; PyTorch's
 * own float32 leaves about 7e-10 there. */
#define EXACT_ZERO 1e-15
#define ZERO_TOLERANCE 1e-7

/* Case `name` of positions_expected.csv, its weights
   positions_<name>.safetensors, with the options beyond the file's: the loss, every sub-block's figures
   and every tensor's gradient held to PyTorch on every instruction set. */
static void run_on_every_isa(const char *name, const char *const *options)
{
    char weights[96];
    const char *args[24];
    size_t n = 0;
    static const char *const fixed[] = {"--placement", "pre-norm", "--heads",
                                        "4",           "--loss",   "copy"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        args[n++] = fixed[i];
    for (size_t i = 0; options[i] && n + 1 < sizeof args / sizeof *args; i++)
        args[n++] = options[i];
    args[n] = NULL;
    snprintf(weights, sizeof weights, "positions_%s.safetensors", name);
    const torch_case c = {"positions_expected.csv", name,       weights,
                          "positions_tokens.csv",   args,       STREAM_TOLERANCE,
                          GRAD_TOLERANCE,           EXACT_ZERO, ZERO_TOLERANCE,
                          DATA_FLOAT32_NOISE};
    torch_case_run_every_isa(&c);
}

/* pos_embed.weight in the file makes the positions learned: no option */
static const char *const no_options[] = {NULL};

static void learned_positions(void **state)
{
    (void)state;
    run_on_every_isa("learned_d32", no_options);
    run_on_every_isa("learned_d64", no_options);
}

static void rope_after_qk_norm(void **state)
{
    (void)state;
    static const char *const rope[] = {"--positions", "rope", NULL}; /* theta 10000 */
    run_on_every_isa("rope_d32", rope);
}

static void rope_without_qk_norm(void **state)
{
    (void)state;
    static const char *const rope[] = {"--positions", "rope", "--rope-theta", "500000", NULL};
    run_on_every_isa("rope_d64", rope);
}

/* The file's 16 positions serve 13 tokens; more tokens than that are refused
   naming both numbers. */
static void too_many_tokens_for_the_table(void **state)
{
    (void)state;
    char w[512];
    snprintf(w, sizeof w, "%s", test_data_path("positions_learned_d32.safetensors"));
    const char *args[] = {"--engine", "forward", "--weights", w,    "--placement", "pre-norm",
                          "--heads",  "4",       "--tokens",  "17", NULL};
    program_run run = run_varprof(args);
    assert_int_equal(run.status, 2);
    if (!strstr(run.err, "17") || !strstr(run.err, "16") || !strstr(run.err, "pos_embed")) {
        print_error("the message names not both numbers and the tensor: %s", run.err);
        fail();
    }
    program_run_free(&run);
}

/* Training's Adam takes the learned positions with the other parameters:
   --layer-stats has a row for pos_embed.weight each step, with a gradient
   and an update. */
static void train_updates_learned_positions(void **state)
{
    (void)state;
    char stats[512];
    snprintf(stats, sizeof stats, "%s/positions_layer_stats.csv", test_scratch());
    const char *args[] = {
        "train",   "--block",       "attn-mlp", "--heads",     "4",        "--positions",
        "learned", "--steps",       "3",        "--placement", "pre-norm", "--layers",
        "2",       "--layer-stats", stats,      "--quiet",     NULL};
    program_run run = run_varprof(args);
    if (run.status != 0) {
        print_error("exit %d: %s", run.status, run.err);
        fail();
    }
    program_run_free(&run);
    FILE *f = fopen(stats, "r");
    assert_non_null(f);
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, ",pos_embed.weight,");
        if (!at)
            continue;
        double grad_norm = 0, weight_norm = 0, update_ratio = 0;
        assert_int_equal(sscanf(at + strlen(",pos_embed.weight,"), "%lf,%lf,%lf", &grad_norm,
                                &weight_norm, &update_ratio),
                         3);
        assert_true(grad_norm > 0 && weight_norm > 0 && update_ratio > 0);
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, 3);
}

/* Usage errors name the option and the fix. */
static void positions_usage_errors(void **state)
{
    (void)state;
    static const struct {
        const char *args[12];
        const char *says;
    } cases[] = {
        {{"--engine", "forward", "--rope-theta", "500000", NULL}, "--positions rope"},
        {{"--engine", "forward", "--positions", "rotary", NULL}, "none, learned, rope"},
        {{"--engine", "forward", "--positions", "rope", "--rope-theta", "0", NULL}, "--rope-theta"},
        {{"--engine", "forward", "--positions", "rope", "--width", "60", "--heads", "4", NULL},
         "even"},
        {{"--engine", "forward", "--positions", "rope", "--block", "mlp", NULL}, "attention"},
        {{"--positions", "rope", NULL}, "--engine forward"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        program_run run = run_varprof(cases[i].args);
        if (run.status != 2 || !strstr(run.err, cases[i].says)) {
            print_error("case %zu: exit %d, want 2 and '%s' in: %s", i, run.status, cases[i].says,
                        run.err);
            fail();
        }
        program_run_free(&run);
    }
}

/* The text heading and the JSON say which positions ran; none goes unsaid,
   so that every output of the network without positions stands. */
static void outputs_say_the_positions(void **state)
{
    (void)state;
    static const struct {
        const char *args[16];
        const char *says, *lacks;
    } cases[] = {
        {{"--engine", "forward", "--layers", "1", "--width", "32", "--heads", "4", "--tokens", "9",
          "--positions", "rope", "--rope-theta", "500000", NULL},
         "\npositions: rope, theta 500000\n",
         NULL},
        {{"--engine", "forward", "--layers", "1", "--width", "32", "--heads", "4", "--tokens", "9",
          "--positions", "learned", "--format", "json", NULL},
         "\"positions\":\"learned\"",
         "rope_theta"},
        {{"--engine", "forward", "--layers", "1", "--width", "32", "--heads", "4", "--tokens", "9",
          "--format", "json", NULL},
         "\"qk_norm\":false}",
         "positions"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_output(cases[i].args, cases[i].says, cases[i].lacks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(learned_positions),
        cmocka_unit_test(rope_after_qk_norm),
        cmocka_unit_test(rope_without_qk_norm),
        cmocka_unit_test(too_many_tokens_for_the_table),
        cmocka_unit_test(train_updates_learned_positions),
        cmocka_unit_test(positions_usage_errors),
        cmocka_unit_test(outputs_say_the_positions),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("positions matched to PyTorch", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
