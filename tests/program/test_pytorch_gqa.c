/* Grouped-query and multi-query attention and heads of their own width
 * matched to PyTorch (issue 15): four tiny pre-norm networks of
 * tests/data/gen_gqa_reference.py, each written with its own PyTorch
 * implementation (transformers' repeat_kv): 8 heads sharing 2 kv heads with
 * QK-norm and rope, 4 heads sharing 1, 4 heads of 16 at width 32 sharing 2
 * with rope, 4 heads of 6 at width 48; 13 tokens a sequence. On every
 * instruction set the per-sub-block stream norms, the loss, every named
 * tensor's gradient norm (--grads-out) and every sub-block's grad_var and
 * weight_grad are PyTorch's within 1e-5 relative. Besides: the figures do
 * not depend on the threads, a file's k that disagrees with --kv-heads is
 * refused, bad --kv-heads and --head-dim are usage errors, training runs
 * the shapes, and the outputs say them. */
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

/* Case `name` of gqa_expected.csv, its weights gqa_<name>.safetensors,
   with the options beyond the file's: the loss, every sub-block's figures
   and every tensor's gradient held to PyTorch on every instruction set. */
static void run_on_every_isa(const char *name, const char *const *options)
{
    char weights[96];
    const char *args[24];
    size_t n = 0;
    static const char *const fixed[] = {"--placement", "pre-norm", "--loss", "copy"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        args[n++] = fixed[i];
    for (size_t i = 0; options[i] && n + 1 < sizeof args / sizeof *args; i++)
        args[n++] = options[i];
    args[n] = NULL;
    snprintf(weights, sizeof weights, "gqa_%s.safetensors", name);
    const torch_case c = {
        "gqa_expected.csv", name,           weights,    "gqa_tokens.csv", args,
        STREAM_TOLERANCE,   GRAD_TOLERANCE, EXACT_ZERO, ZERO_TOLERANCE,   DATA_FLOAT32_NOISE};
    torch_case_run_every_isa(&c);
}

/* The file's QK-norm weights give hd 8, its q rows 8 heads and its k rows
   2 kv heads: nothing but the positions given */
static void grouped_query_from_the_file(void **state)
{
    (void)state;
    static const char *const opts[] = {"--positions", "rope", NULL};
    run_on_every_isa("gqa", opts);
}

/* 4 heads of d / H = 8: k's 8 rows are one kv head */
static void multi_query(void **state)
{
    (void)state;
    static const char *const opts[] = {"--heads", "4", NULL};
    run_on_every_isa("mqa", opts);
}

static void heads_wider_than_d_over_h(void **state)
{
    (void)state;
    static const char *const opts[] = {
        "--heads", "4", "--head-dim", "16", "--positions", "rope", "--rope-theta", "500000", NULL};
    run_on_every_isa("wide", opts);
}

static void heads_narrower_than_d_over_h(void **state)
{
    (void)state;
    static const char *const opts[] = {"--heads", "4", "--head-dim", "6", NULL};
    run_on_every_isa("narrow", opts);
}

/* One thread or three: the same CSV bytes, gradients included (the kv
   heads' gradients summed over each group in one order). */
static void threads_change_nothing(void **state)
{
    (void)state;
    char w[512], t[512];
    snprintf(w, sizeof w, "%s", test_data_path("gqa_gqa.safetensors"));
    snprintf(t, sizeof t, "%s", test_data_path("gqa_tokens.csv"));
    program_run runs[2];
    const char *threads[2] = {"1", "3"};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"--engine",    "forward",  "--weights",   w,
                              "--token-ids", t,          "--placement", "pre-norm",
                              "--positions", "rope",     "--grad",      "--threads",
                              threads[i],    "--format", "csv",         NULL};
        runs[i] = run_varprof(args);
        assert_int_equal(runs[i].status, 0);
    }
    assert_string_equal(runs[0].out, runs[1].out);
    program_run_free(&runs[0]);
    program_run_free(&runs[1]);
}

/* Usage errors (exit 2) name the option and what it may be; a file whose k
   does not have the kv heads asked for is refused (exit 1, as every tensor
   of the wrong shape) naming the tensor and both shapes. */
static void gqa_usage_errors(void **state)
{
    (void)state;
    char w[512];
    snprintf(w, sizeof w, "%s", test_data_path("gqa_gqa.safetensors"));
    const struct {
        const char *args[14];
        const char *says;
        int status;
    } cases[] = {
        {{"--engine", "forward", "--heads", "8", "--kv-heads", "3", NULL},
         "--kv-heads: 3 does not divide the 8 heads",
         2},
        {{"--engine", "forward", "--heads", "8", "--kv-heads", "0", NULL}, "--kv-heads", 2},
        {{"--engine", "forward", "--head-dim", "7", "--positions", "rope", NULL},
         "--head-dim: 7 with --positions rope",
         2},
        {{"--engine", "forward", "--heads", "64", "--head-dim", "2048", NULL},
         "--heads x --head-dim must be at most 65536",
         2},
        {{"--engine", "forward", "--width", "60", "--heads", "8", NULL}, "--head-dim", 2},
        {{"--kv-heads", "2", NULL}, "--engine forward", 2},
        {{"--engine", "forward", "--weights", w, "--positions", "rope", "--kv-heads", "4", NULL},
         "'layers.0.attn.k.weight' has shape [16, 64]; the options make it [32, 64]",
         1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        program_run run = run_varprof(cases[i].args);
        if (run.status != cases[i].status || !strstr(run.err, cases[i].says)) {
            print_error("case %zu: exit %d, want %d and '%s' in: %s", i, run.status,
                        cases[i].status, cases[i].says, run.err);
            fail();
        }
        program_run_free(&run);
    }
}

/* varprof train runs grouped-query attention with heads of their own
   width, QK-norm and rope: --layer-stats has a row for layer 0's k (2 kv
   heads of 12 at width 48) at each of the 20 steps, with a gradient and an
   update. */
static void train_runs_grouped_query(void **state)
{
    (void)state;
    char stats[512];
    snprintf(stats, sizeof stats, "%s/gqa_layer_stats.csv", test_scratch());
    const char *args[] = {"train",
                          "--block",
                          "attn-mlp",
                          "--heads",
                          "4",
                          "--kv-heads",
                          "2",
                          "--head-dim",
                          "12",
                          "--positions",
                          "rope",
                          "--qk-norm",
                          "--steps",
                          "20",
                          "--placement",
                          "pre-norm",
                          "--layers",
                          "2",
                          "--layer-stats",
                          stats,
                          "--quiet",
                          NULL};
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
        const char *at = strstr(line, ",layers.0.attn.k.weight,");
        if (!at)
            continue;
        double grad_norm = 0, weight_norm = 0, update_ratio = 0;
        assert_int_equal(sscanf(at + strlen(",layers.0.attn.k.weight,"), "%lf,%lf,%lf", &grad_norm,
                                &weight_norm, &update_ratio),
                         3);
        assert_true(grad_norm > 0 && weight_norm > 0 && update_ratio > 0);
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, 20);
}

/* The text heading and the JSON say the heads' shape where it is not the
   default; the default goes unsaid, so that every other output stands. */
static void outputs_say_the_heads(void **state)
{
    (void)state;
    static const struct {
        const char *args[20];
        const char *says, *lacks;
    } cases[] = {
        {{"--engine", "forward", "--layers", "1", "--width", "32", "--heads", "4", "--kv-heads",
          "1", "--head-dim", "16", "--tokens", "5", NULL},
         "network: width 32, 4 heads of 16 sharing 1 kv head, ",
         NULL},
        {{"--engine", "forward", "--layers", "1", "--width", "32", "--heads", "4", "--kv-heads",
          "2", "--tokens", "5", "--format", "json", NULL},
         "\"heads\":4,\"kv_heads\":2,\"ffn_mult\"",
         "head_dim"},
        {{"--engine", "forward", "--layers", "1", "--width", "32", "--heads", "4", "--kv-heads",
          "4", "--head-dim", "8", "--tokens", "5", "--format", "json", NULL},
         "\"heads\":4,\"ffn_mult\"",
         "kv_heads"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_output(cases[i].args, cases[i].says, cases[i].lacks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grouped_query_from_the_file),
        cmocka_unit_test(multi_query),
        cmocka_unit_test(heads_wider_than_d_over_h),
        cmocka_unit_test(heads_narrower_than_d_over_h),
        cmocka_unit_test(threads_change_nothing),
        cmocka_unit_test(gqa_usage_errors),
        cmocka_unit_test(train_runs_grouped_query),
        cmocka_unit_test(outputs_say_the_heads),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("grouped-query attention matched to PyTorch", tests,
                                       test_scratch_setup, test_scratch_teardown);
}
