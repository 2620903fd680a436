/* Qwen3's config.json (Qwen3Config): Llama's keys and blocks, RMSNorm over
 * each head of q and of k before the rotation, head_dim 128 by default, and
 * Qwen3's rule for which layers slide. */
#include <cjson/cJSON.h>
#include <string.h>

#include "hf_families.h"

/* Qwen3Config's defaults where the file is silent */
#define QWEN3_HEAD_DIM 128
#define QWEN3_MAX_WINDOW_LAYERS 28
#define QWEN3_SLIDING_WINDOW 4096

/* Qwen3Config keeps sliding_window only under use_sliding_window; a layer
   slides when its layer_types entry says so (hf_read_llama checked them),
   or, without layer_types, from max_window_layers on. */
static vp_status sliding_window(hf_json *c, vp_hf_architecture *a)
{
    int use = 0;
    size_t window = 0, from = QWEN3_MAX_WINDOW_LAYERS;
    vp_status s = hf_boolean(c, "use_sliding_window", 0, &use);
    if (s == VP_OK && use && !cJSON_IsNull(hf_field(c, "sliding_window")))
        s = hf_whole(c, "sliding_window", 0, QWEN3_SLIDING_WINDOW, 1, (size_t)1 << 40, &window);
    if (s == VP_OK)
        s = hf_whole(c, "max_window_layers", 0, QWEN3_MAX_WINDOW_LAYERS, 0, VP_MAX_LAYERS, &from);
    if (s != VP_OK)
        return s;
    int slides = from < a->layers;
    const cJSON *types = hf_field(c, "layer_types");
    if (cJSON_IsArray(types)) {
        slides = 0;
        for (const cJSON *t = types->child; t; t = t->next)
            slides |= cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0;
    }
    a->sliding_window = slides ? window : 0;
    return VP_OK;
}

vp_status hf_read_qwen3(hf_json *c, vp_hf_architecture *a)
{
    vp_status s = hf_read_llama(c, a);
    if (s == VP_OK)
        s = sliding_window(c, a);
    if (s != VP_OK)
        return s;
    if (!hf_present(c, "head_dim")) { /* Llama's reader took width / heads */
        if (a->heads * QWEN3_HEAD_DIM > VP_FORWARD_MAX_WIDTH)
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: 'num_attention_heads' %zu x Qwen3's default 'head_dim' "
                           "%d is above %u",
                           a->heads, QWEN3_HEAD_DIM, VP_FORWARD_MAX_WIDTH);
        a->head_dim = QWEN3_HEAD_DIM;
    }
    a->qk_norm = VP_QK_NORM_HEAD; /* q_norm, k_norm: RMSNorm over a head's head_dim */
    return VP_OK;
}
