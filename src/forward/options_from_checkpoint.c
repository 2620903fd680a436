/* A forward pass's options from a weights file: a checkpoint's config.json, then the shapes. */
#include <string.h>

#include "varprof/forward_setup.h"

/* The norm's eps under the family's name for it. */
static const char *eps_key(const vp_hf_architecture *a)
{
    if (strcmp(a->model_type, "gpt2") == 0)
        return "layer_norm_epsilon";
    if (strcmp(a->model_type, "starcoder2") == 0)
        return "norm_epsilon";
    return "rms_norm_eps";
}

/* A kept value config.json disagrees with: the fact, and the setting to
   leave to the file. */
static vp_status arch_conflict(const vp_hf_architecture *a, unsigned keep,
                               const vp_forward_options *o, vp_error *err)
{
    const int gpt2 = strcmp(a->model_type, "gpt2") == 0;
    if ((keep & VP_KEEP_HEADS) && o->heads != a->heads)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_HEADS, "%zu heads, but config.json's '%s' is %zu",
                           o->heads, gpt2 ? "n_head" : "num_attention_heads", a->heads);
    if ((keep & VP_KEEP_EPS) && o->eps != a->eps)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_EPS, "norm eps %g, but config.json's '%s' is %g",
                           o->eps, eps_key(a), a->eps);
    if ((keep & VP_KEEP_MLP) && o->mlp != a->mlp)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_MLP, "MLP %s, but config.json's '%s' makes it %s",
                           vp_mlp_name(o->mlp), gpt2 ? "activation_function" : "hidden_act",
                           vp_mlp_name(a->mlp));
    if ((keep & VP_KEEP_POSITIONS) && o->positions != a->positions)
        return vp_fail_fix(
            err, VP_EINVAL, VP_FIX_POSITIONS, "positions %s, but a %s checkpoint's are %s",
            vp_positions_name(o->positions), a->model_type, vp_positions_name(a->positions));
    if ((keep & VP_KEEP_ROPE_THETA) && a->positions != VP_POSITIONS_ROPE)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_ROPE_THETA,
                           "a RoPE base, but a %s checkpoint's positions are %s", a->model_type,
                           vp_positions_name(a->positions));
    if ((keep & VP_KEEP_ROPE_THETA) && o->rope_theta != a->rope_theta)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_ROPE_THETA,
                           "RoPE base %g, but config.json's 'rope_theta' is %g", o->rope_theta,
                           a->rope_theta);
    if ((keep & VP_KEEP_KV_HEADS) && vp_forward_kv_heads(o) != a->kv_heads)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_KV_HEADS,
                           "%zu kv heads, but config.json's 'num_key_value_heads' is %zu",
                           vp_forward_kv_heads(o), a->kv_heads);
    if ((keep & VP_KEEP_HEAD_DIM) && vp_forward_head_dim(o) != a->head_dim)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_HEAD_DIM,
                           "head width %zu, but config.json makes it %zu", vp_forward_head_dim(o),
                           a->head_dim);
    if ((keep & VP_KEEP_TIE_EMBEDDINGS) && o->tie_embeddings != a->tied)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_TIE_EMBEDDINGS,
                           "tied embeddings %s, but config.json's 'tie_word_embeddings' is %s",
                           o->tie_embeddings ? "yes" : "no", a->tied ? "true" : "false");
    return VP_OK;
}

/* What config.json says beyond the tensors' names. */
static vp_status adopt_arch(const vp_hf_architecture *a, unsigned keep, vp_config *cfg,
                            vp_forward_options *o, vp_error *err)
{
    const vp_status status = arch_conflict(a, keep, o, err);
    if (status != VP_OK)
        return status;
    cfg->placement = a->placement;
    o->heads = a->heads;
    o->kv_heads = a->kv_heads == a->heads ? 0 : a->kv_heads;
    o->head_dim = a->width % a->heads == 0 && a->width / a->heads == a->head_dim ? 0 : a->head_dim;
    o->eps = a->eps;
    o->mlp = a->mlp;
    o->positions = a->positions;
    o->rope_fraction = a->rope_fraction;
    o->residual = a->residual;
    if (vp_positions_traits_of(a->positions)->rotary) {
        o->rope_theta = a->rope_theta;
        o->rope_scaling = a->rope_scaling;
        o->rope_linear = a->rope_linear;
        o->rope_local_theta = a->rope_local_theta;
    }
    /* the window on the layers that slide: a pointer into a, which the
       caller keeps while it runs o */
    o->sliding_window = a->sliding_window;
    o->layer_kinds = a->layer_kinds_given ? a->layer_kinds : NULL;
    if (a->qk_norm)
        o->qk_norm = a->qk_norm;
    o->tie_embeddings = a->tied;
    o->head_unbiased = !a->head_bias;
    o->embed_padding = a->pad_token_id >= 0 ? (size_t)a->pad_token_id + 1 : 0;
    o->position_offset = a->position_offset;
    o->embed_scale = a->embed_scale;
    o->attn_scale = a->attn_scale;
    o->attn_softcap = a->attn_softcap;
    o->logit_softcap = a->logit_softcap;
    o->logit_scale = a->logit_scale;
    o->norm_unbiased = a->norm_unbiased;
    return VP_OK;
}

/* A kept MLP kind, biases or heads the file's tensors disagree with. */
static vp_status shape_conflict(const vp_config *file_cfg, const vp_forward_options *file,
                                unsigned keep, const vp_forward_options *o, vp_error *err)
{
    if ((keep & VP_KEEP_MLP) && vp_mlp_gated(o->mlp) != vp_mlp_gated(file->mlp))
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_MLP, "MLP %s is %s, but the file's MLPs are %s",
                           vp_mlp_name(o->mlp), vp_mlp_gated(o->mlp) ? "gated" : "not gated",
                           vp_mlp_gated(file->mlp) ? "gated (mlp.gate, mlp.up, mlp.down)"
                                                   : "two-matrix (mlp.fc1, mlp.fc2)");
    if ((keep & VP_KEEP_BIAS) && o->bias != file->bias)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_BIAS,
                           "biases %s, but the file's projections' are %s (its layer 0's "
                           "attn.q.bias and mlp first projection's bias say so)",
                           vp_bias_name(o->bias), vp_bias_name(file->bias));
    if ((keep & VP_KEEP_HEADS) && !file_cfg->mlp_only && file->heads != o->heads)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_HEADS,
                           "%zu heads, but the file's QK-norm weights make heads of %zu "
                           "coordinates, so %zu heads",
                           o->heads, vp_forward_head_dim(file), file->heads);
    return VP_OK;
}

/* The shape the tensors describe, each part `keep` leaves open. */
static vp_status adopt_shape(const vp_safetensors *weights, unsigned keep, vp_config *cfg,
                             vp_forward_options *o, vp_error *err)
{
    vp_config file_cfg = *cfg;
    vp_forward_options file = *o;
    if (!(keep & VP_KEEP_HEADS)) /* not kept: the file's shapes decide, or ask */
        file.heads = 0;
    if (!(keep & VP_KEEP_HEAD_DIM))
        file.head_dim = 0;
    vp_status status = vp_forward_infer(weights, &file_cfg, &file, err);
    if (status == VP_EINVAL && err) /* the shapes admit several head shapes */
        err->fix = VP_FIX_HEAD_SHAPE;
    if (status != VP_OK || (status = shape_conflict(&file_cfg, &file, keep, o, err)) != VP_OK)
        return status;
    if (!(keep & VP_KEEP_WIDTH))
        o->width = file.width;
    o->embed_dim = file.embed_dim; /* OPT's, with project_in and project_out */
    if (!(keep & VP_KEEP_VOCAB))
        o->vocab = file.vocab;
    if (!(keep & VP_KEEP_FFN)) {
        o->ffn_mult = file.ffn_mult;
        o->ffn_width = file.ffn_width;
    }
    o->mlp = file.mlp;
    o->bias = file.bias;
    if (!(keep & VP_KEEP_NORM))
        o->norm = file.norm;
    /* the heads' shape as q's and k's rows read with the heads kept */
    if (!file_cfg.mlp_only) {
        o->heads = file.heads;
        o->head_dim = file.head_dim;
        if (!(keep & VP_KEEP_KV_HEADS))
            o->kv_heads = file.kv_heads;
    }
    o->head_unbiased = file.head_unbiased;
    /* embed_norm.weight's, BLOOM's word_embeddings_layernorm */
    o->embedding_norm = file.embedding_norm;
    if (file.qk_norm) /* the file's: per head or over the full width */
        o->qk_norm = file.qk_norm;
    /* pos_embed.weight makes the positions learned, unless the caller kept
       others (rope: the loader then names the tensor as unexpected) */
    if (o->positions == VP_POSITIONS_NONE)
        o->positions = file.positions;
    if (!(keep & VP_KEEP_LAYERS))
        cfg->layers = file_cfg.layers;
    if (!(keep & VP_KEEP_BLOCK))
        cfg->mlp_only = file_cfg.mlp_only;
    return VP_OK;
}

vp_status vp_forward_options_from_checkpoint(const vp_safetensors *weights,
                                             const vp_hf_architecture *arch, unsigned keep,
                                             vp_config *cfg, vp_forward_options *fw, vp_error *err)
{
    if (arch) { /* config.json first: its heads read the tensors */
        const vp_status status = adopt_arch(arch, keep, cfg, fw, err);
        if (status != VP_OK)
            return status;
        keep |= VP_KEEP_HEADS | VP_KEEP_HEAD_DIM;
    }
    const vp_status status = adopt_shape(weights, keep, cfg, fw, err);
    if (status == VP_OK)
        fw->weights = weights;
    return status;
}
