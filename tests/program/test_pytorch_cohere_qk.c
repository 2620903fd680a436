/* Cohere's QK-norm (Command R+) matched to PyTorch (issue 30): the checkpoint
 * of tests/data/gen_cohere_qk_norm.py, CohereForCausalLM's names and layout
 * with use_qk_norm true, four query heads sharing two kv heads, written
 * there from modeling_cohere.py's formulas with PyTorch alone: q_norm and
 * k_norm a LayerNorm without bias over each head's head_dim coordinates with
 * a weight per head ([4, 8] and [2, 8]), after the projections and before
 * the interleaved RoPE. On every instruction set it gives the per-layer
 * stream norms, the next-token loss (logit_scale on the logits), every
 * parameter's gradient norm under the checkpoint's names (q_norm's and
 * k_norm's per-head weights among them), every sub-block's grad_var and
 * weight_grad, and under `varprof train --weights DIR` step 0's loss and
 * global gradient norm, that PyTorch gives, the loss then falling; the same
 * bytes for any thread count. Besides: a checkpoint whose QK-norm weights
 * are not a weight per head is refused naming the tensor's shape. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "text_file.h"
#include "torch_case.h"

/* The bounds, relative: the stream norms and the loss 1e-5 (the
 * loss shares the gradients' bound in torch_case, so they are held to
 * 1e-5 too, tighter than the 1e-4 asked of each named gradient), the
 * global gradient norm (varprof train's grad_norm at step 0) 1e-5.
 * PyTorch's float32 run is within 2e-7 of float64 on every figure here
 * (DATA_FLOAT32_NOISE bounds it). */
#define STREAM_TOLERANCE 1e-5
#define GRAD_TOLERANCE 1e-5
#define GLOBAL_TOLERANCE 1e-5
#define DATA_FLOAT32_NOISE 1e-6

static const char *const loss_next[] = {"--loss", "next", NULL};
static const torch_case qk_case = {"cohere_qk_expected.csv",
                                   "cohere_qk_norm",
                                   "hf/cohere_qk_norm",
                                   "cohere_qk_tokens.csv",
                                   loss_next,
                                   STREAM_TOLERANCE,
                                   GRAD_TOLERANCE,
                                   1e-30,
                                   1e-30,
                                   DATA_FLOAT32_NOISE};

static void qk_norm_matches_pytorch(void **state)
{
    (void)state;
    torch_case_run_every_isa(&qk_case);
}

static void train_matches_pytorch(void **state)
{
    (void)state;
    torch_case_check_train(&qk_case, GLOBAL_TOLERANCE);
}

/* the per-head LayerNorm splits its rows (forward, dx) and its heads (the
   weights' gradients) across the threads: the same bytes for any count */
static void any_thread_count_gives_the_same_bytes(void **state)
{
    (void)state;
    char dir[512], tokens[512], grads[3][600];
    snprintf(dir, sizeof dir, "%s", test_data_path("hf/cohere_qk_norm"));
    snprintf(tokens, sizeof tokens, "%s", test_data_path("cohere_qk_tokens.csv"));
    static const char *const counts[] = {"1", "3", "4"};
    program_run runs[3];
    for (int i = 0; i < 3; i++) {
        snprintf(grads[i], sizeof grads[i], "%s/threads_%s.csv", test_scratch(), counts[i]);
        const char *args[] = {"--engine",    "forward",     "--weights", dir,
                              "--token-ids", tokens,        "--grad",    "--loss",
                              "next",        "--threads",   counts[i],   "--format",
                              "csv",         "--grads-out", grads[i],    NULL};
        runs[i] = run_varprof(args);
        assert_int_equal(runs[i].status, 0);
    }
    for (int i = 1; i < 3; i++) {
        assert_string_equal(runs[i].out, runs[0].out);
        char *want = strdup(read_text(grads[0])); /* read_text's buffer is one */
        assert_non_null(want);
        assert_string_equal(read_text(grads[i]), want);
        free(want);
    }
    for (int i = 0; i < 3; i++)
        program_run_free(&runs[i]);
}

/* The checkpoint's config.json beside weights whose k_norm is one weight
   for every head (varprof's own per-head RMSNorm's shape): refused, naming
   the tensor and the shape config.json makes, nothing on stdout */
static void one_weight_for_every_head_is_refused(void **state)
{
    (void)state;
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/flat", test_scratch());
    (void)mkdir(dir, 0700);
    char from[700];
    snprintf(from, sizeof from, "%s/config.json", test_data_path("hf/cohere_qk_norm"));
    snprintf(path, sizeof path, "%s/config.json", dir);
    copy_file(from, path);
    /* the safetensors header's shape [2,8] of layer 0's k_norm made [16]:
       the same bytes, one weight of 16 */
    snprintf(path, sizeof path, "%s/model.safetensors", test_data_path("hf/cohere_qk_norm"));
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    static char blob[1 << 20];
    const size_t size = fread(blob, 1, sizeof blob, in);
    fclose(in);
    const char *key =
        "\"model.layers.0.self_attn.k_norm.weight\":{\"dtype\":\"F32\",\"shape\":[2,8]";
    char *at = strstr(blob + 8, key);
    assert_non_null(at);
    memcpy(at + strlen(key) - strlen("[2,8]"), "[16] ", 5);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(blob, 1, size, out), size);
    assert_int_equal(fclose(out), 0);
    const char *args[] = {"--engine", "forward", "--weights", dir, NULL};
    program_run run = run_varprof(args);
    assert_int_not_equal(run.status, 0);
    if (!strstr(run.err, "k_norm.weight' has shape [16]") || !strstr(run.err, "[2, 8]"))
        fail_msg("expected k_norm's shape named in: %s", run.err);
    assert_string_equal(run.out, "");
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(qk_norm_matches_pytorch),
        cmocka_unit_test(train_matches_pytorch),
        cmocka_unit_test(any_thread_count_gives_the_same_bytes),
        cmocka_unit_test(one_weight_for_every_head_is_refused),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("Cohere's QK-norm matched to PyTorch", tests,
                                       test_scratch_setup, test_scratch_teardown);
}
