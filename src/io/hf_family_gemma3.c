/* Gemma 3's text config.json (Gemma3TextConfig): Gemma 2's sandwich, (1 + w)
 * norms, scaled embedding and GeGLU, a (1 + w) RMSNorm over each head of q
 * and k, no soft caps by default, and a RoPE base per layer type. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_config_keys.h"
#include "hf_families.h"

/* Gemma3TextConfig's defaults where the file is silent */
#define GEMMA3_HEAD_DIM 256
#define GEMMA3_GLOBAL_THETA 1000000.0
#define GEMMA3_LOCAL_THETA 10000.0
#define GEMMA3_SCALAR 256.0
#define GEMMA3_WINDOW 4096
#define GEMMA3_PATTERN 6

const hf_key hf_gemma3_keys[] = {
    {"intermediate_size", HF_KEY_READ, NULL},
    {"num_key_value_heads", HF_KEY_READ, NULL},
    {"head_dim", HF_KEY_READ, NULL},
    {"rms_norm_eps", HF_KEY_READ, NULL},
    {"rope_theta", HF_KEY_READ, NULL},
    {"rope_local_base_freq", HF_KEY_READ, NULL},
    {"rope_scaling", HF_KEY_READ, NULL},
    {"rope_parameters", HF_KEY_READ, NULL},
    {"hidden_activation", HF_KEY_READ, NULL},
    {"query_pre_attn_scalar", HF_KEY_READ, NULL},
    {"attn_logit_softcapping", HF_KEY_READ, NULL},
    {"final_logit_softcapping", HF_KEY_READ, NULL},
    {"tie_word_embeddings", HF_KEY_READ, NULL},
    {"attention_bias", HF_KEY_READ, NULL},
    {"use_bidirectional_attention", HF_KEY_READ, NULL},
    {"sliding_window", HF_KEY_READ, NULL},
    {"layer_types", HF_KEY_READ, NULL},
    {"sliding_window_pattern", HF_KEY_READ, NULL},
    {"_sliding_window_pattern", HF_KEY_READ, NULL},
    {"pad_token_id", HF_KEY_READ, NULL},
    {"hidden_act", HF_KEY_HARMLESS, "Gemma 3's MLP reads hidden_activation"},
    {"max_position_embeddings", HF_KEY_HARMLESS,
     "the longest context trained: default RoPE's frequencies do not depend on it"},
    {NULL, HF_KEY_READ, NULL},
};

static vp_status shape(hf_json *c, vp_hf_architecture *a)
{
    const vp_status s = hf_decoder_sizes(c, 1, "intermediate_size", a);
    return s == VP_OK ? hf_grouped_heads(c, 0, GEMMA3_HEAD_DIM, a) : s;
}

/* A soft cap: absent or null, none (Gemma3TextConfig's default); else a
   finite number above 0. */
static vp_status softcap(hf_json *c, const char *key, double *out)
{
    *out = 0.0;
    return hf_present(c, key) ? hf_real(c, key, 0.0, out) : VP_OK;
}

/* Which layers slide: layer_types where given, else every layer but each
   sliding_window_pattern-th (hf_layer_types). has[] by vp_layer_kind. */
static vp_status layer_kinds(hf_json *c, vp_hf_architecture *a, int has[2])
{
    size_t pattern = GEMMA3_PATTERN;
    const cJSON *types = hf_field(c, "layer_types");
    if (!types || cJSON_IsNull(types)) {
        const char *key = hf_present(c, "sliding_window_pattern") ? "sliding_window_pattern"
                                                                  : "_sliding_window_pattern";
        const vp_status s = hf_whole(c, key, 0, GEMMA3_PATTERN, 1, VP_MAX_LAYERS, &pattern);
        if (s != VP_OK)
            return s;
    }
    return hf_layer_types(c, a, 0, pattern, has);
}

/* A RoPE set's type: default, or on the full layers linear with its factor
   (*linear; 0 for default); any other refused by name. */
static vp_status rope_type(hf_json *c, const cJSON *set, const char *where, int full,
                           double *linear)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(set, "rope_type");
    if (!type)
        type = cJSON_GetObjectItemCaseSensitive(set, "type");
    *linear = 0.0;
    if (!type || cJSON_IsNull(type) ||
        (cJSON_IsString(type) && strcmp(type->valuestring, "default") == 0))
        return VP_OK;
    if (!full || !cJSON_IsString(type) || strcmp(type->valuestring, "linear") != 0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: %s of type '%.40s' is not read for gemma3_text; varprof "
                       "reads default RoPE, and linear scaling on the full layers",
                       where, cJSON_IsString(type) ? type->valuestring : "(not a string)");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(set, "factor");
    if (!cJSON_IsNumber(f) || !(f->valuedouble >= 1.0 && f->valuedouble <= 1e6))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: %s: linear scaling's 'factor' must be a number from 1 to "
                       "1e6",
                       where);
    *linear = f->valuedouble;
    return VP_OK;
}

/* rope_parameters' entry for a layer type (kinds[k], k 1 for the full
   layers): its theta and its type. */
static vp_status parameters_set(hf_json *c, const cJSON *p, const char *kind, int full,
                                double *theta, double *linear)
{
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(p, kind);
    if (!set)
        return VP_OK;
    if (!cJSON_IsObject(set))
        return vp_fail(c->err, VP_EFORMAT, "config.json: rope_parameters' '%s' must be an object",
                       kind);
    for (const cJSON *e = set->child; e; e = e->next)
        if (strcmp(e->string, "rope_type") != 0 && strcmp(e->string, "rope_theta") != 0 &&
            strcmp(e->string, "factor") != 0)
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: rope_parameters' '%s' holds '%.60s'; varprof reads "
                           "rope_type, rope_theta and linear's factor for gemma3_text",
                           kind, e->string);
    char where[64];
    snprintf(where, sizeof where, "rope_parameters' '%s'", kind);
    const vp_status s = rope_type(c, set, where, full, linear);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(set, "rope_theta");
    if (s != VP_OK || !t)
        return s;
    if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || !(t->valuedouble > 0.0))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: rope_parameters' '%s' rope_theta must be a number above 0",
                       kind);
    *theta = t->valuedouble;
    return VP_OK;
}

/* The Hub's spelling: rope_local_base_freq, rope_theta, and rope_scaling on
   the full layers. */
static vp_status hub_bases(hf_json *c, double theta[2], double *linear)
{
    vp_status s = hf_real(c, "rope_local_base_freq", GEMMA3_LOCAL_THETA, &theta[0]);
    if (s == VP_OK)
        s = hf_real(c, "rope_theta", GEMMA3_GLOBAL_THETA, &theta[1]);
    const cJSON *scaling = hf_field(c, "rope_scaling");
    *linear = 0.0;
    if (s != VP_OK || !scaling || cJSON_IsNull(scaling))
        return s;
    if (!cJSON_IsObject(scaling))
        return vp_fail(c->err, VP_EFORMAT, "config.json: 'rope_scaling' must be an object or null");
    return rope_type(c, scaling, "'rope_scaling'", 1, linear);
}

/* The two bases, sliding [0] and full [1], and the full layers' linear
   factor, from the Hub's spelling and transformers 5's (rope_parameters
   per layer type), which must agree. */
static vp_status rope_bases(hf_json *c, double theta[2], double *linear)
{
    double hub[2], hub_linear = 0.0;
    vp_status s = hub_bases(c, hub, &hub_linear);
    theta[0] = hub[0], theta[1] = hub[1], *linear = hub_linear;
    const cJSON *p = hf_field(c, "rope_parameters");
    if (s != VP_OK || !p || cJSON_IsNull(p))
        return s;
    if (!cJSON_IsObject(p))
        return vp_fail(c->err, VP_EFORMAT, "config.json: 'rope_parameters' must be an object");
    static const char *const kinds[2] = {"sliding_attention", "full_attention"};
    for (const cJSON *e = p->child; e; e = e->next)
        if (strcmp(e->string, kinds[0]) != 0 && strcmp(e->string, kinds[1]) != 0)
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: rope_parameters holds '%.60s'; varprof reads one entry "
                           "per layer type (sliding_attention, full_attention) for gemma3_text",
                           e->string);
    double unused = 0.0;
    s = parameters_set(c, p, kinds[0], 0, &theta[0], &unused);
    if (s == VP_OK && cJSON_GetObjectItemCaseSensitive(p, kinds[1]))
        s = parameters_set(c, p, kinds[1], 1, &theta[1], linear);
    for (int k = 0; k < 2 && s == VP_OK; k++) {
        const char *key = k ? "rope_theta" : "rope_local_base_freq";
        if (hf_present(c, key) && theta[k] != hub[k])
            s = vp_fail(c->err, VP_EFORMAT,
                        "config.json: %s is %g but rope_parameters' '%s' gives %g; the two "
                        "spellings must agree",
                        key, hub[k], kinds[k], theta[k]);
    }
    if (s == VP_OK && hf_present(c, "rope_scaling") && hub_linear != *linear)
        s = vp_fail(c->err, VP_EFORMAT,
                    "config.json: rope_scaling's linear factor is %g but rope_parameters' "
                    "'full_attention' gives %g (0: none); the two spellings must agree",
                    hub_linear, *linear);
    return s;
}

/* The layers' kinds and each kind's RoPE: the full layers turn by
   rope_theta (with linear scaling where set), the sliding layers by
   rope_local_base_freq (default RoPE), through a second table where the
   stack has both kinds; the sliding layers attend through the window. */
static vp_status rope(hf_json *c, vp_hf_architecture *a)
{
    int has[2] = {0, 0};
    double theta[2] = {0.0, 0.0}, linear = 0.0;
    vp_status s = layer_kinds(c, a, has);
    if (s == VP_OK)
        s = rope_bases(c, theta, &linear);
    if (s != VP_OK)
        return s;
    a->positions = VP_POSITIONS_ROPE;
    a->rope_theta = has[VP_LAYER_FULL] ? theta[1] : theta[0];
    a->rope_linear = has[VP_LAYER_FULL] ? linear : 0.0;
    if (has[VP_LAYER_FULL] && has[VP_LAYER_SLIDING] && (theta[0] != theta[1] || linear != 0.0))
        a->rope_local_theta = theta[0];
    if (!has[VP_LAYER_SLIDING])
        return VP_OK;
    /* absent: the config class's 4096; null: no window */
    if (cJSON_IsNull(hf_field(c, "sliding_window")))
        return VP_OK;
    return hf_whole(c, "sliding_window", 0, GEMMA3_WINDOW, 1, (size_t)1 << 40, &a->sliding_window);
}

vp_status hf_read_gemma3(hf_json *c, vp_hf_architecture *a)
{
    double scalar = GEMMA3_SCALAR;
    vp_status s = shape(c, a);
    if (s == VP_OK)
        s = hf_real(c, "rms_norm_eps", 1e-6, &a->eps);
    if (s == VP_OK)
        s = hf_gemma_mlp(c, a);
    if (s == VP_OK)
        s = hf_real(c, "query_pre_attn_scalar", GEMMA3_SCALAR, &scalar);
    if (s == VP_OK)
        s = softcap(c, "attn_logit_softcapping", &a->attn_softcap);
    if (s == VP_OK)
        s = softcap(c, "final_logit_softcapping", &a->logit_softcap);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 1, &a->tied);
    if (s == VP_OK)
        s = hf_refuse_set(c, "attention_bias",
                          "varprof's projection biases have no q, k, v and o setting");
    if (s == VP_OK)
        s = hf_refuse_set(c, "use_bidirectional_attention",
                          "varprof's attention is causal; bidirectional attention is not run");
    if (s == VP_OK)
        s = rope(c, a);
    if (s == VP_OK) /* Gemma3TextConfig's pad_token_id 0 */
        s = hf_pad_token(c, 0, a);
    if (s != VP_OK)
        return s;
    /* Hugging Face multiplies by torch.tensor(hidden_size ** 0.5) cast to the
       weights' dtype: float here */
    a->embed_scale = (double)(float)sqrt((double)a->width);
    a->attn_scale = (double)(float)(1.0 / sqrt(scalar));
    a->placement = VP_SANDWICH;
    a->norm = VP_NORM_RMSNORM;
    a->bias = VP_BIAS_NONE;
    a->qk_norm = VP_QK_NORM_HEAD; /* q_norm, k_norm: (1 + w) RMSNorm over a head */
    return VP_OK;
}
