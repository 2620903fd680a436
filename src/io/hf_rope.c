/* RoPE's settings in config.json: one "set" (theta, type, the scaling's
 * numbers, the rotary fraction) from each spelling present, then the two
 * held to each other. */
#include "hf_rope.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    int have_theta, have_partial, have_scaling;
    int said_scaling; /* the Hub's rope_scaling key is there, null or not */
    double theta, partial;
    vp_rope_scaling scaling; /* factor 0: none */
} rope_set;

/* The keys a RoPE set may hold; any other is refused by name. */
static const char *const set_keys[] = {"rope_theta",
                                       "rope_type",
                                       "type",
                                       "factor",
                                       "low_freq_factor",
                                       "high_freq_factor",
                                       "original_max_position_embeddings",
                                       "partial_rotary_factor",
                                       NULL};

static vp_status number_in(const cJSON *obj, const char *where, const char *key, double *out,
                           vp_error *err)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble))
        return vp_fail(err, VP_EFORMAT, "config.json: %s's '%s' must be a number", where, key);
    *out = n->valuedouble;
    return VP_OK;
}

/* Llama 3's four numbers, each required and in range. */
static vp_status llama3_scaling(const cJSON *obj, const char *where, vp_rope_scaling *out,
                                vp_error *err)
{
    static const char *const keys[4] = {"factor", "low_freq_factor", "high_freq_factor",
                                        "original_max_position_embeddings"};
    double v[4];
    for (size_t i = 0; i < 4; i++) {
        const vp_status s = number_in(obj, where, keys[i], &v[i], err);
        if (s != VP_OK)
            return s;
    }
    if (!(v[0] >= 1.0 && v[0] <= 1e6 && v[1] > 0.0 && v[2] > v[1] && v[2] <= 1e6 && v[3] >= 1.0 &&
          v[3] <= 1e12 && v[3] == floor(v[3])))
        return vp_fail(err, VP_EFORMAT,
                       "config.json: %s's factor %g, low_freq_factor %g, high_freq_factor %g, "
                       "original_max_position_embeddings %g: the factor must be from 1 to 1e6, "
                       "0 < low < high <= 1e6, the context a whole number from 1 to 1e12",
                       where, v[0], v[1], v[2], v[3]);
    *out = (vp_rope_scaling){v[0], v[1], v[2], v[3]};
    return VP_OK;
}

/* The type (rope_type, or the older type) of a set: default or llama3. */
static vp_status set_type(const cJSON *obj, const char *where, int *llama3, vp_error *err)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj, "rope_type");
    if (!type)
        type = cJSON_GetObjectItemCaseSensitive(obj, "type");
    *llama3 = 0;
    if (!type || cJSON_IsNull(type))
        return VP_OK;
    if (cJSON_IsString(type) && strcmp(type->valuestring, "default") == 0)
        return VP_OK;
    if (cJSON_IsString(type) && strcmp(type->valuestring, "llama3") == 0) {
        *llama3 = 1;
        return VP_OK;
    }
    return vp_fail(err, VP_EFORMAT,
                   "config.json: %s of type '%.40s' is not read; varprof reads RoPE of type "
                   "default and llama3 (Llama 3.1 and 3.2)",
                   where, cJSON_IsString(type) ? type->valuestring : "(not a string)");
}

/* One set from obj, every key of it known; where says which key held it. */
static vp_status read_set(const cJSON *obj, const char *where, rope_set *out, vp_error *err)
{
    for (const cJSON *e = obj->child; e; e = e->next) {
        size_t i = 0;
        while (set_keys[i] && strcmp(set_keys[i], e->string) != 0)
            i++;
        if (!set_keys[i])
            return vp_fail(err, VP_EFORMAT,
                           "config.json: %s's '%.60s' is not read; varprof reads rope_theta, "
                           "rope_type and llama3's scaling",
                           where, e->string);
    }
    int llama3 = 0;
    vp_status s = set_type(obj, where, &llama3, err);
    const int typed = cJSON_GetObjectItemCaseSensitive(obj, "rope_type") ||
                      cJSON_GetObjectItemCaseSensitive(obj, "type");
    if (s == VP_OK && !typed && cJSON_GetObjectItemCaseSensitive(obj, "factor"))
        return vp_fail(err, VP_EFORMAT,
                       "config.json: %s has a 'factor' but no rope_type; varprof reads RoPE of "
                       "type default and llama3 (Llama 3.1 and 3.2)",
                       where);
    if (s == VP_OK && llama3) {
        s = llama3_scaling(obj, where, &out->scaling, err);
        out->have_scaling = 1;
    }
    if (s == VP_OK && cJSON_GetObjectItemCaseSensitive(obj, "rope_theta")) {
        s = number_in(obj, where, "rope_theta", &out->theta, err);
        out->have_theta = 1;
    }
    if (s == VP_OK && cJSON_GetObjectItemCaseSensitive(obj, "partial_rotary_factor")) {
        s = number_in(obj, where, "partial_rotary_factor", &out->partial, err);
        out->have_partial = 1;
    }
    return s;
}

static int same_scaling(const vp_rope_scaling *x, const vp_rope_scaling *y)
{
    return x->factor == y->factor && x->low_freq_factor == y->low_freq_factor &&
           x->high_freq_factor == y->high_freq_factor && x->original_context == y->original_context;
}

static int same_set(const rope_set *x, const rope_set *y)
{
    return x->have_theta == y->have_theta && (!x->have_theta || x->theta == y->theta) &&
           same_scaling(&x->scaling, &y->scaling) && x->have_partial == y->have_partial &&
           (!x->have_partial || x->partial == y->partial);
}

/* rope_parameters: one set, or one per layer type, all alike. */
static vp_status read_parameters(hf_json *c, rope_set *out)
{
    const cJSON *p = hf_field(c, "rope_parameters");
    if (!cJSON_IsObject(p))
        return vp_fail(c->err, VP_EFORMAT, "config.json: 'rope_parameters' must be an object");
    if (!p->child || cJSON_GetObjectItemCaseSensitive(p, "rope_type") ||
        cJSON_GetObjectItemCaseSensitive(p, "rope_theta") || !cJSON_IsObject(p->child))
        return read_set(p, "rope_parameters", out, c->err);
    char where[96];
    for (const cJSON *e = p->child; e; e = e->next) {
        rope_set one = {0};
        snprintf(where, sizeof where, "rope_parameters' '%.40s'", e->string);
        if (!cJSON_IsObject(e))
            return vp_fail(c->err, VP_EFORMAT, "config.json: %s must be an object", where);
        const vp_status s = read_set(e, where, &one, c->err);
        if (s != VP_OK)
            return s;
        if (e != p->child && !same_set(&one, out))
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: rope_parameters gives '%.40s' and '%.40s' different "
                           "RoPE; varprof runs one RoPE for every layer of this family",
                           p->child->string, e->string);
        *out = one;
    }
    return VP_OK;
}

/* The Hub's spelling: rope_theta, rope_scaling, partial_rotary_factor. */
static vp_status read_hub(hf_json *c, rope_set *out)
{
    vp_status s = VP_OK;
    if ((out->have_theta = hf_present(c, "rope_theta")))
        s = hf_real(c, "rope_theta", 0.0, &out->theta);
    const cJSON *scaling = hf_field(c, "rope_scaling");
    out->said_scaling = scaling != NULL;
    if (s == VP_OK && scaling && !cJSON_IsNull(scaling)) {
        if (!cJSON_IsObject(scaling))
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: 'rope_scaling' must be an object or null");
        rope_set inner = {0};
        if ((s = read_set(scaling, "rope_scaling", &inner, c->err)) != VP_OK)
            return s;
        if (inner.have_theta) /* a theta inside is transformers 5's habit, not the Hub's */
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: 'rope_scaling' holds a rope_theta; give it at the top "
                           "level or in rope_parameters");
        out->scaling = inner.scaling;
        out->have_scaling = inner.have_scaling;
    }
    if (s == VP_OK && (out->have_partial = hf_present(c, "partial_rotary_factor")))
        s = hf_real(c, "partial_rotary_factor", 1.0, &out->partial);
    return s;
}

static vp_status disagree(hf_json *c, const char *what, double hub, double v5)
{
    return vp_fail(c->err, VP_EFORMAT,
                   "config.json: %s is %g at the top level but %g in rope_parameters; the two "
                   "spellings must agree",
                   what, hub, v5);
}

/* Both spellings, where a file has both: each number either gives, equal. */
static vp_status agree(hf_json *c, const rope_set *hub, const rope_set *v5)
{
    if (hub->have_theta && v5->have_theta && hub->theta != v5->theta)
        return disagree(c, "rope_theta", hub->theta, v5->theta);
    if (hub->have_partial && v5->have_partial && hub->partial != v5->partial)
        return disagree(c, "partial_rotary_factor", hub->partial, v5->partial);
    if (hub->said_scaling &&
        (hub->have_scaling != v5->have_scaling || !same_scaling(&hub->scaling, &v5->scaling)))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'rope_scaling' (%s) and rope_parameters (%s) disagree; "
                       "the two spellings must agree",
                       hub->have_scaling ? "llama3" : "none", v5->have_scaling ? "llama3" : "none");
    return VP_OK;
}

vp_status hf_rope_read(hf_json *c, double default_theta, vp_hf_architecture *a)
{
    rope_set hub = {0}, v5 = {0};
    vp_status s = read_hub(c, &hub);
    const int have_v5 = hf_present(c, "rope_parameters");
    if (s == VP_OK && have_v5)
        s = read_parameters(c, &v5);
    if (s == VP_OK && have_v5)
        s = agree(c, &hub, &v5);
    if (s != VP_OK)
        return s;
    const rope_set *use = have_v5 ? &v5 : &hub;
    const double theta = hub.have_theta ? hub.theta : v5.have_theta ? v5.theta : default_theta;
    /* a family that reads a share (a->rope_fraction set, its default) */
    const double fallback = a->rope_fraction > 0.0 ? a->rope_fraction : 1.0;
    const double partial = hub.have_partial ? hub.partial : v5.have_partial ? v5.partial : fallback;
    if (!(theta > 0.0) || !isfinite(theta))
        return vp_fail(c->err, VP_EFORMAT, "config.json: rope_theta %g must be above 0", theta);
    if (a->rope_fraction > 0.0 && !(partial > 0.0 && partial <= 1.0))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: partial_rotary_factor %g must be above 0 and at most 1",
                       partial);
    if (a->rope_fraction > 0.0)
        a->rope_fraction = partial;
    else if (partial != 1.0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: partial_rotary_factor %g is not read for model_type '%s'; "
                       "varprof rotates every coordinate of a head",
                       partial, a->model_type);
    a->rope_theta = theta;
    a->rope_scaling = use->scaling;
    return VP_OK;
}
