/* --model NAME with the forward pass: the network built from the models table's shape. */
#include "model_network.h"

#include "varprof/forward_setup.h"

/* The parts of the network the command line gives: the model leaves them. */
static unsigned model_keep(const cli_args *args)
{
    static const struct {
        option_id id;
        unsigned keep;
    } kept[] = {
        {OPT_WIDTH, VP_KEEP_WIDTH},
        {OPT_VOCAB, VP_KEEP_VOCAB},
        {OPT_MLP, VP_KEEP_MLP},
        {OPT_FFN_WIDTH, VP_KEEP_FFN},
        {OPT_FFN_MULT, VP_KEEP_FFN},
        {OPT_NORM_EPS, VP_KEEP_EPS},
        {OPT_TIE_EMBEDDINGS, VP_KEEP_TIE_EMBEDDINGS},
        {OPT_FINAL_NORM, VP_KEEP_FINAL_NORM},
        {OPT_HEADS, VP_KEEP_HEADS},
        {OPT_KV_HEADS, VP_KEEP_KV_HEADS},
        {OPT_HEAD_DIM, VP_KEEP_HEAD_DIM},
        {OPT_BIAS, VP_KEEP_BIAS},
        {OPT_POSITIONS, VP_KEEP_POSITIONS},
        {OPT_ROPE_THETA, VP_KEEP_ROPE_THETA},
        {OPT_NORM, VP_KEEP_NORM},
        {OPT_RESIDUAL, VP_KEEP_RESIDUAL},
        {OPT_ROPE_FRACTION, VP_KEEP_ROPE_FRACTION},
        {OPT_EMBEDDING_NORM, VP_KEEP_EMBEDDING_NORM},
        {OPT_LOGIT_SCALE, VP_KEEP_LOGIT_SCALE},
        {OPT_SLIDING_WINDOW, VP_KEEP_WINDOW},
        {OPT_WINDOW_PATTERN, VP_KEEP_WINDOW},
    };
    unsigned keep = 0;
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        if (args->given[kept[i].id])
            keep |= kept[i].keep;
    return keep;
}

/* The option that runs a stand-in for what of the model is not built. */
static const char *instead(const vp_model *model, vp_fix fix)
{
    switch (fix) {
    case VP_FIX_POSITIONS:
        return "give --positions none, learned, rope, rope-interleaved or alibi to run one of "
               "those instead";
    default:
        return model->shape.architecture != VP_MODEL_ARCHITECTURE_DENSE
                   ? "run its stack by hand from the shape 'varprof models' shows"
                   : "run its stack by hand from the shape 'varprof models' shows, as "
                     "--placement, --width, --heads, --kv-heads, --head-dim, --mlp, "
                     "--ffn-width";
    }
}

int model_network(const cli_args *args, const vp_model *model, vp_config *cfg,
                  vp_forward_options *fw)
{
    vp_error err;
    if (vp_forward_options_from_model(model, model_keep(args), cfg, fw, &err) == VP_OK)
        return EXIT_OK;
    return cli_usage_error("--model %s; %s", err.message, instead(model, err.fix));
}
