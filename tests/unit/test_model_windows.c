/* The models table's attention columns (sliding_window, window_pattern,
 * rope_local_theta, rope_linear_factor, attn_scalar and the soft caps) build
 * what a checkpoint's config.json builds: for the windowed checkpoints of
 * tests/data/gen_window_reference.py (Gemma 2, Gemma 3, Mistral, 11 tokens
 * through a window of 4, held to PyTorch by test_pytorch_windows), a row of
 * the table at the checkpoint's shape, run on the checkpoint's weights
 * through vp_forward_options_from_model, gives every figure of every
 * sub-block to the bit that the checkpoint's own options give (the window
 * pattern where the file lists each layer's kind); without its window the
 * row's figures differ, so the window is what is held. */
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
#include "varprof/varprof.h"

#define TOKENS 11
#define BATCH 2

/* The checkpoints' shapes as rows of the table, with their attention: each
   config.json's facts (tests/data/hf/window_*). */
static const char table[] =
    "name,year,layers,placement,norm,qk_norm,source,alpha,beta,alpha_beta_source,width,heads,"
    "kv_heads,head_dim,ffn_width,vocab,activation,positions,max_positions,rope_theta,norm_eps,"
    "biases,tied_embeddings,final_norm,architecture,shape_source,residual,rotary_fraction,"
    "rotary_pairing,embedding_norm,logit_scale,norm_bias,sliding_window,window_pattern,"
    "rope_local_theta,rope_linear_factor,attn_scalar,attn_softcap,logit_softcap\n"
    /* sliding, full; query_pre_attn_scalar 16; caps 50 and 30 */
    "gemma-2-window,2024,2,sandwich,rmsnorm,no,test,,,,32,4,2,16,72,61,geglu-tanh,rope,,10000,"
    "1e-6,no,yes,yes,dense,test,,,,,,,4,2,,,16,50,30\n"
    /* sliding on base 10000, full on 1e6 with linear factor 8 */
    "gemma-3-window,2025,2,sandwich,rmsnorm,yes,test,,,,32,4,2,16,72,61,geglu-tanh,rope,,1000000,"
    "1e-6,no,yes,yes,dense,test,,,,,,,4,2,10000,8,16,,\n"
    /* every layer */
    "mistral-window,2023,2,pre-norm,rmsnorm,no,test,,,,32,4,2,,72,61,swiglu,rope,,10000,1e-6,no,"
    "no,yes,dense,test,,,,,,,4,,,,,,\n";

static vp_model_table models;

static int setup(void **state)
{
    const char *path;
    if (test_scratch_setup(state) != 0 || !(path = write_scratch("models.csv", table)))
        return -1;
    vp_error err;
    return vp_models_read(path, &models, &err) == VP_OK ? 0 : -1;
}

static int teardown(void **state)
{
    vp_model_table_free(&models);
    return test_scratch_teardown(state);
}

static vp_profile *run(const vp_config *cfg, const vp_forward_options *o, const char *what)
{
    vp_profile *p = NULL;
    vp_error err;
    if (vp_forward_profile(cfg, o, &p, &err) != VP_OK)
        fail_msg("%s: %s", what, err.message);
    return p;
}

/* every figure of every row, to the bit */
static int same_rows(const vp_profile *a, const vp_profile *b)
{
    if (a->n_rows != b->n_rows)
        return 0;
    for (size_t k = 0; k < a->n_rows; k++) {
        const vp_row *x = &a->rows[k], *y = &b->rows[k];
        if (x->stream_var != y->stream_var || x->update_ratio != y->update_ratio ||
            x->embedding_share != y->embedding_share || x->stream_norm != y->stream_norm ||
            x->update_cosine != y->update_cosine)
            return 0;
    }
    return 1;
}

static void row_builds_the_checkpoint(const char *name, const char *dir)
{
    vp_safetensors weights;
    vp_hf_architecture arch;
    vp_error err;
    if (vp_hf_checkpoint_read(test_data_path(dir), &weights, &arch, &err) != VP_OK)
        fail_msg("%s: %s", dir, err.message);
    vp_config file_cfg;
    vp_config_init(&file_cfg, VP_PRE_NORM, 1);
    vp_forward_options file;
    vp_forward_options_init(&file);
    file.tokens = TOKENS;
    file.batch = BATCH;
    if (vp_forward_options_from_checkpoint(&weights, &arch, 0, &file_cfg, &file, &err) != VP_OK)
        fail_msg("%s: %s", dir, err.message);

    const vp_model *model = vp_model_find(&models, name);
    assert_non_null(model);
    vp_config cfg;
    vp_config_init(&cfg, model->placement, model->layers);
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.tokens = TOKENS;
    o.batch = BATCH;
    if (vp_forward_options_from_model(model, 0, &cfg, &o, &err) != VP_OK)
        fail_msg("%s: %s", name, err.message);
    o.weights = &weights;
    /* the table's facts are config.json's */
    assert_int_equal(o.sliding_window, file.sliding_window);
    assert_true(o.attn_scale == file.attn_scale && o.embed_scale == file.embed_scale);
    assert_true(o.attn_softcap == file.attn_softcap && o.logit_softcap == file.logit_softcap);
    assert_true(o.rope_theta == file.rope_theta && o.rope_linear == file.rope_linear);

    vp_profile *by_file = run(&file_cfg, &file, dir), *by_row = run(&cfg, &o, name);
    if (!same_rows(by_file, by_row))
        fail_msg("%s: the row's figures are not the checkpoint's", name);
    o.sliding_window = 0;
    vp_profile *unwindowed = run(&cfg, &o, name);
    if (same_rows(by_file, unwindowed))
        fail_msg("%s: 11 tokens give the same figures without the window of 4", name);
    vp_profile_free(by_file);
    vp_profile_free(by_row);
    vp_profile_free(unwindowed);
    vp_safetensors_free(&weights);
}

static void gemma2_row_is_its_checkpoint(void **state)
{
    (void)state;
    row_builds_the_checkpoint("gemma-2-window", "hf/window_gemma2");
}

static void gemma3_row_is_its_checkpoint(void **state)
{
    (void)state;
    row_builds_the_checkpoint("gemma-3-window", "hf/window_gemma3");
}

static void mistral_row_is_its_checkpoint(void **state)
{
    (void)state;
    row_builds_the_checkpoint("mistral-window", "hf/window_mistral");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemma2_row_is_its_checkpoint),
        cmocka_unit_test(gemma3_row_is_its_checkpoint),
        cmocka_unit_test(mistral_row_is_its_checkpoint),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, setup, teardown);
}
