/* Sliding windows per layer type, and Gemma 3's RoPE per layer type, matched
 * to PyTorch (issue 30): the checkpoints of tests/data/gen_window_reference.py,
 * 11 tokens a sequence through a window of 4 (transformers'
 * sliding_window_overlay: query t sees keys t - 3 .. t) for Mistral (every
 * layer), Qwen2 and Qwen3 (max_window_layers 1: layer 0 full, layer 1
 * sliding), Gemma 2 (sliding, full, with its soft caps), Gemma 3 (sliding on
 * base 10000, full on base 1e6 with linear scaling of factor 8), StarCoder2
 * and Phi-3 (every layer), written there from the modeling_*.py formulas
 * with PyTorch alone, give on every instruction set the stream norm after
 * every sub-block, the next-token loss, every parameter's gradient norm
 * under the checkpoint's names, every sub-block's grad_var and weight_grad
 * and the global gradient norm PyTorch gives; `varprof train --weights DIR`
 * on each starts from the same loss and global gradient norm, and the loss
 * falls.
 * Besides: the older spellings transformers reads alike (Qwen2 without
 * layer_types, Gemma 3's rope_local_base_freq and rope_scaling with
 * sliding_window_pattern) give the same bytes, and the window's edge is
 * exact: a window of all 11 tokens is no window, one of 10 is. */
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
#include "text_file.h"
#include "torch_case.h"

/* The bounds, relative: the stream norms and the loss 1e-5 (the
 * loss shares the gradients' bound in torch_case, so every gradient figure
 * is held to 1e-5 too, tighter than the 1e-4 asked of each named gradient),
 * the global gradient norm 1e-5. PyTorch's float32 run is within 3e-7 of
 * float64 on every figure here (DATA_FLOAT32_NOISE bounds it). */
#define STREAM_TOLERANCE 1e-5
#define GRAD_TOLERANCE 1e-5
#define GLOBAL_TOLERANCE 1e-5
#define DATA_FLOAT32_NOISE 1e-6

static torch_case window_case(const char *name, const char *dir)
{
    static const char *const args[] = {"--loss", "next", NULL};
    const torch_case c = {
        "window_expected.csv", name,  dir,   "window_tokens.csv", args, STREAM_TOLERANCE,
        GRAD_TOLERANCE,        1e-30, 1e-30, DATA_FLOAT32_NOISE};
    return c;
}

/* the figures, then `varprof train --weights DIR`: step 0's loss and global
   gradient norm PyTorch's, and the loss falling */
static void run_case(const char *name, const char *dir)
{
    const torch_case c = window_case(name, dir);
    torch_case_run_every_isa(&c);
    torch_case_check_train(&c, GLOBAL_TOLERANCE);
}

static void mistral_matches_pytorch(void **state)
{
    (void)state;
    run_case("window_mistral", "hf/window_mistral");
}

static void qwen2_matches_pytorch(void **state)
{
    (void)state;
    run_case("window_qwen2", "hf/window_qwen2");
}

static void gemma2_matches_pytorch(void **state)
{
    (void)state;
    run_case("window_gemma2", "hf/window_gemma2");
}

static void gemma3_matches_pytorch(void **state)
{
    (void)state;
    run_case("window_gemma3", "hf/window_gemma3");
}

static void starcoder2_matches_pytorch(void **state)
{
    (void)state;
    run_case("window_starcoder2", "hf/window_starcoder2");
}

static void phi3_matches_pytorch(void **state)
{
    (void)state;
    run_case("window_phi3", "hf/window_phi3");
}

static void qwen3_matches_pytorch(void **state)
{
    (void)state;
    run_case("window_qwen3", "hf/window_qwen3");
}

/* a copy of case name's checkpoint in the scratch folder as label, config.json as given */
static const char *twin(const char *name, const char *label, const char *config)
{
    static char dir[512];
    char weights[512];
    snprintf(dir, sizeof dir, "%s/%s", test_scratch(), label);
    snprintf(weights, sizeof weights, "hf/%s", name);
    checkpoint_twin(dir, config, test_data_path(weights));
    return dir;
}

static program_run run_on(const char *dir)
{
    char tokens[512];
    snprintf(tokens, sizeof tokens, "%s", test_data_path("window_tokens.csv"));
    return run_forward_grad(dir, tokens, NULL, NULL);
}

/* the case's output against that of its config.json with edits[i][0] made
   edits[i][1]: the same bytes (same 1) or not */
static void compare_edited(const char *name, const char *const edits[][2], size_t n, int same)
{
    char path[600];
    snprintf(path, sizeof path, "hf/%s/config.json", name);
    char *config = strdup(read_text(test_data_path(path)));
    assert_non_null(config);
    for (size_t i = 0; i < n; i++)
        config = replace_first(config, edits[i][0], edits[i][1]);
    snprintf(path, sizeof path, "%s", test_data_path(path));
    *strrchr(path, '/') = '\0';
    program_run want = run_on(path), got = run_on(twin(name, name, config));
    free(config);
    assert_int_equal(want.status, 0);
    if (got.status != 0 || (strcmp(got.out, want.out) == 0) != same) {
        print_error("%s edited: exit %d, the output %s the case's: %s", name, got.status,
                    same ? "unlike" : "the same as", got.err);
        fail();
    }
    program_run_free(&want);
    program_run_free(&got);
}

static void older_spellings_give_the_same_bytes(void **state)
{
    (void)state;
    /* Qwen2Config's rule: sliding from max_window_layers on */
    static const char *const qwen2[][2] = {
        {"\"layer_types\": [\n    \"full_attention\",\n    \"sliding_attention\"\n  ],\n", ""}};
    compare_edited("window_qwen2", qwen2, 1, 1);
    /* the Hub's Gemma 3: every second layer full, rope_local_base_freq and
       the full layers' rope_theta and linear rope_scaling */
    static const char *const gemma3[][2] = {
        {"\"layer_types\": [\n    \"sliding_attention\",\n    \"full_attention\"\n  ],\n", ""},
        {"\"_sliding_window_pattern\": 6", "\"_sliding_window_pattern\": 2"},
        {"\"rope_parameters\": {\n    \"full_attention\": {\n      \"factor\": 8.0,\n      "
         "\"rope_theta\": 1000000.0,\n      \"rope_type\": \"linear\"\n    },\n    "
         "\"sliding_attention\": {\n      \"rope_theta\": 10000.0,\n      \"rope_type\": "
         "\"default\"\n    }\n  },",
         "\"rope_local_base_freq\": 10000.0, \"rope_theta\": 1000000.0, \"rope_scaling\": "
         "{\"factor\": 8.0, \"rope_type\": \"linear\"},"}};
    compare_edited("window_gemma3", gemma3, 3, 1);
}

/* query t sees keys t - W + 1 .. t: a window of all 11 tokens changes
   nothing, one of 10 drops key 0 from the last query */
static void the_window_edge_is_exact(void **state)
{
    (void)state;
    static const char *const none[][2] = {{"\"sliding_window\": 4", "\"sliding_window\": null"}};
    static const char *const eleven[][2] = {{"\"sliding_window\": 4", "\"sliding_window\": 11"}};
    static const char *const ten[][2] = {{"\"sliding_window\": 4", "\"sliding_window\": 10"}};
    char *config = strdup(read_text(test_data_path("hf/window_mistral/config.json")));
    assert_non_null(config);
    config = replace_first(config, none[0][0], none[0][1]);
    program_run want = run_on(twin("window_mistral", "window_none", config));
    free(config);
    assert_int_equal(want.status, 0);
    for (int w = 0; w < 2; w++) {
        config = strdup(read_text(test_data_path("hf/window_mistral/config.json")));
        assert_non_null(config);
        config = replace_first(config, (w ? ten : eleven)[0][0], (w ? ten : eleven)[0][1]);
        program_run got = run_on(twin("window_mistral", "window_edge", config));
        free(config);
        assert_int_equal(got.status, 0);
        drop_lines(got.out, "window: "); /* the heading says the window; the figures may not */
        if ((strcmp(got.out, want.out) == 0) != !w) {
            print_error("a window of %d: the output %s no window's", w ? 10 : 11,
                        w ? "is" : "is not");
            fail();
        }
        program_run_free(&got);
    }
    program_run_free(&want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mistral_matches_pytorch),
        cmocka_unit_test(qwen2_matches_pytorch),
        cmocka_unit_test(gemma2_matches_pytorch),
        cmocka_unit_test(gemma3_matches_pytorch),
        cmocka_unit_test(starcoder2_matches_pytorch),
        cmocka_unit_test(phi3_matches_pytorch),
        cmocka_unit_test(qwen3_matches_pytorch),
        cmocka_unit_test(older_spellings_give_the_same_bytes),
        cmocka_unit_test(the_window_edge_is_exact),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("sliding windows matched to PyTorch", tests,
                                       test_scratch_setup, test_scratch_teardown);
}
