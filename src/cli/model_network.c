/* --model NAME with the forward pass: the network built from the models table's shape. */
#include "model_network.h"

#include <math.h>
#include <string.h>

/* Facts of a family that the table's shape has no column for and the
   forward pass does not build: a row is refused whatever is given. */
static const struct {
    const char *prefix, *why;
} unbuilt_families[] = {
    {"gemma-3-", "Gemma 3 turns q and k by two RoPE bases, 10000 in its local layers and "
                 "1000000 in its global ones"},
    {"bert-", "BERT's attention sees both ways, not causally"},
    {"roberta-", "RoBERTa's attention sees both ways, not causally"},
};

/* Gemma 2's facts beyond the table's columns (Hugging Face's Gemma2Config
   and modeling_gemma2.py): the embedding times sqrt(d) rounded to float,
   the scores times query_pre_attn_scalar^-1/2 (256, but 144 = d / H for the
   27B, whose head_dim is 128) soft-capped at 50, the logits at 30; every
   other layer attends within a window of 4096 tokens, which the forward
   pass does not model, so more tokens are refused. */
#define GEMMA2_WINDOW 4096u
static int gemma2_facts(const vp_model *model, vp_forward_options *fw)
{
    if (fw->tokens > GEMMA2_WINDOW)
        return cli_usage_error("--model %s: --tokens %zu is beyond Gemma 2's sliding window of "
                               "%u tokens in every other layer, which the forward pass does not "
                               "build; use at most %u tokens",
                               model->name, fw->tokens, GEMMA2_WINDOW, GEMMA2_WINDOW);
    const double scalar = strcmp(model->name, "gemma-2-27b") == 0 ? 144.0 : 256.0;
    fw->embed_scale = (double)(float)sqrt((double)fw->width);
    fw->attn_scale = (double)(float)(1.0 / sqrt(scalar));
    fw->attn_softcap = 50.0;
    fw->logit_softcap = 30.0;
    return EXIT_OK;
}

/* A usage error: what of the model the forward pass does not build, and the
   option that runs a stand-in instead. */
static int refuse(const vp_model *model, const char *what, const char *instead)
{
    return cli_usage_error("--model %s: %s, which the forward pass does not build; %s", model->name,
                           what, instead);
}

int model_network(const cli_args *args, const vp_model *model, vp_config *cfg,
                  vp_forward_options *fw)
{
    const vp_model_shape *s = &model->shape;
    if (!s->known)
        return EXIT_OK;
    if (s->architecture != VP_MODEL_ARCHITECTURE_DENSE)
        return refuse(model,
                      s->architecture == VP_MODEL_ARCHITECTURE_MOE
                          ? "it is a mixture of experts"
                          : "its row is the encoder of an encoder-decoder, whose attention sees "
                            "both ways",
                      "run its stack by hand from the shape 'varprof models' shows");
    for (size_t i = 0; i < sizeof unbuilt_families / sizeof *unbuilt_families; i++) {
        if (strncmp(model->name, unbuilt_families[i].prefix, strlen(unbuilt_families[i].prefix)) !=
            0)
            continue;
        return refuse(model, unbuilt_families[i].why,
                      "run its stack by hand from the shape 'varprof models' shows, as "
                      "--placement, --width, --heads, --kv-heads, --head-dim, --mlp, "
                      "--ffn-width");
    }
    if (!args->given[OPT_WIDTH])
        fw->width = s->width;
    /* OLMo 2 normalises q and k over all heads at once, not a head at a time */
    if (model->qk_norm && strncmp(model->name, "olmo-2-", 7) == 0)
        fw->qk_norm = VP_QK_NORM_FULL;
    if (strncmp(model->name, "gemma-2-", 8) == 0) {
        const int rc = gemma2_facts(model, fw);
        if (rc != EXIT_OK)
            return rc;
    }
    if (!args->given[OPT_VOCAB])
        fw->vocab = s->vocab;
    if (!args->given[OPT_MLP])
        fw->mlp = s->activation;
    if (!args->given[OPT_FFN_WIDTH] && !args->given[OPT_FFN_MULT])
        fw->ffn_width = s->ffn_width; /* exactly: ffn_mult stands by */
    if (!args->given[OPT_NORM_EPS] && !isnan(s->norm_eps))
        fw->eps = s->norm_eps;
    if (!args->given[OPT_TIE_EMBEDDINGS])
        fw->tie_embeddings = s->tied_embeddings;
    if (!args->given[OPT_FINAL_NORM])
        cfg->final_norm = s->final_norm ? VP_FINAL_NORM_YES : VP_FINAL_NORM_NO;
    /* the heads: the table's query heads, its key-value heads (grouped-query
       where fewer) and its head width where it sets one apart from d / H
       (Gemma's); --heads alone runs multi-head attention of width / H */
    if (!args->given[OPT_HEADS]) {
        fw->heads = s->heads;
        if (!args->given[OPT_KV_HEADS])
            fw->kv_heads = s->kv_heads != s->heads ? s->kv_heads : 0;
        if (!args->given[OPT_HEAD_DIM])
            fw->head_dim = s->head_dim_given ? s->head_dim : 0;
    }
    if (!args->given[OPT_BIAS]) {
        switch (s->biases) {
        case VP_MODEL_BIASES_YES: fw->bias = VP_BIAS_ALL; break;
        case VP_MODEL_BIASES_NO: fw->bias = VP_BIAS_NONE; break;
        case VP_MODEL_BIASES_QKV: fw->bias = VP_BIAS_QKV; break;
        default:
            return refuse(model, "its biases are on the MLP alone",
                          "give --bias yes, no or qkv to run one of those instead");
        }
    }
    /* positions: learned (a table of the run's tokens) and rope are built; the
       others are not, and --positions chooses a stand-in */
    if (!args->given[OPT_POSITIONS]) {
        switch (s->positions) {
        case VP_MODEL_POSITIONS_NONE: fw->positions = VP_POSITIONS_NONE; break;
        case VP_MODEL_POSITIONS_LEARNED: fw->positions = VP_POSITIONS_LEARNED; break;
        case VP_MODEL_POSITIONS_ROPE: fw->positions = VP_POSITIONS_ROPE; break;
        default: {
            char what[160];
            snprintf(what, sizeof what, "its positions are %s",
                     vp_model_positions_name(s->positions));
            return refuse(model, what,
                          "give --positions none, learned or rope to run one of those instead");
        }
        }
    }
    /* the model's base where RoPE runs, a stand-in's included */
    if (fw->positions == VP_POSITIONS_ROPE && !args->given[OPT_ROPE_THETA] && !isnan(s->rope_theta))
        fw->rope_theta = s->rope_theta;
    /* Llama 3.1's scaled low frequencies (Meta-Llama-3.1's config.json
       rope_scaling: llama3, factor 8, low_freq_factor 1, high_freq_factor 4,
       original_max_position_embeddings 8192), with its own base alone */
    if (fw->positions == VP_POSITIONS_ROPE && !args->given[OPT_ROPE_THETA] &&
        strncmp(model->name, "llama-3.1-", 10) == 0)
        fw->rope_scaling = (vp_rope_scaling){8.0, 1.0, 4.0, 8192.0};
    return EXIT_OK;
}
