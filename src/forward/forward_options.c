/* The forward pass's option defaults, derived sizes and the names of its enums. */
#include <string.h>

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
        .ffn_mult = 4,
        .vocab = 512,
        .batch = 2,
        .tokens = 64,
        .threads = 1,
        .norm = VP_NORM_LAYERNORM,
        .eps = 1e-5,
        .init = VP_INIT_GAIN,
        .bias = VP_BIAS_ALL,
        .seed = 1,
        .positions = VP_POSITIONS_NONE,
        .rope_theta = 10000.0,
        .embed_scale = 1.0,
    };
}

static const char *const mlp_names[VP_MLP_COUNT] = {"gelu",   "gelu-tanh", "relu",
                                                    "swiglu", "geglu",     "geglu-tanh"};

const char *vp_mlp_name(vp_mlp mlp)
{
    return (unsigned)mlp < VP_MLP_COUNT ? mlp_names[mlp] : NULL;
}

vp_status vp_mlp_parse(const char *name, vp_mlp *out, vp_error *err)
{
    for (int i = 0; i < VP_MLP_COUNT; i++)
        if (strcmp(name, mlp_names[i]) == 0) {
            *out = (vp_mlp)i;
            return VP_OK;
        }
    return vp_fail(err, VP_EINVAL,
                   "MLP '%s' is not one of: gelu, gelu-tanh, relu, swiglu, geglu, geglu-tanh",
                   name);
}

int vp_mlp_gated(vp_mlp mlp)
{
    return mlp == VP_MLP_SWIGLU || mlp == VP_MLP_GEGLU || mlp == VP_MLP_GEGLU_TANH;
}

size_t vp_forward_ffn_width(const vp_forward_options *o)
{
    return o->ffn_width ? o->ffn_width : o->ffn_mult * o->width;
}

static const char *const loss_names[VP_LOSS_COUNT] = {"copy", "next", "random"};

const char *vp_loss_name(vp_loss loss)
{
    return (unsigned)loss < VP_LOSS_COUNT ? loss_names[loss] : NULL;
}

vp_status vp_loss_parse(const char *name, vp_loss *out, vp_error *err)
{
    for (int i = 0; i < VP_LOSS_COUNT; i++)
        if (strcmp(name, loss_names[i]) == 0) {
            *out = (vp_loss)i;
            return VP_OK;
        }
    return vp_fail(err, VP_EINVAL, "loss '%s' is not one of: copy, next, random", name);
}

vp_sampling_method fw_init_method(vp_init init)
{
    return init == VP_INIT_TORCH ? VP_SAMPLING_TORCH_INIT : VP_SAMPLING_GAIN_INIT;
}

const char *vp_init_name(vp_init init)
{
    return vp_sampling_method_name(fw_init_method(init));
}
