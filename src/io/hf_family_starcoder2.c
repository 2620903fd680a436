/* StarCoder2's config.json (Starcoder2Config): LayerNorm with bias
 * (norm_epsilon), RoPE, grouped-query attention, every projection biased
 * under use_bias, a two-matrix MLP c_fc, c_proj; tied by default. */
#include <cjson/cJSON.h>

#include "hf_config_keys.h"
#include "hf_families.h"
#include "hf_rope.h"

/* Starcoder2Config's defaults where the file is silent */
#define STARCODER2_KV_HEADS 2

const hf_key hf_starcoder2_keys[] = {
    {"intermediate_size", HF_KEY_READ, NULL},
    {"num_key_value_heads", HF_KEY_READ, NULL},
    {"head_dim", HF_KEY_READ, NULL}, /* the attention's getattr(config, "head_dim") */
    {"norm_epsilon", HF_KEY_READ, NULL},
    {"rope_theta", HF_KEY_READ, NULL},
    {"rope_scaling", HF_KEY_READ, NULL},
    {"rope_parameters", HF_KEY_READ, NULL},
    {"partial_rotary_factor", HF_KEY_READ, NULL},
    {"hidden_act", HF_KEY_READ, NULL},
    {"use_bias", HF_KEY_READ, NULL},
    {"tie_word_embeddings", HF_KEY_READ, NULL},
    {"sliding_window", HF_KEY_READ, NULL},
    {"pad_token_id", HF_KEY_READ, NULL},
    {"max_position_embeddings", HF_KEY_HARMLESS,
     "the longest context trained: RoPE's frequencies do not depend on it"},
    /* the Hub's StarCoder2 configs still carry these pre-release settings */
    {"norm_type", HF_KEY_HARMLESS,
     "not read by Starcoder2Config: its norms are nn.LayerNorm whatever it says"},
    {"mlp_type", HF_KEY_HARMLESS,
     "not read by Starcoder2Config: its MLP is c_fc, c_proj whatever it says"},
    {NULL, HF_KEY_READ, NULL},
};

static vp_status shape(hf_json *c, vp_hf_architecture *a)
{
    const vp_status s = hf_decoder_sizes(c, 1, "intermediate_size", a);
    return s == VP_OK ? hf_grouped_heads(c, STARCODER2_KV_HEADS, 0, a) : s;
}

vp_status hf_read_starcoder2(hf_json *c, vp_hf_architecture *a)
{
    int use_bias = 1;
    vp_status s = shape(c, a);
    if (s == VP_OK)
        s = hf_real(c, "norm_epsilon", 1e-5, &a->eps);
    if (s == VP_OK)
        s = hf_rope_read(c, 10000.0, a);
    if (s == VP_OK)
        s = hf_two_matrix_mlp(c, "hidden_act", "gelu_pytorch_tanh", a);
    if (s == VP_OK)
        s = hf_boolean(c, "use_bias", 1, &use_bias);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 1, &a->tied);
    /* every layer attends within the window (Mistral's attention); null,
       the default, none */
    if (s == VP_OK && hf_present(c, "sliding_window"))
        s = hf_whole(c, "sliding_window", 0, 0, 1, (size_t)1 << 40, &a->sliding_window);
    if (s == VP_OK)
        s = hf_pad_token(c, -1, a);
    if (s != VP_OK)
        return s;
    a->bias = use_bias ? VP_BIAS_ALL : VP_BIAS_NONE; /* q, k, v, o, c_fc, c_proj */
    a->head_bias = 0;                                /* lm_head: bias=False */
    a->norm = VP_NORM_LAYERNORM;                     /* nn.LayerNorm: always a bias */
    a->positions = VP_POSITIONS_ROPE;
    return VP_OK;
}
