/* BLOOM with six heads matched to PyTorch (issue 30): the checkpoint of
 * tests/data/gen_bloom_reference.py, BloomForCausalLM's names and layout
 * with a head count that is not a power of two (ALiBi's slopes 2^-2, 2^-4,
 * 2^-6, 2^-8, then 2^-1 and 2^-3 for the two heads past four), the
 * embedding's LayerNorm, query_key_value fused head by head and a tied
 * head, written there from modeling_bloom.py's formulas with PyTorch alone,
 * gives on every instruction set the per-sub-block stream norms, the next
 * token loss, every parameter's gradient norm under the checkpoint's names
 * and every sub-block's grad_var and weight_grad that PyTorch gives.
 * Besides: the Hub's spelling of its config.json (n_embed,
 * num_attention_heads, Megatron's settings) gives the same bytes and
 * apply_residual_connection_post_layernorm is refused by name; --positions
 * alibi and --embedding-norm layernorm run a drawn network forward and
 * backward, and the closed form refuses the norm. */
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
#include "text_file.h"
#include "torch_case.h"

/* 1e-5 relative, the bound, on the stream norms and on every
 * gradient figure; PyTorch's float32 run is within 2e-7 of float64 on every
 * figure here (DATA_FLOAT32_NOISE bounds it). */
#define TOLERANCE 1e-5
#define DATA_FLOAT32_NOISE 1e-6

static void six_heads_match_pytorch(void **state)
{
    (void)state;
    static const char *const args[] = {"--loss", "next", NULL};
    const torch_case c = {"bloom_expected.csv",
                          "bloom_h6",
                          "hf/bloom_h6",
                          "bloom_tokens.csv",
                          args,
                          TOLERANCE,
                          TOLERANCE,
                          1e-30,
                          1e-30,
                          DATA_FLOAT32_NOISE};
    torch_case_run_every_isa(&c);
}

/* the checkpoint's weights into the scratch directory, beside config */
static const char *hub_twin(const char *config)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s/bloom_hub", test_scratch());
    checkpoint_twin(dir, config, test_data_path("hf/bloom_h6"));
    return dir;
}

static program_run run_on(const char *dir)
{
    char tokens[512];
    snprintf(tokens, sizeof tokens, "%s", test_data_path("bloom_tokens.csv"));
    return run_forward_grad(dir, tokens, NULL, NULL);
}

/* BloomConfig's other names (n_embed for hidden_size, num_attention_heads
   and num_hidden_layers for n_head and n_layer) and the keys BLOOM's Hub
   files carry, which change no number: the same bytes as the plain config */
static void hub_spelling_gives_the_same_bytes(void **state)
{
    (void)state;
    static const char hub[] =
        "{\"architectures\": [\"BloomForCausalLM\"], \"model_type\": \"bloom\", "
        "\"n_embed\": 48, \"num_hidden_layers\": 2, \"num_attention_heads\": 6, "
        "\"seq_length\": 2048, \"vocab_size\": 61, \"unk_token_id\": 0, \"pad_token_id\": 3, "
        "\"masked_softmax_fusion\": true, \"attention_softmax_in_fp32\": true, "
        "\"offset_alibi\": 100, \"skip_bias_add\": true, \"skip_bias_add_qkv\": false, "
        "\"bias_dropout_fusion\": true, \"pretraining_tp\": 4, \"slow_but_exact\": false, "
        "\"n_inner\": null, \"apply_residual_connection_post_layernorm\": false}";
    char plain[512];
    snprintf(plain, sizeof plain, "%s", test_data_path("hf/bloom_h6"));
    program_run want = run_on(plain), got = run_on(hub_twin(hub));
    assert_int_equal(want.status, 0);
    assert_int_equal(got.status, 0);
    assert_string_equal(got.out, want.out);
    program_run_free(&want);
    program_run_free(&got);
    static const char post[] = "{\"model_type\": \"bloom\", \"hidden_size\": 48, \"n_head\": 6, "
                               "\"n_layer\": 2, \"vocab_size\": 61, "
                               "\"apply_residual_connection_post_layernorm\": true}";
    got = run_on(hub_twin(post));
    assert_int_not_equal(got.status, 0);
    assert_non_null(strstr(got.err, "apply_residual_connection_post_layernorm"));
    assert_string_equal(got.out, "");
    program_run_free(&got);
}

/* A drawn network with both: it runs, forward and backward, and says alibi */
static void drawn_network_runs(void **state)
{
    (void)state;
    const char *args[] = {"--engine",         "forward",   "--layers", "2", "--width",     "48",
                          "--heads",          "6",         "--tokens", "9", "--positions", "alibi",
                          "--embedding-norm", "layernorm", "--grad",   NULL};
    program_run run = run_varprof(args);
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "positions: alibi"));
    program_run_free(&run);
}

/* The closed form and the Monte Carlo take the embedding's variance as
   given: beside them (--engine all) the norm is refused by name, not ignored */
static void closed_form_refuses_the_norm(void **state)
{
    (void)state;
    const char *args[] = {"--engine",         "all",       "--layers", "2",
                          "--embedding-norm", "layernorm", NULL};
    program_run run = run_varprof(args);
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "--embedding-norm layernorm: the closed form"));
    assert_string_equal(run.out, "");
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(six_heads_match_pytorch),
        cmocka_unit_test(hub_spelling_gives_the_same_bytes),
        cmocka_unit_test(drawn_network_runs),
        cmocka_unit_test(closed_form_refuses_the_norm),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("BLOOM matched to PyTorch", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
