/* GPT-NeoX's config.json (GPTNeoXConfig, Pythia): LayerNorm, the exact GELU, biases
 * everywhere but the head, RoPE on the first partial_rotary_factor of each head
 * (rotate-half), and use_parallel_residual's two norms side by side. */
#include <string.h>

#include "hf_config_keys.h"
#include "hf_families.h"
#include "hf_rope.h"

const hf_key hf_gpt_neox_keys[] = {
    {"intermediate_size", HF_KEY_READ, NULL},
    {"hidden_act", HF_KEY_READ, NULL},
    {"layer_norm_eps", HF_KEY_READ, NULL},
    {"rope_parameters", HF_KEY_READ, NULL},
    {"rope_theta", HF_KEY_READ, NULL},
    {"rope_scaling", HF_KEY_READ, NULL},
    {"partial_rotary_factor", HF_KEY_READ, NULL},
    {"rotary_pct", HF_KEY_READ, NULL},
    {"rotary_emb_base", HF_KEY_READ, NULL},
    {"use_parallel_residual", HF_KEY_READ, NULL},
    {"attention_bias", HF_KEY_READ, NULL},
    {"tie_word_embeddings", HF_KEY_READ, NULL},
    {"max_position_embeddings", HF_KEY_HARMLESS,
     "the longest context trained: default RoPE's frequencies do not depend on it"},
    {"pad_token_id", HF_KEY_HARMLESS,
     "GPT-NeoX's embedding has no padding row: every lookup gets its gradient"},
    {"rotary_emb_dim", HF_KEY_HARMLESS, "not read by GPTNeoXConfig"},
    {NULL, HF_KEY_READ, NULL},
};

/* The older names, rotary_pct and rotary_emb_base, are GPTNeoXConfig's
   defaults for the RoPE set where it gives none (its setdefault), 0.25 and
   10000 where they are absent too. */
static vp_status rope(hf_json *c, vp_hf_architecture *a)
{
    double base = 10000.0, pct = 0.25;
    vp_status s = hf_real(c, "rotary_emb_base", 10000.0, &base);
    if (s == VP_OK)
        s = hf_real(c, "rotary_pct", 0.25, &pct);
    if (s != VP_OK)
        return s;
    if (!(pct > 0.0 && pct <= 1.0))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'rotary_pct' %g must be above 0 and at most 1", pct);
    a->rope_fraction = pct;
    a->positions = VP_POSITIONS_ROPE;
    return hf_rope_read(c, base, a);
}

vp_status hf_read_gpt_neox(hf_json *c, vp_hf_architecture *a)
{
    const char *act = NULL;
    int parallel = 1, attention_bias = 1;
    vp_status s = hf_decoder_sizes(c, 0, "intermediate_size", a);
    if (s == VP_OK)
        s = hf_real(c, "layer_norm_eps", 1e-5, &a->eps);
    if (s == VP_OK)
        s = hf_text(c, "hidden_act", "gelu", &act);
    if (s == VP_OK)
        s = hf_boolean(c, "use_parallel_residual", 1, &parallel);
    if (s == VP_OK)
        s = hf_boolean(c, "attention_bias", 1, &attention_bias);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 0, &a->tied);
    if (s == VP_OK)
        s = rope(c, a);
    if (s != VP_OK)
        return s;
    if (!attention_bias)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'attention_bias' false leaves the MLP's biases beside an "
                       "unbiased attention, which no bias setting of varprof's is; it reads "
                       "GPT-NeoX with attention_bias true");
    if (strcmp(act, "gelu") != 0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'hidden_act' '%.40s': varprof reads GPT-NeoX with gelu "
                       "(the exact, erf GELU) alone",
                       act);
    a->mlp = VP_MLP_GELU;
    a->bias = VP_BIAS_ALL;
    a->norm = VP_NORM_LAYERNORM;
    a->placement = parallel ? VP_PARALLEL : VP_PRE_NORM;
    a->residual = parallel ? VP_RESIDUAL_PARALLEL_TWO_NORMS : VP_RESIDUAL_SEQUENTIAL;
    return VP_OK;
}
