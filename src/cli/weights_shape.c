/* A weights file's shape, taken where the command line is silent. */
#include "weights_shape.h"

#include <stdio.h>
#include <string.h>

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

vp_status weights_shape_adopt(const vp_safetensors *weights, const weights_shape_given *given,
                              vp_config *cfg, vp_forward_options *o, vp_error *err)
{
    vp_config file_cfg = *cfg;
    vp_forward_options file = *o;
    if (!given->heads) /* not given: the file's shapes decide, or ask */
        file.heads = 0;
    if (!given->head_dim)
        file.head_dim = 0;
    const vp_status status = vp_forward_infer(weights, &file_cfg, &file, err);
    if (status == VP_EINVAL) { /* the shapes admit several head shapes */
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        return vp_fail(err, VP_EINVAL, "%s; give --heads and --head-dim", why);
    }
    if (status != VP_OK)
        return status;
    if (!given->width)
        o->width = file.width;
    if (!given->vocab)
        o->vocab = file.vocab;
    if (!given->ffn_mult && !given->ffn_width) {
        o->ffn_mult = file.ffn_mult;
        o->ffn_width = file.ffn_width;
    }
    if (given->mlp && vp_mlp_gated(o->mlp) != vp_mlp_gated(file.mlp))
        return vp_fail(err, VP_EINVAL,
                       "--mlp %s is %s, but the file's MLPs are %s; give --mlp %s or leave it "
                       "out",
                       vp_mlp_name(o->mlp), vp_mlp_gated(o->mlp) ? "gated" : "not gated",
                       vp_mlp_gated(file.mlp) ? "gated (mlp.gate, mlp.up, mlp.down)"
                                              : "two-matrix (mlp.fc1, mlp.fc2)",
                       vp_mlp_gated(file.mlp) ? "swiglu, geglu or geglu-tanh"
                                              : "gelu, gelu-tanh or relu");
    o->mlp = file.mlp;
    if (given->bias && o->bias != file.bias)
        return vp_fail(err, VP_EINVAL,
                       "--bias %s, but the file's projections are --bias %s (its layer 0's "
                       "attn.q.bias and mlp first projection's bias say so); give --bias %s or "
                       "leave it out",
                       vp_bias_name(o->bias), vp_bias_name(file.bias), vp_bias_name(file.bias));
    o->bias = file.bias;
    if (!given->norm)
        o->norm = file.norm;
    if (given->heads && !file_cfg.mlp_only && file.heads != o->heads)
        return vp_fail(err, VP_EINVAL,
                       "--heads %zu, but the file's QK-norm weights make heads of %zu "
                       "coordinates, so %zu heads; give --heads %zu or leave it out",
                       o->heads, vp_forward_head_dim(&file), file.heads, file.heads);
    /* the heads' shape as q's and k's rows read with the heads given */
    if (!file_cfg.mlp_only) {
        o->heads = file.heads;
        o->head_dim = file.head_dim;
        if (!given->kv_heads)
            o->kv_heads = file.kv_heads;
    }
    o->head_unbiased = file.head_unbiased;
    if (file.qk_norm) /* the file's: per head or over the full width */
        o->qk_norm = file.qk_norm;
    /* pos_embed.weight makes the positions learned, unless the command line
       chose others (rope: the loader then names the tensor as unexpected) */
    if (o->positions == VP_POSITIONS_NONE)
        o->positions = file.positions;
    if (!given->layers)
        cfg->layers = file_cfg.layers;
    if (!given->block)
        cfg->mlp_only = file_cfg.mlp_only;
    return VP_OK;
}

vp_status weights_read(const char *path, vp_safetensors *weights, vp_hf_architecture *arch,
                       int *is_checkpoint, vp_error *err)
{
    *is_checkpoint = vp_hf_is_checkpoint_dir(path);
    if (*is_checkpoint)
        return vp_hf_checkpoint_read(path, weights, arch, err);
    return vp_safetensors_read(path, weights, err);
}

vp_status weights_arch_adopt(const vp_hf_architecture *a, const weights_shape_given *given,
                             vp_forward_options *o, vp_error *err)
{
    const int gpt2 = strcmp(a->model_type, "gpt2") == 0;
    if (given->heads && o->heads != a->heads)
        return vp_fail(err, VP_EINVAL, "--heads %zu, but config.json's '%s' is %zu; leave it out",
                       o->heads, gpt2 ? "n_head" : "num_attention_heads", a->heads);
    if (given->eps && o->eps != a->eps)
        return vp_fail(err, VP_EINVAL, "--norm-eps %g, but config.json's '%s' is %g; leave it out",
                       o->eps, gpt2 ? "layer_norm_epsilon" : "rms_norm_eps", a->eps);
    if (given->mlp && o->mlp != a->mlp)
        return vp_fail(err, VP_EINVAL, "--mlp %s, but config.json's '%s' makes it %s; leave it out",
                       vp_mlp_name(o->mlp), gpt2 ? "activation_function" : "hidden_act",
                       vp_mlp_name(a->mlp));
    if (given->positions && o->positions != a->positions)
        return vp_fail(err, VP_EINVAL, "--positions %s, but a %s checkpoint's are %s; leave it out",
                       vp_positions_name(o->positions), a->model_type,
                       vp_positions_name(a->positions));
    if (given->rope_theta && a->positions != VP_POSITIONS_ROPE)
        return vp_fail(err, VP_EINVAL,
                       "--rope-theta, but a %s checkpoint's positions are %s; leave it out",
                       a->model_type, vp_positions_name(a->positions));
    if (given->rope_theta && o->rope_theta != a->rope_theta)
        return vp_fail(err, VP_EINVAL,
                       "--rope-theta %g, but config.json's 'rope_theta' is %g; leave it out",
                       o->rope_theta, a->rope_theta);
    if (given->kv_heads && vp_forward_kv_heads(o) != a->kv_heads)
        return vp_fail(err, VP_EINVAL,
                       "--kv-heads %zu, but config.json's 'num_key_value_heads' is %zu; leave "
                       "it out",
                       vp_forward_kv_heads(o), a->kv_heads);
    if (given->head_dim && vp_forward_head_dim(o) != a->head_dim)
        return vp_fail(err, VP_EINVAL, "--head-dim %zu, but config.json makes it %zu; leave it out",
                       vp_forward_head_dim(o), a->head_dim);
    o->heads = a->heads;
    o->kv_heads = a->kv_heads == a->heads ? 0 : a->kv_heads;
    o->head_dim = a->width % a->heads == 0 && a->width / a->heads == a->head_dim ? 0 : a->head_dim;
    o->eps = a->eps;
    o->mlp = a->mlp;
    o->positions = a->positions;
    if (a->positions == VP_POSITIONS_ROPE) {
        o->rope_theta = a->rope_theta;
        o->rope_scaling = a->rope_scaling;
    }
    if (a->qk_norm)
        o->qk_norm = a->qk_norm;
    if (given->tie_embeddings && o->tie_embeddings != a->tied)
        return vp_fail(err, VP_EINVAL,
                       "--tie-embeddings %s, but config.json's 'tie_word_embeddings' is %s; "
                       "leave it out",
                       o->tie_embeddings ? "yes" : "no", a->tied ? "true" : "false");
    o->tie_embeddings = a->tied;
    o->head_unbiased = !a->head_bias;
    o->embed_padding = a->pad_token_id >= 0 ? (size_t)a->pad_token_id + 1 : 0;
    o->embed_scale = a->embed_scale;
    o->attn_scale = a->attn_scale;
    o->attn_softcap = a->attn_softcap;
    o->logit_softcap = a->logit_softcap;
    return VP_OK;
}
