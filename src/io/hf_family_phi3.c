/* Phi-3's config.json (Phi3Config): Llama's pre-norm RMSNorm blocks with
 * q, k, v fused in qkv_proj and gate, up in gate_up_proj (hf_names_llama_kin.c
 * splits them), SwiGLU, RoPE; its longrope scaling is refused by name. */
#include <cjson/cJSON.h>
#include <string.h>

#include "hf_config_keys.h"
#include "hf_families.h"
#include "hf_rope.h"

/* Phi3Config's pad_token_id where the file is silent */
#define PHI3_PAD_TOKEN 32000

const hf_key hf_phi3_keys[] = {
    {"intermediate_size", HF_KEY_READ, NULL},
    {"num_key_value_heads", HF_KEY_READ, NULL},
    {"head_dim", HF_KEY_READ, NULL}, /* the attention's getattr(config, "head_dim") */
    {"rms_norm_eps", HF_KEY_READ, NULL},
    {"rope_theta", HF_KEY_READ, NULL},
    {"rope_scaling", HF_KEY_READ, NULL},
    {"rope_parameters", HF_KEY_READ, NULL},
    {"partial_rotary_factor", HF_KEY_READ, NULL},
    {"hidden_act", HF_KEY_READ, NULL},
    {"tie_word_embeddings", HF_KEY_READ, NULL},
    {"sliding_window", HF_KEY_READ, NULL},
    {"pad_token_id", HF_KEY_READ, NULL},
    {"max_position_embeddings", HF_KEY_HARMLESS,
     "the longest context trained: default RoPE's frequencies do not depend on it"},
    {"attention_bias", HF_KEY_HARMLESS,
     "not read by Phi3Config: qkv_proj and o_proj have no bias whatever it says (a bias "
     "tensor would be refused as unknown)"},
    {"auto_map", HF_KEY_HARMLESS,
     "the Hub's remote-code classes; varprof is held to transformers' own Phi3"},
    {"original_max_position_embeddings", HF_KEY_HARMLESS,
     "longrope's switch between its short and long factors; default RoPE (the one read) "
     "does not use it"},
    {NULL, HF_KEY_READ, NULL},
};

/* Phi3Config reads RoPE of type default or longrope ("su" and "yarn" are
   its older names for longrope); longrope's per-frequency factors are not
   read yet. */
static vp_status refuse_longrope(hf_json *c)
{
    static const char *const keys[] = {"rope_scaling", "rope_parameters"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const cJSON *set = hf_field(c, keys[i]);
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(set, "rope_type");
        if (!type)
            type = cJSON_GetObjectItemCaseSensitive(set, "type");
        if (!cJSON_IsString(type))
            continue;
        const char *t = type->valuestring;
        if (strcmp(t, "longrope") == 0 || strcmp(t, "su") == 0 || strcmp(t, "yarn") == 0)
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: %s of type '%.40s' is Phi-3's longrope scaling, which "
                           "varprof does not read yet; it reads Phi-3 with RoPE of type default",
                           keys[i], t);
        if (strcmp(t, "default") != 0)
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: %s of type '%.40s': Phi-3 has RoPE of type default or "
                           "longrope, and varprof reads default",
                           keys[i], t);
    }
    return VP_OK;
}

static vp_status shape(hf_json *c, vp_hf_architecture *a)
{
    const vp_status s = hf_decoder_sizes(c, 1, "intermediate_size", a);
    return s == VP_OK ? hf_grouped_heads(c, 0, 0, a) : s;
}

vp_status hf_read_phi3(hf_json *c, vp_hf_architecture *a)
{
    const char *act = NULL;
    vp_status s = shape(c, a);
    if (s == VP_OK)
        s = hf_real(c, "rms_norm_eps", 1e-5, &a->eps);
    if (s == VP_OK)
        s = refuse_longrope(c);
    if (s == VP_OK)
        s = hf_rope_read(c, 10000.0, a);
    if (s == VP_OK)
        s = hf_text(c, "hidden_act", "silu", &act);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 0, &a->tied);
    /* every layer attends within the window (Mistral's mask); null none */
    if (s == VP_OK && hf_present(c, "sliding_window"))
        s = hf_whole(c, "sliding_window", 0, 0, 1, (size_t)1 << 40, &a->sliding_window);
    if (s == VP_OK)
        s = hf_pad_token(c, PHI3_PAD_TOKEN, a);
    if (s != VP_OK)
        return s;
    if (strcmp(act, "silu") != 0) /* gate_up_proj's gate half through ACT2FN */
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'hidden_act' '%.40s': varprof reads Phi-3 with silu "
                       "(SwiGLU) alone",
                       act);
    a->mlp = VP_MLP_SWIGLU;
    a->bias = VP_BIAS_NONE; /* qkv_proj, o_proj, gate_up_proj, down_proj: bias=False */
    a->norm = VP_NORM_RMSNORM;
    a->positions = VP_POSITIONS_ROPE;
    return VP_OK;
}
