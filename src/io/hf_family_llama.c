/* Llama's config.json and the families that share its keys (Mistral, Qwen2,
 * OLMo-2, and Gemma-2 with keys of its own): RMSNorm, RoPE, SwiGLU or
 * GeGLU, each family's defaults as its config class gives them. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "hf_families.h"
#include "hf_rope.h"

static int is(const vp_hf_architecture *a, const char *model_type)
{
    return strcmp(a->model_type, model_type) == 0;
}

/* A soft cap: absent, Gemma2Config's default; null, none (0); else a
   finite number above 0. */
static vp_status softcap(hf_json *c, const char *key, double fallback, double *out)
{
    const cJSON *v = hf_field(c, key);
    if (v && cJSON_IsNull(v)) {
        *out = 0.0;
        return VP_OK;
    }
    return hf_real(c, key, fallback, out);
}

/* Gemma-2's own fields: its activation, the scales and caps. */
static vp_status gemma2(hf_json *c, vp_hf_architecture *a)
{
    double scalar = 0.0;
    vp_status s = hf_gemma_mlp(c, a);
    if (s == VP_OK)
        s = hf_real(c, "query_pre_attn_scalar", 256.0, &scalar);
    if (s == VP_OK)
        s = softcap(c, "attn_logit_softcapping", 50.0, &a->attn_softcap);
    if (s == VP_OK)
        s = softcap(c, "final_logit_softcapping", 30.0, &a->logit_softcap);
    if (s != VP_OK)
        return s;
    /* Hugging Face multiplies by torch.tensor(hidden_size ** 0.5) in the
       model's dtype: float here */
    a->embed_scale = (double)(float)sqrt((double)a->width);
    a->attn_scale = (double)(float)(1.0 / sqrt(scalar));
    a->placement = VP_SANDWICH;
    return VP_OK;
}

/* Qwen2Config's max_window_layers where the file is silent */
#define QWEN2_MAX_WINDOW_LAYERS 28

/* Which layers slide (layer_types where given, else the family's rule:
   Mistral's every layer, Qwen2's and Qwen3's from max_window_layers on, Gemma-2's
   every other layer from the first; OLMo-2 and Llama none), and how wide
   the window: absent, the config classes' 4096; null, none (Mistral's
   full attention); Qwen2 keeps it only under use_sliding_window. */
static vp_status sliding_window(hf_json *c, vp_hf_architecture *a)
{
    const int never = is(a, "llama") || is(a, "olmo2");
    size_t from = never ? a->layers : 0, period = is(a, "gemma2") ? 2 : 0;
    int use = 1, has[2] = {0, 0};
    vp_status s = VP_OK;
    if (is(a, "qwen2") || is(a, "qwen3")) { /* Qwen3Config keeps Qwen2Config's rule */
        s = hf_boolean(c, "use_sliding_window", 0, &use);
        if (s == VP_OK)
            s = hf_whole(c, "max_window_layers", 0, QWEN2_MAX_WINDOW_LAYERS, 0, VP_MAX_LAYERS,
                         &from);
        if (!use) /* Qwen2Config: no window, so every layer full */
            from = a->layers;
    }
    if (s == VP_OK)
        s = hf_layer_types(c, a, from, period, has);
    if (s == VP_OK && has[VP_LAYER_SLIDING] && never)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'layer_types' makes a layer slide; a %s layer attends to "
                       "every earlier token",
                       a->model_type);
    const cJSON *width = hf_field(c, "sliding_window");
    if (s == VP_OK && use && has[VP_LAYER_SLIDING] && !cJSON_IsNull(width))
        s = hf_whole(c, "sliding_window", 0, 4096, 1, (size_t)1 << 40, &a->sliding_window);
    return s;
}

/* pad_token_id: the embedding row transformers gives no gradient
   (nn.Embedding's padding_idx, which counts a negative id from the end, as
   older converted Llama configs' -1); -1 for none. */
static vp_status pad_token(hf_json *c, vp_hf_architecture *a)
{
    const cJSON *v = hf_field(c, "pad_token_id");
    if (!v || cJSON_IsNull(v))
        return VP_OK;
    const double vocab = (double)a->vocab;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < -vocab ||
        v->valuedouble >= vocab)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'pad_token_id' must be a whole number from -%zu to %zu "
                       "(a negative id counts from the end of the vocabulary)",
                       a->vocab, a->vocab - 1);
    a->pad_token_id = (long)(v->valuedouble < 0 ? v->valuedouble + vocab : v->valuedouble);
    return VP_OK;
}

/* Gemma 2's head_dim defaults to Gemma2Config's 256, the others' to width / heads */
static vp_status shape(hf_json *c, vp_hf_architecture *a)
{
    const vp_status s = hf_decoder_sizes(c, 1, "intermediate_size", a);
    return s == VP_OK ? hf_grouped_heads(c, 0, is(a, "gemma2") ? 256 : 0, a) : s;
}

static vp_status biases(hf_json *c, const vp_hf_architecture *a)
{
    vp_status s = VP_OK;
    if (!is(a, "qwen2") && !is(a, "mistral"))
        s = hf_refuse_set(c, "attention_bias",
                          "varprof's projection biases have no q, k, v and o setting");
    if (s == VP_OK && is(a, "llama"))
        s = hf_refuse_set(c, "mlp_bias", "a Llama MLP with biases is not read");
    return s;
}

vp_status hf_read_llama(hf_json *c, vp_hf_architecture *a)
{
    const char *act = "silu";
    const int gemma = is(a, "gemma2");
    vp_status s = shape(c, a);
    if (s == VP_OK)
        s = hf_real(c, "rms_norm_eps", is(a, "olmo2") ? 1e-5 : 1e-6, &a->eps);
    if (s == VP_OK)
        s = hf_rope_read(c, 10000.0, a);
    if (s == VP_OK && !gemma)
        s = hf_text(c, "hidden_act", "silu", &act);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", gemma, &a->tied);
    if (s == VP_OK)
        s = biases(c, a);
    if (s == VP_OK)
        s = sliding_window(c, a);
    if (s == VP_OK)
        s = pad_token(c, a);
    if (s != VP_OK)
        return s;
    a->mlp = VP_MLP_SWIGLU;
    a->bias = is(a, "qwen2") ? VP_BIAS_QKV : VP_BIAS_NONE;
    a->norm = VP_NORM_RMSNORM;
    a->positions = VP_POSITIONS_ROPE;
    if (gemma)
        return gemma2(c, a);
    if (is(a, "olmo2")) { /* output norms, and QK-norm over all of q's and k's width */
        a->placement = VP_OUTPUT_NORM;
        a->qk_norm = VP_QK_NORM_FULL;
    }
    if (strcmp(act, "silu") != 0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'hidden_act' '%.40s': varprof reads silu (SwiGLU) alone", act);
    return VP_OK;
}
