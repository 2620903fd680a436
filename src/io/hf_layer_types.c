/* config.json's layer_types, or the family's rule for them: which layers
 * attend through the sliding window (vp_hf_architecture.layer_kinds). */
#include <cjson/cJSON.h>
#include <string.h>

#include "hf_families.h"

/* layer_types' entry: its kind, or -1 for neither of transformers' two */
static int kind_of(const cJSON *t)
{
    if (!t)
        return -1;
    if (cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0)
        return VP_LAYER_SLIDING;
    if (cJSON_IsString(t) && strcmp(t->valuestring, "full_attention") == 0)
        return VP_LAYER_FULL;
    return -1;
}

/* layer l's kind by the family's rule */
static int rule(size_t l, size_t from, size_t period)
{
    return l >= from && (period == 0 || (l + 1) % period != 0) ? VP_LAYER_SLIDING : VP_LAYER_FULL;
}

vp_status hf_layer_types(hf_json *c, vp_hf_architecture *a, size_t from, size_t period, int has[2])
{
    const cJSON *types = hf_field(c, "layer_types");
    const int listed = types && !cJSON_IsNull(types);
    if (listed && (!cJSON_IsArray(types) || (size_t)cJSON_GetArraySize(types) != a->layers))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'layer_types' must be a list of %zu layer types, one a "
                       "layer (num_hidden_layers)",
                       a->layers);
    has[VP_LAYER_FULL] = has[VP_LAYER_SLIDING] = 0;
    const cJSON *t = listed ? types->child : NULL;
    for (size_t l = 0; l < a->layers; l++, t = t ? t->next : NULL) {
        const int kind = listed ? kind_of(t) : rule(l, from, period);
        if (kind < 0)
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: 'layer_types' holds '%.40s'; varprof reads "
                           "full_attention and sliding_attention",
                           cJSON_IsString(t) ? t->valuestring : "(not a string)");
        has[kind] = 1;
        if (l < VP_HF_MOST_LAYER_KINDS)
            a->layer_kinds[l] = (unsigned char)kind;
    }
    a->layer_kinds_given = has[VP_LAYER_FULL] && has[VP_LAYER_SLIDING];
    if (a->layer_kinds_given && a->layers > VP_HF_MOST_LAYER_KINDS)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: %zu layers of full and sliding attention both; varprof "
                       "reads such a stack of at most %d layers",
                       a->layers, VP_HF_MOST_LAYER_KINDS);
    return VP_OK;
}
