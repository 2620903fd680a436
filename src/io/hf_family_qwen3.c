/* Qwen3's config.json (Qwen3Config): Llama's keys and blocks, RMSNorm over
 * each head of q and of k before the rotation, head_dim 128 by default, and
 * Qwen2's rule for which layers slide (hf_family_llama.c). */
#include <cjson/cJSON.h>
#include <string.h>

#include "hf_families.h"

/* Qwen3Config's default where the file is silent */
#define QWEN3_HEAD_DIM 128

vp_status hf_read_qwen3(hf_json *c, vp_hf_architecture *a)
{
    /* Llama's reader runs Qwen3's sliding-window rule too: Qwen2's */
    const vp_status s = hf_read_llama(c, a);
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
