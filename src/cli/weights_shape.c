#include "weights_shape.h"

vp_status weights_shape_adopt(const vp_safetensors *weights, const weights_shape_given *given,
                              vp_config *cfg, vp_forward_options *o, vp_error *err)
{
    vp_config file_cfg = *cfg;
    vp_forward_options file = *o;
    const vp_status status = vp_forward_infer(weights, &file_cfg, &file, err);
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
                       vp_mlp_gated(file.mlp) ? "swiglu or geglu" : "gelu, gelu-tanh or relu");
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
    /* the heads' shape where the file's q, k (and QK-norm) rows tell it */
    if (!given->heads && (file.qk_norm || file.head_dim || file.kv_heads))
        o->heads = file.heads;
    if (!given->kv_heads)
        o->kv_heads = file.kv_heads;
    if (!given->head_dim)
        o->head_dim = file.head_dim;
    if (!given->heads && !o->head_dim && o->width % o->heads != 0)
        o->heads = 1; /* the file does not say; one head always divides */
    o->qk_norm = o->qk_norm || file.qk_norm;
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
