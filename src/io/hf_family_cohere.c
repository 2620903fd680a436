/* Cohere's config.json (CohereConfig, Command R): attention and a SwiGLU MLP side by
 * side on one LayerNorm that has no bias, RoPE with interleaved pairs, a tied head
 * and logit_scale on the logits; with use_qk_norm (Command R+) a LayerNorm without
 * bias over each head of q and k, a weight per head. */
#include <cjson/cJSON.h>
#include <string.h>

#include "hf_config_keys.h"
#include "hf_families.h"
#include "hf_rope.h"

/* CohereConfig's defaults where the file is silent */
#define COHERE_ROPE_THETA 500000.0
#define COHERE_LOGIT_SCALE 0.0625
#define COHERE_PAD_TOKEN 0

const hf_key hf_cohere_keys[] = {
    {"intermediate_size", HF_KEY_READ, NULL},
    {"num_key_value_heads", HF_KEY_READ, NULL},
    {"head_dim", HF_KEY_READ, NULL},
    {"hidden_act", HF_KEY_READ, NULL},
    {"layer_norm_eps", HF_KEY_READ, NULL},
    {"logit_scale", HF_KEY_READ, NULL},
    {"use_qk_norm", HF_KEY_READ, NULL},
    {"attention_bias", HF_KEY_READ, NULL},
    {"rope_parameters", HF_KEY_READ, NULL},
    {"rope_theta", HF_KEY_READ, NULL},
    {"rope_scaling", HF_KEY_READ, NULL},
    {"partial_rotary_factor", HF_KEY_READ, NULL},
    {"tie_word_embeddings", HF_KEY_READ, NULL},
    {"pad_token_id", HF_KEY_READ, NULL},
    {"max_position_embeddings", HF_KEY_HARMLESS,
     "the longest context trained: default RoPE's frequencies do not depend on it"},
    {NULL, HF_KEY_READ, NULL},
};

/* CohereAttention's getattr(config, "head_dim", width / heads) */
static vp_status shape(hf_json *c, vp_hf_architecture *a)
{
    const vp_status s = hf_decoder_sizes(c, 1, "intermediate_size", a);
    return s == VP_OK ? hf_grouped_heads(c, 0, 0, a) : s;
}

/* logit_scale: CohereForCausalLM multiplies the logits by it, so null
   (None) cannot run there; above 0 here, as the loss's factor */
static vp_status logit_scale(hf_json *c, vp_hf_architecture *a)
{
    if (cJSON_IsNull(hf_field(c, "logit_scale")))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'logit_scale' is null; CohereForCausalLM multiplies the "
                       "logits by it, so it must be a number above 0 (CohereConfig's default "
                       "is %g)",
                       COHERE_LOGIT_SCALE);
    return hf_real(c, "logit_scale", COHERE_LOGIT_SCALE, &a->logit_scale);
}

/* the settings varprof does not hold to a reference: refused by name */
static vp_status refusals(hf_json *c, const char *act)
{
    vp_status s = hf_refuse_set(c, "attention_bias",
                                "it biases q, k, v and o but not the MLP, which no bias setting "
                                "of varprof's is; it reads Cohere with attention_bias false");
    if (s == VP_OK && strcmp(act, "silu") != 0)
        s = vp_fail(c->err, VP_EFORMAT,
                    "config.json: 'hidden_act' '%.40s': varprof reads Cohere with silu "
                    "(SwiGLU) alone",
                    act);
    return s;
}

vp_status hf_read_cohere(hf_json *c, vp_hf_architecture *a)
{
    const char *act = NULL;
    int qk_norm = 0;
    vp_status s = shape(c, a);
    if (s == VP_OK)
        s = hf_boolean(c, "use_qk_norm", 0, &qk_norm);
    if (s == VP_OK)
        s = hf_real(c, "layer_norm_eps", 1e-5, &a->eps);
    if (s == VP_OK)
        s = hf_text(c, "hidden_act", "silu", &act);
    if (s == VP_OK)
        s = logit_scale(c, a);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 1, &a->tied);
    if (s == VP_OK)
        s = hf_pad_token(c, COHERE_PAD_TOKEN, a);
    if (s == VP_OK) /* every coordinate of a head turns: partial_rotary_factor 1 alone */
        s = hf_rope_read(c, COHERE_ROPE_THETA, a);
    if (s == VP_OK)
        s = refusals(c, act);
    if (s != VP_OK)
        return s;
    a->positions = VP_POSITIONS_ROPE_INTERLEAVED; /* repeat_interleave: pairs (2i, 2i + 1) */
    a->mlp = VP_MLP_SWIGLU;
    a->bias = VP_BIAS_NONE;
    a->norm = VP_NORM_LAYERNORM;
    a->norm_unbiased = 1; /* CohereLayerNorm: the mean subtracted, a weight, no bias */
    a->placement = VP_PARALLEL;
    a->residual = VP_RESIDUAL_PARALLEL_SHARED_NORM; /* input_layernorm feeds both branches */
    /* q_norm and k_norm: CohereLayerNorm over each head's head_dim, weights
       [heads, head_dim] and [kv heads, head_dim], before RoPE */
    a->qk_norm = qk_norm ? VP_QK_NORM_HEAD_LAYERNORM : VP_QK_NORM_NONE;
    return VP_OK;
}
