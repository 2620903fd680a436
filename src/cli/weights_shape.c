/* A weights file's shape, taken where the command line is silent. */
#include "weights_shape.h"

#include "varprof/forward_setup.h"
#include "weights_options.h"

weights_shape_given weights_shape_given_by(const cli_args *args, option_id width, option_id vocab,
                                           option_id ffn_mult, option_id layers, option_id block)
{
    return (weights_shape_given){
        .width = args->given[width],
        .vocab = args->given[vocab],
        .ffn_mult = args->given[ffn_mult],
        .ffn_width = args->given[OPT_FFN_WIDTH],
        .mlp = args->given[OPT_MLP],
        .bias = args->given[OPT_BIAS],
        .norm = args->given[OPT_NORM],
        .heads = args->given[OPT_HEADS],
        .kv_heads = args->given[OPT_KV_HEADS],
        .head_dim = args->given[OPT_HEAD_DIM],
        .layers = args->given[layers],
        .block = args->given[block],
        .eps = args->given[OPT_NORM_EPS],
        .positions = args->given[OPT_POSITIONS],
        .rope_theta = args->given[OPT_ROPE_THETA],
        .tie_embeddings = args->given[OPT_TIE_EMBEDDINGS],
        .width_id = width,
        .vocab_id = vocab,
        .ffn_mult_id = ffn_mult,
        .layers_id = layers,
    };
}

unsigned weights_shape_keep(const weights_shape_given *given)
{
    const struct {
        int given;
        unsigned keep;
    } kept[] = {
        {given->width, VP_KEEP_WIDTH},
        {given->vocab, VP_KEEP_VOCAB},
        {given->ffn_mult || given->ffn_width, VP_KEEP_FFN},
        {given->mlp, VP_KEEP_MLP},
        {given->bias, VP_KEEP_BIAS},
        {given->norm, VP_KEEP_NORM},
        {given->heads, VP_KEEP_HEADS},
        {given->kv_heads, VP_KEEP_KV_HEADS},
        {given->head_dim, VP_KEEP_HEAD_DIM},
        {given->layers, VP_KEEP_LAYERS},
        {given->block, VP_KEEP_BLOCK},
        {given->eps, VP_KEEP_EPS},
        {given->positions, VP_KEEP_POSITIONS},
        {given->rope_theta, VP_KEEP_ROPE_THETA},
        {given->tie_embeddings, VP_KEEP_TIE_EMBEDDINGS},
    };
    unsigned keep = 0;
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        if (kept[i].given)
            keep |= kept[i].keep;
    return keep;
}

/* The option that sets what err->fix names. */
static const char *fix_option(vp_fix fix)
{
    switch (fix) {
    case VP_FIX_HEADS: return "--heads";
    case VP_FIX_HEAD_DIM: return "--head-dim";
    case VP_FIX_KV_HEADS: return "--kv-heads";
    case VP_FIX_EPS: return "--norm-eps";
    case VP_FIX_MLP: return "--mlp";
    case VP_FIX_BIAS: return "--bias";
    case VP_FIX_POSITIONS: return "--positions";
    case VP_FIX_ROPE_THETA: return "--rope-theta";
    case VP_FIX_TIE_EMBEDDINGS: return "--tie-embeddings";
    default: return NULL;
    }
}

/* The biases the file's projections have, for a message naming them. */
static vp_bias file_bias(const vp_safetensors *weights, const vp_hf_architecture *arch,
                         unsigned keep, vp_config cfg, vp_forward_options fw)
{
    vp_error err; /* a failure leaves the bias the shapes gave */
    (void)vp_forward_options_from_checkpoint(weights, arch, keep & ~VP_KEEP_BIAS, &cfg, &fw, &err);
    return fw.bias;
}

/* A refusal of the weights' shape, in the words of the command line; cfg
   and fw as they were asked. */
static int shape_refused(const char *path, const weights_shape_given *given, const vp_error *err,
                         const vp_safetensors *weights, const vp_hf_architecture *arch,
                         const vp_config *cfg, const vp_forward_options *fw)
{
    const char *option = fix_option(err->fix);
    if (err->fix == VP_FIX_HEAD_SHAPE)
        return cli_usage_error("--weights: %s: %s; give --heads and --head-dim", path,
                               err->message);
    if (err->fix == VP_FIX_MLP && !arch) /* the file's gating, not its kind */
        return cli_usage_error(
            "--weights: %s: %s; give --mlp %s or leave it out", path, err->message,
            vp_mlp_gated(fw->mlp) ? "gelu, gelu-tanh or relu" : "swiglu, geglu or geglu-tanh");
    if (err->fix == VP_FIX_BIAS)
        return cli_usage_error(
            "--weights: %s: %s; give --bias %s or leave it out", path, err->message,
            vp_bias_name(file_bias(weights, arch, weights_shape_keep(given), *cfg, *fw)));
    if (option)
        return cli_usage_error("--weights: %s: %s; leave %s out", path, err->message, option);
    return cli_usage_error("--weights: %s: %s", path, err->message);
}

int weights_adopt(const cli_args *args, const vp_safetensors *weights,
                  const vp_hf_architecture *arch, const weights_shape_given *given, vp_config *cfg,
                  vp_forward_options *fw, int usage_only)
{
    int rc = weights_refuse_shape(args, weights, arch, given, cfg, fw);
    if (rc != EXIT_OK)
        return rc; /* the shape options the file fixes, said before anything runs */
    vp_error err;
    const vp_config asked_cfg = *cfg;
    const vp_forward_options asked = *fw;
    const vp_status s =
        vp_forward_options_from_checkpoint(weights, arch, weights_shape_keep(given), cfg, fw, &err);
    if (s == VP_OK)
        return EXIT_OK;
    if (s == VP_EINVAL || usage_only)
        return shape_refused(args->value[OPT_WEIGHTS], given, &err, weights, arch, &asked_cfg,
                             &asked);
    return cli_runtime_error("--weights: %s: %s", args->value[OPT_WEIGHTS], err.message);
}

vp_status weights_read(const char *path, vp_safetensors *weights, vp_hf_architecture *arch,
                       int *is_checkpoint, vp_error *err)
{
    *is_checkpoint = vp_hf_is_checkpoint_dir(path);
    if (*is_checkpoint)
        return vp_hf_checkpoint_read(path, weights, arch, err);
    return vp_safetensors_read(path, weights, err);
}
