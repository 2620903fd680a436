/* A forward pass's options from a built-in model's shape (the models table's row). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "varprof/forward_setup.h"

/* Facts of a family that the table's shape has no column for: a row is
   refused whatever is kept (a checkpoint of it runs with --weights). */
static const struct {
    const char *prefix, *why;
} unbuilt_families[] = {
    {"gemma-3-", "Gemma 3's sliding and full layers (their window, their pattern, the local "
                 "RoPE base and the full layers' linear scaling) have no column in the table; "
                 "a checkpoint of it runs with its weights"},
    {"bert-", "BERT's attention sees both ways, not causally, which the forward pass does not "
              "build"},
    {"roberta-", "RoBERTa's attention sees both ways, not causally, which the forward pass does "
                 "not build"},
};

static int starts(const vp_model *model, const char *prefix)
{
    return strncmp(model->name, prefix, strlen(prefix)) == 0;
}

/* What of the model the forward pass does not build, and the way past it. */
static vp_status refuse(const vp_model *model, const char *what, vp_fix fix, vp_error *err)
{
    return vp_fail_fix(err, VP_EINVAL, fix, "%s: %s, which the forward pass does not build",
                       model->name, what);
}

/* Refusals whatever is kept: a family or an architecture not built. */
static vp_status check_built(const vp_model *model, vp_error *err)
{
    const vp_model_shape *s = &model->shape;
    if (s->architecture != VP_MODEL_ARCHITECTURE_DENSE)
        return refuse(model,
                      s->architecture == VP_MODEL_ARCHITECTURE_MOE
                          ? "it is a mixture of experts"
                          : "its row is the encoder of an encoder-decoder, whose attention sees "
                            "both ways",
                      VP_FIX_BY_HAND, err);
    for (size_t i = 0; i < sizeof unbuilt_families / sizeof *unbuilt_families; i++)
        if (starts(model, unbuilt_families[i].prefix))
            return vp_fail_fix(err, VP_EINVAL, VP_FIX_BY_HAND, "%s: %s", model->name,
                               unbuilt_families[i].why);
    return VP_OK;
}

/* Gemma 2's layer_types: layer l slides when l is even (Gemma2Config's
   "sliding_attention" if (l + 1) % 2 else "full_attention") */
#define GEMMA2_KINDS_2 VP_LAYER_SLIDING, VP_LAYER_FULL
#define GEMMA2_KINDS_8 GEMMA2_KINDS_2, GEMMA2_KINDS_2, GEMMA2_KINDS_2, GEMMA2_KINDS_2
#define GEMMA2_KINDS_32 GEMMA2_KINDS_8, GEMMA2_KINDS_8, GEMMA2_KINDS_8, GEMMA2_KINDS_8
#define GEMMA2_KINDS_128 GEMMA2_KINDS_32, GEMMA2_KINDS_32, GEMMA2_KINDS_32, GEMMA2_KINDS_32
static const unsigned char gemma2_kinds[] = {GEMMA2_KINDS_128, GEMMA2_KINDS_128};
#define GEMMA2_MOST_LAYERS (sizeof gemma2_kinds / sizeof *gemma2_kinds)

/* Gemma 2's facts beyond the table's columns (Hugging Face's Gemma2Config
   and modeling_gemma2.py): the embedding times sqrt(d) rounded to float,
   the scores times query_pre_attn_scalar^-1/2 (256, but 144 = d / H for the
   27B, whose head_dim is 128) soft-capped at 50, the logits at 30; every
   other layer, the even ones, attends within a window of VP_GEMMA2_WINDOW
   tokens (up to GEMMA2_MOST_LAYERS layers; a longer stack is refused more
   tokens than the window). */
static vp_status gemma2_facts(const vp_model *model, const vp_config *cfg, vp_forward_options *fw,
                              vp_error *err)
{
    if (fw->tokens > VP_GEMMA2_WINDOW && cfg->layers > GEMMA2_MOST_LAYERS)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_TOKENS,
                           "%s: %zu tokens a sequence is beyond Gemma 2's sliding window of %u "
                           "tokens, which is applied in stacks of at most %zu layers, not %zu",
                           model->name, fw->tokens, VP_GEMMA2_WINDOW, GEMMA2_MOST_LAYERS,
                           cfg->layers);
    if (cfg->layers <= GEMMA2_MOST_LAYERS && !cfg->mlp_only) {
        fw->sliding_window = VP_GEMMA2_WINDOW;
        fw->layer_kinds = gemma2_kinds;
    }
    const double scalar = strcmp(model->name, "gemma-2-27b") == 0 ? 144.0 : 256.0;
    fw->embed_scale = (double)(float)sqrt((double)fw->width);
    fw->attn_scale = (double)(float)(1.0 / sqrt(scalar));
    fw->attn_softcap = 50.0;
    fw->logit_softcap = 30.0;
    return VP_OK;
}

/* The heads: the table's query heads, its key-value heads (grouped-query
   where fewer) and its head width where it sets one apart from d / H
   (Gemma's); kept heads alone run multi-head attention of width / H. */
static void adopt_heads(const vp_model_shape *s, unsigned keep, vp_forward_options *fw)
{
    if (keep & VP_KEEP_HEADS)
        return;
    fw->heads = s->heads;
    if (!(keep & VP_KEEP_KV_HEADS))
        fw->kv_heads = s->kv_heads != s->heads ? s->kv_heads : 0;
    if (!(keep & VP_KEEP_HEAD_DIM))
        fw->head_dim = s->head_dim_given ? s->head_dim : 0;
}

static void adopt_bias(const vp_model *model, vp_forward_options *fw)
{
    static const vp_bias biases[VP_MODEL_BIASES_COUNT] = {
        [VP_MODEL_BIASES_NO] = VP_BIAS_NONE,
        [VP_MODEL_BIASES_YES] = VP_BIAS_ALL,
        [VP_MODEL_BIASES_QKV] = VP_BIAS_QKV,
        [VP_MODEL_BIASES_MLP] = VP_BIAS_MLP,
    };
    fw->bias = biases[model->shape.biases];
}

/* Positions: learned (a table of the run's tokens), rope whole or on the
   table's fraction of a head, paired as the table says, and alibi are
   built; the others are refused, and kept positions stand in. */
static vp_status adopt_positions(const vp_model *model, unsigned keep, vp_forward_options *fw,
                                 vp_error *err)
{
    const vp_model_shape *s = &model->shape;
    const int interleaved = s->rotary_pairing == VP_ROTARY_INTERLEAVED;
    switch (s->positions) {
    case VP_MODEL_POSITIONS_NONE: fw->positions = VP_POSITIONS_NONE; return VP_OK;
    case VP_MODEL_POSITIONS_LEARNED: fw->positions = VP_POSITIONS_LEARNED; return VP_OK;
    case VP_MODEL_POSITIONS_ALIBI: fw->positions = VP_POSITIONS_ALIBI; return VP_OK;
    case VP_MODEL_POSITIONS_ROPE:
    case VP_MODEL_POSITIONS_PARTIAL_ROPE:
        /* a table of 26 columns gives partial rope no fraction */
        if (s->positions == VP_MODEL_POSITIONS_PARTIAL_ROPE && !(s->rotary_fraction < 1.0))
            return refuse(model, "its rotary fraction is not in the table", VP_FIX_POSITIONS, err);
        fw->positions = interleaved ? VP_POSITIONS_ROPE_INTERLEAVED : VP_POSITIONS_ROPE;
        if (!(keep & VP_KEEP_ROPE_FRACTION))
            fw->rope_fraction = s->rotary_fraction;
        return VP_OK;
    default: {
        char what[160];
        snprintf(what, sizeof what, "its positions are %s",
                 vp_model_positions_name(model->shape.positions));
        return refuse(model, what, VP_FIX_POSITIONS, err);
    }
    }
}

/* The model's base where RoPE runs, a stand-in's included; Llama 3.1's
   scaled low frequencies (Meta-Llama-3.1's config.json rope_scaling:
   llama3, factor 8, low_freq_factor 1, high_freq_factor 4,
   original_max_position_embeddings 8192), with its own base alone. */
static void adopt_rope(const vp_model *model, unsigned keep, vp_forward_options *fw)
{
    if ((fw->positions != VP_POSITIONS_ROPE && fw->positions != VP_POSITIONS_ROPE_INTERLEAVED) ||
        (keep & VP_KEEP_ROPE_THETA))
        return;
    if (!isnan(model->shape.rope_theta))
        fw->rope_theta = model->shape.rope_theta;
    if (starts(model, "llama-3.1-"))
        fw->rope_scaling = (vp_rope_scaling){8.0, 1.0, 4.0, 8192.0};
}

/* The columns that are copied as they stand. */
static void adopt_columns(const vp_model_shape *s, unsigned keep, vp_config *cfg,
                          vp_forward_options *fw)
{
    if (!(keep & VP_KEEP_VOCAB))
        fw->vocab = s->vocab;
    if (!(keep & VP_KEEP_MLP))
        fw->mlp = s->activation;
    if (!(keep & VP_KEEP_FFN))
        fw->ffn_width = s->ffn_width; /* exactly: ffn_mult stands by */
    if (!(keep & VP_KEEP_EPS) && !isnan(s->norm_eps))
        fw->eps = s->norm_eps;
    if (!(keep & VP_KEEP_TIE_EMBEDDINGS))
        fw->tie_embeddings = s->tied_embeddings;
    if (!(keep & VP_KEEP_FINAL_NORM))
        cfg->final_norm = s->final_norm ? VP_FINAL_NORM_YES : VP_FINAL_NORM_NO;
    adopt_heads(s, keep, fw);
}

/* The forms: the residual form where the model's placement is the parallel
   one (the others have no choice), the embedding norm, the logit scale and
   LayerNorm's bias. */
static void adopt_forms(const vp_model *model, unsigned keep, vp_forward_options *fw)
{
    const vp_model_shape *s = &model->shape;
    if (!(keep & VP_KEEP_RESIDUAL) && model->placement == VP_PARALLEL)
        fw->residual = s->residual;
    if (!(keep & VP_KEEP_EMBEDDING_NORM))
        fw->embedding_norm = s->embedding_norm;
    if (!(keep & VP_KEEP_LOGIT_SCALE))
        fw->logit_scale = s->logit_scale;
    if (!(keep & VP_KEEP_NORM))
        fw->norm_unbiased = fw->norm == VP_NORM_LAYERNORM && s->norm_unbiased;
}

vp_status vp_forward_options_from_model(const vp_model *model, unsigned keep, vp_config *cfg,
                                        vp_forward_options *fw, vp_error *err)
{
    if (!(keep & VP_KEEP_NORM))
        fw->norm = model->norm;
    if (model->qk_norm)
        fw->qk_norm = VP_QK_NORM_HEAD;
    const vp_model_shape *s = &model->shape;
    if (!s->known)
        return VP_OK;
    vp_status status = check_built(model, err);
    if (status != VP_OK)
        return status;
    if (!(keep & VP_KEEP_WIDTH))
        fw->width = s->width;
    /* OLMo 2 normalises q and k over all heads at once, not a head at a time */
    if (model->qk_norm && starts(model, "olmo-2-"))
        fw->qk_norm = VP_QK_NORM_FULL;
    if (starts(model, "gemma-2-") && (status = gemma2_facts(model, cfg, fw, err)) != VP_OK)
        return status;
    adopt_columns(s, keep, cfg, fw);
    adopt_forms(model, keep, fw);
    if (!(keep & VP_KEEP_BIAS))
        adopt_bias(model, fw);
    if (!(keep & VP_KEEP_POSITIONS) && (status = adopt_positions(model, keep, fw, err)) != VP_OK)
        return status;
    adopt_rope(model, keep, fw);
    return VP_OK;
}
