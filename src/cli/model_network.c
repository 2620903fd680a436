#include "model_network.h"

#include <math.h>
#include <string.h>

/* Facts of a family that the table's shape has no column for and the
   forward pass does not build. A row is refused unless the command line
   gives the option that stands in (none: refused whatever is given). */
static const struct {
    const char *prefix, *why;
    option_id stand_in; /* OPT_COUNT: none */
} unbuilt_families[] = {
    {"gemma-",
     "Gemma scales its embedding by sqrt(d), its GeGLU takes the tanh GELU and Gemma 2 "
     "soft-caps its attention logits",
     OPT_COUNT},
    {"olmo-2-", "OLMo 2 normalises q and k over all heads at once, not one head at a time",
     OPT_COUNT},
    {"bert-", "BERT's attention sees both ways, not causally", OPT_COUNT},
    {"roberta-", "RoBERTa's attention sees both ways, not causally", OPT_COUNT},
    {"llama-3.1-", "Llama 3.1 scales RoPE's low frequencies (rope_scaling, factor 8)",
     OPT_POSITIONS},
};

/* A usage error: what of the model the forward pass does not build, and the
   option that runs a stand-in instead. */
static int refuse(const vp_model *model, const char *what, const char *instead)
{
    return cli_usage_error("--model %s: %s, which the forward pass does not build; %s",
                           model->name, what, instead);
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
        if (strncmp(model->name, unbuilt_families[i].prefix,
                    strlen(unbuilt_families[i].prefix)) != 0)
            continue;
        if (unbuilt_families[i].stand_in == OPT_COUNT)
            return refuse(model, unbuilt_families[i].why,
                          "run its stack by hand from the shape 'varprof models' shows, as "
                          "--placement, --width, --heads, --kv-heads, --head-dim, --mlp, "
                          "--ffn-width");
        if (!args->given[unbuilt_families[i].stand_in])
            return refuse(model, unbuilt_families[i].why,
                          "give --positions rope to run plain RoPE instead");
    }
    if (!args->given[OPT_WIDTH])
        fw->width = s->width;
    if (!args->given[OPT_VOCAB])
        fw->vocab = s->vocab;
    if (!args->given[OPT_MLP])
        fw->mlp = s->activation;
    if (!args->given[OPT_FFN_WIDTH] && !args->given[OPT_FFN_MULT])
        fw->ffn_width = s->ffn_width; /* exactly: ffn_mult stands by */
    if (!args->given[OPT_NORM_EPS] && !isnan(s->norm_eps))
        fw->eps = s->norm_eps;
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
        case VP_MODEL_BIASES_YES:
            fw->bias = VP_BIAS_ALL;
            break;
        case VP_MODEL_BIASES_NO:
            fw->bias = VP_BIAS_NONE;
            break;
        case VP_MODEL_BIASES_QKV:
            fw->bias = VP_BIAS_QKV;
            break;
        default:
            return refuse(model, "its biases are on the MLP alone",
                          "give --bias yes, no or qkv to run one of those instead");
        }
    }
    /* positions: learned (a table of the run's tokens) and rope are built; the
       others are not, and --positions chooses a stand-in */
    if (!args->given[OPT_POSITIONS]) {
        switch (s->positions) {
        case VP_MODEL_POSITIONS_NONE:
            fw->positions = VP_POSITIONS_NONE;
            break;
        case VP_MODEL_POSITIONS_LEARNED:
            fw->positions = VP_POSITIONS_LEARNED;
            break;
        case VP_MODEL_POSITIONS_ROPE:
            fw->positions = VP_POSITIONS_ROPE;
            break;
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
    if (fw->positions == VP_POSITIONS_ROPE && !args->given[OPT_ROPE_THETA] &&
        !isnan(s->rope_theta))
        fw->rope_theta = s->rope_theta;
    return EXIT_OK;
}
