/* Phi-1's and Phi-2's config.json (PhiConfig): one LayerNorm shared by attention and the
 * MLP side by side, biases everywhere and on the head, gelu_new, RoPE on the first
 * partial_rotary_factor of each head (rotate-half). */
#include <string.h>

#include "hf_config_keys.h"
#include "hf_families.h"
#include "hf_rope.h"

const hf_key hf_phi_keys[] = {
    {"intermediate_size", HF_KEY_READ, NULL},
    {"num_key_value_heads", HF_KEY_READ, NULL},
    {"hidden_act", HF_KEY_READ, NULL},
    {"layer_norm_eps", HF_KEY_READ, NULL},
    {"rope_parameters", HF_KEY_READ, NULL},
    {"rope_theta", HF_KEY_READ, NULL},
    {"rope_scaling", HF_KEY_READ, NULL},
    {"partial_rotary_factor", HF_KEY_READ, NULL},
    {"qk_layernorm", HF_KEY_READ, NULL},
    {"tie_word_embeddings", HF_KEY_READ, NULL},
    {"pad_token_id", HF_KEY_READ, NULL},
    {"max_position_embeddings", HF_KEY_HARMLESS,
     "the longest context trained: default RoPE's frequencies do not depend on it"},
    {NULL, HF_KEY_READ, NULL},
};

static vp_status shape(hf_json *c, vp_hf_architecture *a)
{
    vp_status s = hf_decoder_sizes(c, 0, "intermediate_size", a);
    if (s == VP_OK)
        s = hf_whole(c, "num_key_value_heads", 0, a->heads, 1, VP_FORWARD_MAX_WIDTH, &a->kv_heads);
    if (s == VP_OK && (a->kv_heads > a->heads || a->heads % a->kv_heads != 0))
        s = vp_fail(c->err, VP_EFORMAT,
                    "config.json: 'num_key_value_heads' %zu does not divide "
                    "'num_attention_heads' %zu",
                    a->kv_heads, a->heads);
    return s;
}

vp_status hf_read_phi(hf_json *c, vp_hf_architecture *a)
{
    const char *act = NULL;
    int qk_layernorm = 0;
    vp_status s = shape(c, a);
    if (s == VP_OK)
        s = hf_real(c, "layer_norm_eps", 1e-5, &a->eps);
    if (s == VP_OK)
        s = hf_text(c, "hidden_act", "gelu_new", &act);
    if (s == VP_OK)
        s = hf_boolean(c, "qk_layernorm", 0, &qk_layernorm);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 0, &a->tied);
    if (s == VP_OK)
        s = hf_pad_token(c, -1, a);
    a->rope_fraction = 0.5; /* PhiConfig's partial_rotary_factor */
    a->positions = VP_POSITIONS_ROPE;
    if (s == VP_OK)
        s = hf_rope_read(c, 10000.0, a);
    if (s != VP_OK)
        return s;
    if (qk_layernorm)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'qk_layernorm' true puts a LayerNorm with a bias on each "
                       "head's queries and keys; varprof's QK-norm is RMSNorm, so it reads Phi "
                       "with qk_layernorm false");
    if (strcmp(act, "gelu_new") != 0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'hidden_act' '%.40s': varprof reads Phi with gelu_new (the "
                       "tanh GELU) alone",
                       act);
    a->mlp = VP_MLP_GELU_TANH;
    a->bias = VP_BIAS_ALL;
    a->head_bias = 1;
    a->norm = VP_NORM_LAYERNORM;
    a->placement = VP_PARALLEL;
    a->residual = VP_RESIDUAL_PARALLEL_SHARED_NORM;
    return VP_OK;
}
