/* vp_forward_options_from_model and vp_forward_options_from_checkpoint: each
 * built-in model's options are its row of the models table (or a refusal
 * naming the way past it), a checkpoint's are its config.json's as read
 * here by plain string search, and a kept value config.json disagrees with
 * is refused, the fact in words of the library's, no option named. */
#include <setjmp.h>
#include <math.h>
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

static const char *models_path(void)
{
    const char *env = getenv("VARPROF_MODELS");
    return env && *env ? env : "data/models.csv";
}

/* The refusal a row must get, VP_FIX_NONE where it is built. */
static vp_fix expected_fix(const vp_model *m)
{
    static const char *const unbuilt[] = {"bert-", "roberta-"};
    if (m->shape.architecture != VP_MODEL_ARCHITECTURE_DENSE)
        return VP_FIX_BY_HAND;
    for (size_t i = 0; i < sizeof unbuilt / sizeof *unbuilt; i++)
        if (strncmp(m->name, unbuilt[i], strlen(unbuilt[i])) == 0)
            return VP_FIX_BY_HAND;
    /* sinusoidal and relative positions are not built; partial rope is, with
       its fraction from the table */
    if (m->shape.positions == VP_MODEL_POSITIONS_SINUSOIDAL ||
        m->shape.positions == VP_MODEL_POSITIONS_RELATIVE ||
        (m->shape.positions == VP_MODEL_POSITIONS_PARTIAL_ROPE &&
         !(m->shape.rotary_fraction < 1.0)))
        return VP_FIX_POSITIONS;
    return VP_FIX_NONE;
}

/* The options a built row must get, column by column. */
static void check_row(const vp_model *m, const vp_config *cfg, const vp_forward_options *fw)
{
    const vp_model_shape *s = &m->shape;
    assert_int_equal(fw->width, s->width);
    assert_int_equal(fw->vocab, s->vocab);
    assert_int_equal(fw->ffn_width, s->ffn_width);
    assert_int_equal(fw->mlp, s->activation);
    assert_int_equal(fw->heads, s->heads);
    assert_int_equal(vp_forward_kv_heads(fw), s->kv_heads);
    assert_int_equal(vp_forward_head_dim(fw),
                     s->head_dim_given ? s->head_dim : s->width / s->heads);
    if (!isnan(s->norm_eps))
        assert_true(fw->eps == s->norm_eps);
    assert_int_equal(fw->tie_embeddings, s->tied_embeddings);
    assert_int_equal(cfg->final_norm, s->final_norm ? VP_FINAL_NORM_YES : VP_FINAL_NORM_NO);
    assert_int_equal(fw->norm, m->norm);
    const vp_bias bias = s->biases == VP_MODEL_BIASES_YES   ? VP_BIAS_ALL
                         : s->biases == VP_MODEL_BIASES_NO  ? VP_BIAS_NONE
                         : s->biases == VP_MODEL_BIASES_MLP ? VP_BIAS_MLP
                                                            : VP_BIAS_QKV;
    assert_int_equal(fw->bias, bias);
    const int rope =
        s->positions == VP_MODEL_POSITIONS_ROPE || s->positions == VP_MODEL_POSITIONS_PARTIAL_ROPE;
    const vp_positions positions =
        s->positions == VP_MODEL_POSITIONS_NONE      ? VP_POSITIONS_NONE
        : s->positions == VP_MODEL_POSITIONS_LEARNED ? VP_POSITIONS_LEARNED
        : s->positions == VP_MODEL_POSITIONS_ALIBI   ? VP_POSITIONS_ALIBI
        : s->rotary_pairing == VP_ROTARY_INTERLEAVED ? VP_POSITIONS_ROPE_INTERLEAVED
                                                     : VP_POSITIONS_ROPE;
    assert_int_equal(fw->positions, positions);
    if (rope && !isnan(s->rope_theta))
        assert_true(fw->rope_theta == s->rope_theta);
    if (rope)
        assert_true(fw->rope_fraction == s->rotary_fraction);
    /* the forms: the parallel placement's residual form, the rest as they stand */
    if (m->placement == VP_PARALLEL)
        assert_int_equal(fw->residual, s->residual);
    assert_int_equal(fw->embedding_norm, s->embedding_norm);
    assert_true(fw->logit_scale == s->logit_scale);
    assert_int_equal(fw->norm_unbiased, s->norm_unbiased);
}

static void each_model_is_its_row(void **state)
{
    (void)state;
    vp_model_table table;
    vp_error err;
    if (vp_models_read(models_path(), &table, &err) != VP_OK)
        fail_msg("%s", err.message);
    size_t built = 0, refused = 0;
    for (size_t i = 0; i < table.count; i++) {
        const vp_model *m = &table.models[i];
        if (!m->shape.known)
            continue;
        vp_config cfg;
        vp_config_init(&cfg, m->placement, m->layers);
        vp_forward_options fw;
        vp_forward_options_init(&fw);
        const vp_status status = vp_forward_options_from_model(m, 0, &cfg, &fw, &err);
        const vp_fix fix = expected_fix(m);
        if (fix == VP_FIX_NONE) {
            if (status != VP_OK)
                fail_msg("%s: %s", m->name, err.message);
            check_row(m, &cfg, &fw);
            built++;
            continue;
        }
        if (status != VP_EINVAL || err.fix != fix)
            fail_msg("%s: status %d fix %d, expected fix %d", m->name, status, err.fix, fix);
        assert_non_null(strstr(err.message, m->name));
        assert_null(strstr(err.message, "--")); /* the fact; the program names the option */
        refused++;
    }
    assert_true(built >= 10);
    assert_true(refused >= 3);
    vp_model_table_free(&table);
}

/* Kept parts stay; a kept bias and positions stand in for the model's;
 * Gemma 2 past its window is refused naming the tokens. */
static void kept_parts_stay(void **state)
{
    (void)state;
    vp_model_table table;
    assert_int_equal(vp_models_read(models_path(), &table, NULL), VP_OK);
    const vp_model *llama = vp_model_find(&table, "llama-2-7b");
    assert_non_null(llama);
    vp_config cfg;
    vp_config_init(&cfg, llama->placement, llama->layers);
    vp_forward_options fw;
    vp_forward_options_init(&fw);
    fw.width = 64;
    fw.heads = 2;
    assert_int_equal(
        vp_forward_options_from_model(llama, VP_KEEP_WIDTH | VP_KEEP_HEADS, &cfg, &fw, NULL),
        VP_OK);
    assert_int_equal(fw.width, 64);
    assert_int_equal(fw.heads, 2);
    assert_int_equal(fw.vocab, llama->shape.vocab);
    for (size_t i = 0; i < table.count; i++) {
        const vp_model *m = &table.models[i];
        if (!m->shape.known || m->shape.biases != VP_MODEL_BIASES_MLP ||
            m->shape.architecture != VP_MODEL_ARCHITECTURE_DENSE)
            continue;
        vp_forward_options_init(&fw);
        fw.bias = VP_BIAS_ALL;
        fw.positions = VP_POSITIONS_ROPE;
        assert_int_equal(
            vp_forward_options_from_model(m, VP_KEEP_BIAS | VP_KEEP_POSITIONS, &cfg, &fw, NULL),
            VP_OK);
        assert_int_equal(fw.bias, VP_BIAS_ALL);
    }
    /* Gemma 2's even layers and five of each six of Gemma 3's attend through
       a window (Gemma2Config's and Gemma3TextConfig's layer_types), however
       deep the stack is made and past the window too; Gemma 3's sliding
       layers turn by their own base, its full ones by rope_theta's divided
       by 8 */
    static const struct {
        const char *name;
        size_t window, pattern;
        double scalar, softcap, local, linear;
    } gemmas[] = {
        {"gemma-2-9b", 4096, 2, 256.0, 50.0, 0.0, 0.0},
        {"gemma-2-27b", 4096, 2, 144.0, 50.0, 0.0, 0.0},
        {"gemma-3-1b", 512, 6, 256.0, 0.0, 10000.0, 0.0},
        {"gemma-3-27b", 1024, 6, 168.0, 0.0, 10000.0, 8.0},
    };
    for (size_t i = 0; i < sizeof gemmas / sizeof *gemmas; i++) {
        const vp_model *gemma = vp_model_find(&table, gemmas[i].name);
        if (!gemma)
            continue;
        vp_error err;
        vp_forward_options_init(&fw);
        fw.tokens = gemmas[i].window + 1;
        cfg.layers = 1000;
        cfg.mlp_only = 0;
        if (vp_forward_options_from_model(gemma, 0, &cfg, &fw, &err) != VP_OK)
            fail_msg("%s: %s", gemmas[i].name, err.message);
        assert_int_equal(fw.sliding_window, gemmas[i].window);
        assert_int_equal(fw.window_pattern, gemmas[i].pattern);
        assert_null(fw.layer_kinds);
        assert_true(fw.attn_scale == (double)(float)(1.0 / sqrt(gemmas[i].scalar)));
        assert_true(fw.attn_softcap == gemmas[i].softcap);
        assert_true(fw.logit_softcap == (gemmas[i].softcap > 0.0 ? 30.0 : 0.0));
        assert_true(fw.rope_local_theta == gemmas[i].local);
        assert_true(fw.rope_linear == gemmas[i].linear);
        assert_true(fw.embed_scale == (double)(float)sqrt((double)fw.width));
        assert_int_equal(fw.mlp, VP_MLP_GEGLU_TANH);
        assert_int_equal(vp_forward_check(&cfg, &fw, &err), VP_OK);
    }
    vp_model_table_free(&table);
}

/* The number after "key": in config.json's text. */
static double config_number(const char *text, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\":", key);
    const char *at = strstr(text, quoted);
    if (!at)
        fail_msg("config.json has no %s", key);
    return strtod(at + strlen(quoted), NULL);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[8192];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

/* A checkpoint's options against its config.json, field by field. */
static void checkpoint_is_its_config(const char *name, const char *const keys[6])
{
    char dir[1024], path[1100];
    snprintf(dir, sizeof dir, "%s", test_data_path(name));
    snprintf(path, sizeof path, "%s/config.json", dir);
    const char *text = slurp(path);
    vp_safetensors weights;
    vp_hf_architecture arch;
    vp_error err;
    if (vp_hf_checkpoint_read(dir, &weights, &arch, &err) != VP_OK)
        fail_msg("%s: %s", dir, err.message);
    vp_config cfg;
    vp_config_init(&cfg, VP_POST_LN, 1);
    vp_forward_options fw;
    vp_forward_options_init(&fw);
    if (vp_forward_options_from_checkpoint(&weights, &arch, 0, &cfg, &fw, &err) != VP_OK)
        fail_msg("%s: %s", dir, err.message);
    assert_int_equal(fw.width, (size_t)config_number(text, keys[0]));
    assert_int_equal(fw.heads, (size_t)config_number(text, keys[1]));
    assert_int_equal(cfg.layers, (size_t)config_number(text, keys[2]));
    assert_int_equal(fw.vocab, (size_t)config_number(text, keys[3]));
    assert_true(fw.eps == config_number(text, keys[4]));
    if (keys[5])
        assert_int_equal(vp_forward_ffn_width(&fw), (size_t)config_number(text, keys[5]));
    assert_int_equal(cfg.placement, VP_PRE_NORM);
    assert_ptr_equal(fw.weights, &weights);
    /* a kept count of heads config.json disagrees with: refused, naming the fact */
    vp_forward_options kept;
    vp_forward_options_init(&kept);
    kept.heads = fw.heads * 2;
    assert_int_equal(
        vp_forward_options_from_checkpoint(&weights, &arch, VP_KEEP_HEADS, &cfg, &kept, &err),
        VP_EINVAL);
    assert_int_equal(err.fix, VP_FIX_HEADS);
    assert_null(strstr(err.message, "--"));
    vp_safetensors_free(&weights);
}

static void checkpoints_are_their_config(void **state)
{
    (void)state;
    checkpoint_is_its_config("hf/llama_d32",
                             (const char *const[]){"hidden_size", "num_attention_heads",
                                                   "num_hidden_layers", "vocab_size",
                                                   "rms_norm_eps", "intermediate_size"});
    checkpoint_is_its_config("hf/gpt2_d32",
                             (const char *const[]){"n_embd", "n_head", "n_layer", "vocab_size",
                                                   "layer_norm_epsilon", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_model_is_its_row),
        cmocka_unit_test(kept_parts_stay),
        cmocka_unit_test(checkpoints_are_their_config),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("forward options from a model or checkpoint", tests, NULL,
                                       NULL);
}
