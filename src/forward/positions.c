/* Positional information (vp_positions): the checks and rope's
 * rotation of q and k as a step of a run. Learned positions are the
 * embedding's business (run.c, network_backward.c). */
#include <math.h>
#include <string.h>

#include "forward/rope.h"
#include "forward/run.h"

vp_status fw_positions_check(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    const vp_status in_range = vp_positions_check(o->positions, err);
    if (in_range != VP_OK)
        return in_range;
    const vp_positions_traits *traits = vp_positions_traits_of(o->positions);
    if (traits->rotary) {
        if (cfg->mlp_only)
            return vp_fail(err, VP_EINVAL,
                           "positions rope with layers of MLPs alone: there is no attention "
                           "to rotate; use positions none or learned, or attention layers");
        const size_t hd = vp_forward_head_dim(o);
        if (hd % 2 != 0 && o->head_dim)
            return vp_fail(err, VP_EINVAL,
                           "positions rope with head-dim %zu: rope rotates pairs, so a "
                           "head's width must be even",
                           hd);
        if (hd % 2 != 0)
            return vp_fail(err, VP_EINVAL,
                           "positions rope with heads of %zu coordinates (width %zu / %zu "
                           "heads): rope rotates pairs, so a head's width must be even",
                           hd, o->width, o->heads);
        if (!(o->rope_theta > 0.0 && isfinite(o->rope_theta)))
            return vp_fail(err, VP_EINVAL, "rope theta %g; it must be finite and > 0",
                           o->rope_theta);
        const vp_rope_scaling *s = &o->rope_scaling;
        if (s->factor != 0.0 &&
            !(s->factor >= 1.0 && s->factor <= 1e6 && s->low_freq_factor > 0.0 &&
              s->high_freq_factor > s->low_freq_factor && s->high_freq_factor <= 1e6 &&
              s->original_context >= 1.0 && s->original_context <= 1e12))
            return vp_fail(err, VP_EINVAL,
                           "rope scaling factor %g, low_freq_factor %g, high_freq_factor %g, "
                           "original context %g: the factor must be from 1 to 1e6, 0 < low < "
                           "high <= 1e6 and the context from 1 to 1e12",
                           s->factor, s->low_freq_factor, s->high_freq_factor, s->original_context);
    }
    if (traits->table && o->weights) {
        const vp_tensor_info *t = vp_safetensors_find(o->weights, "pos_embed.weight");
        if (t && t->rank == 2 && t->shape[0] < o->tokens)
            return vp_fail(err, VP_EINVAL,
                           "tokens is %zu, but pos_embed.weight holds %zu positions; use at "
                           "most %zu tokens per sequence",
                           o->tokens, t->shape[0], t->shape[0]);
    }
    return VP_OK;
}

size_t fw_rope_floats(const fw_model *m, size_t tokens)
{
    return vp_positions_traits_of(m->positions)->rotary ? 2 * tokens * (m->head_dim / 2) : 0;
}

void fw_rope_fill(float *cos_t, float *sin_t, const fw_model *m, size_t tokens)
{
    fw_rope_table(cos_t, sin_t, tokens, m->head_dim, m->rope_theta, &m->rope_scaling);
}

typedef struct {
    const fw_run *r;
    float *q, *k;
    int inverse;
} rope_job;

/* one sequence's q and k, rows at positions 0 .. T - 1 */
static void rope_task(void *ctx, size_t b, size_t thread)
{
    (void)thread;
    const rope_job *j = ctx;
    const fw_run *r = j->r;
    const fw_model *m = r->m;
    const size_t q_at = b * r->tokens * m->q_width, k_at = b * r->tokens * m->kv_width;
    m->kernels->rope(j->q + q_at, m->q_width, r->rope_cos, r->rope_sin, r->tokens, m->heads,
                     m->head_dim, j->inverse);
    m->kernels->rope(j->k + k_at, m->kv_width, r->rope_cos, r->rope_sin, r->tokens, m->kv_heads,
                     m->head_dim, j->inverse);
}

void fw_rope(fw_run *r, float *q, float *k, int inverse)
{
    rope_job j = {r, q, k, inverse};
    fw_parallel(r, r->batch, rope_task, &j);
}
