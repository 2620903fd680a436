/* The forward pass's option defaults, derived sizes and its init's name. */
#include "forward/network.h"

size_t vp_forward_kv_heads(const vp_forward_options *o)
{
    return o->kv_heads ? o->kv_heads : o->heads;
}

size_t vp_forward_head_dim(const vp_forward_options *o)
{
    return o->head_dim ? o->head_dim : o->heads ? o->width / o->heads : 0;
}

void vp_forward_options_init(vp_forward_options *o)
{
    *o = (vp_forward_options){
        .width = 512,
        .heads = VP_FORWARD_DEFAULT_HEADS,
        .ffn_mult = VP_FORWARD_DEFAULT_FFN_MULT,
        .vocab = VP_FORWARD_DEFAULT_VOCAB,
        .batch = VP_FORWARD_DEFAULT_BATCH,
        .tokens = VP_FORWARD_DEFAULT_TOKENS,
        .threads = 1,
        .norm = VP_NORM_LAYERNORM,
        .eps = VP_FORWARD_DEFAULT_EPS,
        .init = VP_INIT_GAIN,
        .bias = VP_BIAS_ALL,
        .seed = 1,
        .positions = VP_POSITIONS_NONE,
        .rope_theta = 10000.0,
        .embed_scale = 1.0,
        .logit_scale = 1.0,
    };
}

size_t vp_forward_ffn_width(const vp_forward_options *o)
{
    return o->ffn_width ? o->ffn_width : o->ffn_mult * o->width;
}

vp_sampling_method fw_init_method(vp_init init)
{
    return init == VP_INIT_TORCH ? VP_SAMPLING_TORCH_INIT : VP_SAMPLING_GAIN_INIT;
}

const char *vp_init_name(vp_init init)
{
    return vp_sampling_method_name(fw_init_method(init));
}
