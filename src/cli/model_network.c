#include "model_network.h"

#include <math.h>

/* The part of the shape the forward pass cannot build yet, or NULL. */
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
    char what[160];
    if (!args->given[OPT_HEADS]) {
        fw->heads = s->heads;
        if (s->kv_heads != s->heads) {
            snprintf(what, sizeof what,
                     "its attention is grouped-query, %zu key-value heads for %zu query heads",
                     s->kv_heads, s->heads);
            return refuse(model, what, "give --heads H to run multi-head attention instead");
        }
        /* a head width of the table's own, apart from d / H (Gemma's) */
        if (s->head_dim_given && s->head_dim * s->heads != fw->width) {
            snprintf(what, sizeof what, "its %zu heads are %zu wide, %zu in all against the "
                     "stream's %zu",
                     s->heads, s->head_dim, s->heads * s->head_dim, fw->width);
            return refuse(model, what, "give --heads H to run heads of width / H instead");
        }
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
            if (!args->given[OPT_ROPE_THETA])
                fw->rope_theta = s->rope_theta;
            break;
        default:
            snprintf(what, sizeof what, "its positions are %s",
                     vp_model_positions_name(s->positions));
            return refuse(model, what,
                          "give --positions none, learned or rope to run one of those instead");
        }
    }
    return EXIT_OK;
}
