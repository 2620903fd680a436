/* config.json: the families' fields, each checked for its type and range,
 * defaults as Hugging Face's config classes give them. */
#include "hf_config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

vp_status hf_read_text(const char *path, char **text, size_t *length, vp_error *err)
{
    *text = NULL;
    FILE *in = fopen(path, "rb");
    if (!in)
        return vp_fail(err, VP_EIO, "%s: cannot be opened: %s", path, strerror(errno));
    struct stat st;
    vp_status status = VP_OK;
    if (fstat(fileno(in), &st) != 0 || !S_ISREG(st.st_mode))
        status = vp_fail(err, VP_EFORMAT, "%s: not a regular file", path);
    else if ((unsigned long long)st.st_size > HF_MOST_JSON_BYTES)
        status = vp_fail(err, VP_EFORMAT, "%s: %lld bytes, above the %u a JSON file here may have",
                         path, (long long)st.st_size, HF_MOST_JSON_BYTES);
    else if (!(*text = malloc((size_t)st.st_size + 1)))
        status =
            vp_fail(err, VP_ENOMEM, "%s: no memory for %lld bytes", path, (long long)st.st_size);
    else if (fread(*text, 1, (size_t)st.st_size, in) != (size_t)st.st_size)
        status = vp_fail(err, VP_EIO, "%s: cannot be read: %s", path, strerror(errno));
    (void)fclose(in); /* read-only */
    if (status != VP_OK) {
        free(*text);
        *text = NULL;
        return status;
    }
    (*text)[st.st_size] = '\0';
    *length = (size_t)st.st_size;
    return VP_OK;
}

typedef struct {
    const cJSON *root;
    vp_error *err;
} config;

/* A whole number field in [lo, hi]; absent: *out = fallback, or VP_EFORMAT
   when required. null counts as absent. */
static vp_status whole(const config *c, const char *key, int required, size_t fallback, size_t lo,
                       size_t hi, size_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->root, key);
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' is missing", key);
        *out = fallback;
        return VP_OK;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: '%s' must be a whole number from %zu to %zu", key, lo, hi);
    *out = (size_t)v->valuedouble;
    return VP_OK;
}

static vp_status real(const config *c, const char *key, double fallback, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->root, key);
    if (!v || cJSON_IsNull(v)) {
        *out = fallback;
        return VP_OK;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !(v->valuedouble > 0))
        return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' must be a finite number above 0",
                       key);
    *out = v->valuedouble;
    return VP_OK;
}

static vp_status boolean(const config *c, const char *key, int fallback, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->root, key);
    if (!v || cJSON_IsNull(v)) {
        *out = fallback;
        return VP_OK;
    }
    if (!cJSON_IsBool(v))
        return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' must be true or false", key);
    *out = cJSON_IsTrue(v);
    return VP_OK;
}

/* A string field; absent: fallback (NULL: required). */
static vp_status text(const config *c, const char *key, const char *fallback, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->root, key);
    if (!v || cJSON_IsNull(v)) {
        if (!fallback)
            return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' is missing", key);
        *out = fallback;
        return VP_OK;
    }
    if (!cJSON_IsString(v))
        return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' must be a string", key);
    *out = v->valuestring;
    return VP_OK;
}

/* A setting varprof does not model: refused when present and not off. */
static vp_status refuse_set(const config *c, const char *key, const char *why)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->root, key);
    if (v && !cJSON_IsNull(v) && !cJSON_IsFalse(v))
        return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' is set; %s", key, why);
    return VP_OK;
}

/* The width may be named two ways; two names must agree. */
static vp_status width_and_heads(const config *c, const char *width_key, const char *heads_key,
                                 vp_hf_architecture *a)
{
    vp_status s = whole(c, width_key, 1, 0, 1, VP_FORWARD_MAX_WIDTH, &a->width);
    if (s == VP_OK)
        s = whole(c, heads_key, 1, 0, 1, VP_FORWARD_MAX_WIDTH, &a->heads);
    size_t other = a->width;
    if (s == VP_OK && strcmp(width_key, "hidden_size") != 0)
        s = whole(c, "hidden_size", 0, a->width, 1, VP_FORWARD_MAX_WIDTH, &other);
    if (s == VP_OK && other != a->width)
        return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' %zu and 'hidden_size' %zu disagree",
                       width_key, a->width, other);
    if (s != VP_OK)
        return s;
    if (a->width % a->heads != 0 &&
        !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(c->root, "head_dim")))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: '%s' %zu does not divide the width '%s' %zu", heads_key,
                       a->heads, width_key, a->width);
    a->kv_heads = a->heads;
    a->head_dim = a->width / a->heads; /* llama() reads head_dim where given */
    return VP_OK;
}

static vp_status gpt2(const config *c, vp_hf_architecture *a)
{
    const char *act = NULL;
    size_t inner = 0;
    vp_status s = width_and_heads(c, "n_embd", "n_head", a);
    if (s == VP_OK && a->width % a->heads != 0) /* GPT-2 has no head_dim */
        return vp_fail(c->err, VP_EFORMAT, "config.json: 'n_head' %zu does not divide 'n_embd' %zu",
                       a->heads, a->width);
    if (s == VP_OK)
        s = whole(c, "n_layer", 1, 0, 1, VP_MAX_LAYERS, &a->layers);
    if (s == VP_OK)
        s = whole(c, "vocab_size", 1, 0, 1, VP_FORWARD_MAX_VOCAB, &a->vocab);
    if (s == VP_OK)
        s = whole(c, "n_positions", 1, 0, 1, VP_FORWARD_MAX_TOKENS, &a->n_ctx);
    if (s == VP_OK)
        s = whole(c, "n_inner", 0, 0, 1, VP_FORWARD_MAX_FFN_WIDTH, &inner);
    if (s == VP_OK)
        s = real(c, "layer_norm_epsilon", 1e-5, &a->eps);
    if (s == VP_OK)
        s = text(c, "activation_function", "gelu_new", &act);
    if (s == VP_OK)
        s = boolean(c, "tie_word_embeddings", 1, &a->tied);
    if (s == VP_OK)
        s = refuse_set(c, "scale_attn_by_inverse_layer_idx",
                       "varprof scales attention by 1/sqrt(head width) alone");
    if (s == VP_OK &&
        cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c->root, "scale_attn_weights")))
        s = vp_fail(c->err, VP_EFORMAT,
                    "config.json: 'scale_attn_weights' is false; varprof "
                    "scales attention by 1/sqrt(head width)");
    if (s != VP_OK)
        return s;
    a->ffn_width = inner ? inner : 4 * a->width;
    if (a->ffn_width > VP_FORWARD_MAX_FFN_WIDTH)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: the MLP's width 4 n_embd = %zu is above %u", a->ffn_width,
                       VP_FORWARD_MAX_FFN_WIDTH);
    static const struct {
        const char *hf;
        vp_mlp mlp;
    } acts[] = {{"gelu_new", VP_MLP_GELU_TANH},
                {"gelu_pytorch_tanh", VP_MLP_GELU_TANH},
                {"gelu", VP_MLP_GELU},
                {"relu", VP_MLP_RELU}};
    for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
        if (strcmp(act, acts[i].hf) == 0) {
            a->mlp = acts[i].mlp;
            a->bias = VP_BIAS_ALL;
            a->norm = VP_NORM_LAYERNORM;
            a->positions = VP_POSITIONS_LEARNED;
            return VP_OK;
        }
    return vp_fail(c->err, VP_EFORMAT,
                   "config.json: 'activation_function' '%.40s' is not one varprof runs (gelu_new, "
                   "gelu_pytorch_tanh, gelu, relu)",
                   act);
}

/* A soft cap: absent, Gemma2Config's default; null, none (0); else a
   finite number above 0. */
static vp_status softcap(const config *c, const char *key, double fallback, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->root, key);
    if (v && cJSON_IsNull(v)) {
        *out = 0.0;
        return VP_OK;
    }
    return real(c, key, fallback, out);
}

static int is(const vp_hf_architecture *a, const char *model_type)
{
    return strcmp(a->model_type, model_type) == 0;
}

/* rope_scaling: absent or null, none; Llama 3's ("rope_type" or the older
   "type" "llama3") read, each of its numbers required; another type
   refused, named. */
static vp_status rope_scaling(const config *c, vp_rope_scaling *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->root, "rope_scaling");
    if (!v || cJSON_IsNull(v))
        return VP_OK;
    if (!cJSON_IsObject(v))
        return vp_fail(c->err, VP_EFORMAT, "config.json: 'rope_scaling' must be an object or null");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(v, "rope_type");
    if (!type)
        type = cJSON_GetObjectItemCaseSensitive(v, "type");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "llama3") != 0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'rope_scaling' of type '%.40s' is not read; varprof reads "
                       "llama3's (Llama 3.1 and 3.2)",
                       cJSON_IsString(type) ? type->valuestring : "(none)");
    static const char *const keys[4] = {"factor", "low_freq_factor", "high_freq_factor",
                                        "original_max_position_embeddings"};
    double value[4];
    for (size_t i = 0; i < 4; i++) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(v, keys[i]);
        if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble))
            return vp_fail(c->err, VP_EFORMAT, "config.json: rope_scaling's '%s' must be a number",
                           keys[i]);
        value[i] = n->valuedouble;
    }
    if (!(value[0] >= 1.0 && value[0] <= 1e6 && value[1] > 0.0 && value[2] > value[1] &&
          value[2] <= 1e6 && value[3] >= 1.0 && value[3] <= 1e12 && value[3] == floor(value[3])))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: rope_scaling's factor %g, low_freq_factor %g, "
                       "high_freq_factor %g, original_max_position_embeddings %g: the factor "
                       "must be from 1 to 1e6, 0 < low < high <= 1e6, the context a whole "
                       "number from 1 to 1e12",
                       value[0], value[1], value[2], value[3]);
    *out = (vp_rope_scaling){value[0], value[1], value[2], value[3]};
    return VP_OK;
}

/* Gemma-2's own fields: its activation, the scales and caps, the window. */
static vp_status gemma2(const config *c, vp_hf_architecture *a)
{
    const char *act = NULL;
    double scalar = 0.0;
    vp_status s = text(c, "hidden_activation", "gelu_pytorch_tanh", &act);
    if (s == VP_OK)
        s = real(c, "query_pre_attn_scalar", 256.0, &scalar);
    if (s == VP_OK)
        s = softcap(c, "attn_logit_softcapping", 50.0, &a->attn_softcap);
    if (s == VP_OK)
        s = softcap(c, "final_logit_softcapping", 30.0, &a->logit_softcap);
    if (s == VP_OK)
        s = whole(c, "sliding_window", 0, 4096, 1, (size_t)1 << 40, &a->sliding_window);
    if (s != VP_OK)
        return s;
    if (strcmp(act, "gelu_pytorch_tanh") == 0)
        a->mlp = VP_MLP_GEGLU_TANH;
    else if (strcmp(act, "gelu") == 0)
        a->mlp = VP_MLP_GEGLU;
    else
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'hidden_activation' '%.40s': varprof reads gelu_pytorch_tanh "
                       "and gelu",
                       act);
    /* Hugging Face multiplies by torch.tensor(hidden_size ** 0.5) in the
       model's dtype: float here */
    a->embed_scale = (double)(float)sqrt((double)a->width);
    a->attn_scale = (double)(float)(1.0 / sqrt(scalar));
    a->placement = VP_SANDWICH;
    return VP_OK;
}

/* Llama, Mistral, Qwen2, OLMo-2 and Gemma-2: one set of fields, each
   family's defaults as its config class gives them. */
static vp_status llama(const config *c, vp_hf_architecture *a)
{
    const char *act = "silu";
    size_t kv = 0, head_dim = 0;
    const int gemma = is(a, "gemma2");
    vp_status s = width_and_heads(c, "hidden_size", "num_attention_heads", a);
    if (s == VP_OK)
        s = whole(c, "num_hidden_layers", 1, 0, 1, VP_MAX_LAYERS, &a->layers);
    if (s == VP_OK)
        s = whole(c, "vocab_size", 1, 0, 1, VP_FORWARD_MAX_VOCAB, &a->vocab);
    if (s == VP_OK)
        s = whole(c, "intermediate_size", 1, 0, 1, VP_FORWARD_MAX_FFN_WIDTH, &a->ffn_width);
    if (s == VP_OK)
        s = whole(c, "num_key_value_heads", 0, a->heads, 1, VP_FORWARD_MAX_WIDTH, &kv);
    if (s == VP_OK)
        s = whole(c, "head_dim", 0, gemma ? 256 : a->width / a->heads, 1, VP_FORWARD_MAX_WIDTH,
                  &head_dim);
    if (s == VP_OK)
        s = real(c, "rms_norm_eps", is(a, "olmo2") ? 1e-5 : 1e-6, &a->eps);
    if (s == VP_OK)
        s = real(c, "rope_theta", 10000.0, &a->rope_theta);
    if (s == VP_OK && !gemma)
        s = text(c, "hidden_act", "silu", &act);
    if (s == VP_OK)
        s = boolean(c, "tie_word_embeddings", gemma, &a->tied);
    if (s == VP_OK)
        s = rope_scaling(c, &a->rope_scaling);
    if (s == VP_OK && !is(a, "qwen2") && !is(a, "mistral"))
        s = refuse_set(c, "attention_bias", "varprof's --bias has no q, k, v and o setting");
    if (s == VP_OK && is(a, "llama"))
        s = refuse_set(c, "mlp_bias", "a Llama MLP with biases is not read");
    if (s != VP_OK)
        return s;
    if (kv > a->heads || a->heads % kv != 0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'num_key_value_heads' %zu does not divide "
                       "'num_attention_heads' %zu",
                       kv, a->heads);
    if (a->heads * head_dim > VP_FORWARD_MAX_WIDTH)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'num_attention_heads' %zu x 'head_dim' %zu is above %u",
                       a->heads, head_dim, VP_FORWARD_MAX_WIDTH);
    a->kv_heads = kv;
    a->head_dim = head_dim;
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
    if (is(a, "mistral") || is(a, "qwen2")) {
        int use_window = is(a, "mistral");
        if ((s = boolean(c, "use_sliding_window", use_window, &use_window)) != VP_OK)
            return s;
        if (use_window &&
            (s = whole(c, "sliding_window", 0, 0, 1, (size_t)1 << 40, &a->sliding_window)) != VP_OK)
            return s;
    }
    return VP_OK;
}

static const struct {
    const char *model_type;
    vp_status (*read)(const config *c, vp_hf_architecture *a);
} families[] = {{"gpt2", gpt2},   {"llama", llama},  {"mistral", llama},
                {"qwen2", llama}, {"gemma2", llama}, {"olmo2", llama}};

/* Known families varprof does not read yet, and why. */
static const struct {
    const char *model_type, *why;
} not_yet[] = {
    {"gemma", "Gemma-1's pre-norm blocks with Gemma's (1 + w) RMSNorm are not mapped; Gemma-2's "
              "(gemma2) are"},
    {"olmo", "OLMo-1's non-parametric LayerNorm has no weights to read"},
};

static vp_status read_root(const config *c, vp_hf_architecture *a)
{
    const char *type = NULL;
    vp_status s = text(c, "model_type", NULL, &type);
    if (s != VP_OK)
        return s;
    for (size_t i = 0; i < sizeof not_yet / sizeof *not_yet; i++)
        if (strcmp(type, not_yet[i].model_type) == 0)
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: model_type '%s' is not read yet (%s); varprof reads "
                           "gpt2, llama, mistral, qwen2, gemma2 and olmo2",
                           type, not_yet[i].why);
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (strcmp(type, families[i].model_type) == 0) {
            snprintf(a->model_type, sizeof a->model_type, "%s", type);
            return families[i].read(c, a);
        }
    return vp_fail(c->err, VP_EFORMAT,
                   "config.json: model_type '%.40s' is not one varprof reads (gpt2, llama, "
                   "mistral, qwen2, gemma2, olmo2)",
                   type);
}

vp_status hf_config_read(const char *dir, vp_hf_architecture *a, vp_error *err)
{
    memset(a, 0, sizeof *a);
    a->placement = VP_PRE_NORM;
    a->positions = VP_POSITIONS_NONE;
    a->embed_scale = 1.0;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/config.json", dir) >= sizeof path)
        return vp_fail(err, VP_EFORMAT, "%s: the path is too long", dir);
    char *json = NULL;
    size_t length = 0;
    vp_status s = hf_read_text(path, &json, &length, err);
    if (s != VP_OK)
        return s;
    cJSON *root = cJSON_ParseWithLength(json, length);
    free(json);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return vp_fail(err, VP_EFORMAT, "%s: not a JSON object", path);
    }
    const config c = {root, err};
    s = read_root(&c, a);
    cJSON_Delete(root);
    return s;
}
