/* A forward pass's options from a built-in model's shape (the models table's row). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "varprof/forward_setup.h"

/* Families the forward pass does not build: a row is refused whatever is
   kept. */
static const struct {
    const char *prefix, *why;
} unbuilt_families[] = {
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

/* Gemma's embedding scale, which no column holds because every Gemma has it
   (Hugging Face's Gemma2 and Gemma3 models): the embedding times sqrt(d),
   rounded to float as torch.tensor(hidden_size ** 0.5) in the weights'
   dtype is. */
static void adopt_embed_scale(const vp_model *model, vp_forward_options *fw)
{
    if (starts(model, "gemma-"))
        fw->embed_scale = (double)(float)sqrt((double)fw->width);
}

/* Attention's columns: the window on the sliding layers (none over layers
   of MLPs alone, which have no attention), the scores' scale rounded to
   float as the checkpoint readers round it, the soft caps. */
static void adopt_attention(const vp_model_shape *s, unsigned keep, const vp_config *cfg,
                            vp_forward_options *fw)
{
    if (s->sliding_window && !cfg->mlp_only && !(keep & VP_KEEP_WINDOW)) {
        fw->sliding_window = s->sliding_window;
        fw->window_pattern = s->window_pattern;
        fw->layer_kinds = NULL;
    }
    if (s->attn_scalar > 0.0)
        fw->attn_scale = (double)(float)(1.0 / sqrt(s->attn_scalar));
    fw->attn_softcap = s->attn_softcap;
    fw->logit_softcap = s->logit_softcap;
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

/* The model's base where RoPE runs, a stand-in's included, with the
   table's linear factor, and the sliding layers' own base where some layers
   slide and others not; Llama 3.1's scaled low frequencies (Meta-Llama-3.1's
   config.json rope_scaling: llama3, factor 8, low_freq_factor 1,
   high_freq_factor 4, original_max_position_embeddings 8192), with its own
   base alone. */
static void adopt_rope(const vp_model *model, unsigned keep, vp_forward_options *fw)
{
    if ((fw->positions != VP_POSITIONS_ROPE && fw->positions != VP_POSITIONS_ROPE_INTERLEAVED) ||
        (keep & VP_KEEP_ROPE_THETA))
        return;
    const vp_model_shape *s = &model->shape;
    if (!isnan(s->rope_theta))
        fw->rope_theta = s->rope_theta;
    fw->rope_linear = s->rope_linear > 1.0 ? s->rope_linear : 0.0;
    if (fw->sliding_window && fw->window_pattern && !(keep & VP_KEEP_WINDOW))
        fw->rope_local_theta = s->rope_local_theta;
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
    adopt_embed_scale(model, fw);
    adopt_attention(s, keep, cfg, fw);
    adopt_columns(s, keep, cfg, fw);
    adopt_forms(model, keep, fw);
    if (!(keep & VP_KEEP_BIAS))
        adopt_bias(model, fw);
    if (!(keep & VP_KEEP_POSITIONS) && (status = adopt_positions(model, keep, fw, err)) != VP_OK)
        return status;
    adopt_rope(model, keep, fw);
    return VP_OK;
}
