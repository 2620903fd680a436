/* config.json's fields, each checked for its type and range. */
#include "hf_json.h"

#include <math.h>
#include <string.h>

const cJSON *hf_field(hf_json *c, const char *key)
{
    size_t i = 0;
    while (i < c->n_read && strcmp(c->read[i], key) != 0)
        i++;
    if (i == c->n_read && c->n_read < HF_MOST_READ_KEYS)
        c->read[c->n_read++] = key; /* the readers' own literals: they outlive c */
    return cJSON_GetObjectItemCaseSensitive(c->root, key);
}

int hf_present(hf_json *c, const char *key)
{
    const cJSON *v = hf_field(c, key);
    return v && !cJSON_IsNull(v);
}

vp_status hf_whole(hf_json *c, const char *key, int required, size_t fallback, size_t lo, size_t hi,
                   size_t *out)
{
    const cJSON *v = hf_field(c, key);
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

vp_status hf_real(hf_json *c, const char *key, double fallback, double *out)
{
    const cJSON *v = hf_field(c, key);
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

vp_status hf_boolean(hf_json *c, const char *key, int fallback, int *out)
{
    const cJSON *v = hf_field(c, key);
    if (!v || cJSON_IsNull(v)) {
        *out = fallback;
        return VP_OK;
    }
    if (!cJSON_IsBool(v))
        return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' must be true or false", key);
    *out = cJSON_IsTrue(v);
    return VP_OK;
}

vp_status hf_text(hf_json *c, const char *key, const char *fallback, const char **out)
{
    const cJSON *v = hf_field(c, key);
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

int hf_value_is_set(const cJSON *v)
{
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v))
        return 0;
    if (cJSON_IsNumber(v))
        return v->valuedouble != 0.0;
    if (cJSON_IsString(v))
        return v->valuestring[0] != '\0';
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        return v->child != NULL;
    return 1;
}

vp_status hf_refuse_set(hf_json *c, const char *key, const char *why)
{
    if (hf_value_is_set(hf_field(c, key)))
        return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' is set; %s", key, why);
    return VP_OK;
}
