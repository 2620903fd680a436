/* Positional information (vp_positions): the checks and rope's
 * rotation of q and k as a step of a run. Learned positions are the
 * embedding's business (run.c, network_backward.c). */
#include <math.h>
#include <string.h>

#include "forward/network.h"
#include "forward/embedding.h"
#include "forward/rope.h"
#include "forward/run.h"

size_t fw_rope_dim(const vp_forward_options *o)
{
    const vp_positions_traits *traits = vp_positions_traits_of(o->positions);
    if (!traits || !traits->rotary)
        return 0;
    const size_t hd = vp_forward_head_dim(o);
    if (o->rope_fraction == 0.0 || o->rope_fraction == 1.0)
        return hd;
    /* Python's int() of the product; the 1e-9 keeps a fraction given as
       rotary_dim / hd, rounded below its quotient, at rotary_dim */
    return (size_t)((double)hd * o->rope_fraction + 1e-9);
}

/* the rotated share: in (0, 1], a whole even number of coordinates */
static vp_status check_fraction(const vp_forward_options *o, vp_error *err)
{
    const double f = o->rope_fraction;
    if (!(f >= 0.0 && f <= 1.0))
        return vp_fail(err, VP_EINVAL, "rope fraction %g; it must be > 0 and at most 1", f);
    const size_t r = fw_rope_dim(o), hd = vp_forward_head_dim(o);
    if (r < hd && (r == 0 || r % 2 != 0))
        return vp_fail(err, VP_EINVAL,
                       "rope fraction %g of heads of %zu coordinates rotates %zu of them; rope "
                       "rotates pairs, so that must be even and above 0",
                       f, hd, r);
    return VP_OK;
}

/* the sliding window and the layers' kinds */
static vp_status check_window(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    if (o->sliding_window && cfg->mlp_only)
        return vp_fail(err, VP_EINVAL,
                       "a sliding window of %zu with layers of MLPs alone: there is no attention "
                       "to window; use attention layers, or no window",
                       o->sliding_window);
    if (o->window_pattern != 0 && (o->window_pattern < 2 || o->window_pattern > VP_MAX_LAYERS))
        return vp_fail(err, VP_EINVAL,
                       "a window pattern of %zu; it must be 0 (the layers' kinds say) or from 2 "
                       "to %u (every so many layers, one attends fully)",
                       o->window_pattern, VP_MAX_LAYERS);
    if (o->window_pattern && o->layer_kinds)
        return vp_fail(err, VP_EINVAL,
                       "a window pattern of %zu beside a list of the layers' kinds; give one "
                       "of them",
                       o->window_pattern);
    for (size_t l = 0; o->layer_kinds && l < cfg->layers; l++)
        if (o->layer_kinds[l] >= VP_LAYER_KIND_COUNT)
            return vp_fail(err, VP_EINVAL,
                           "layer %zu's kind is %u; each layer's is %u (full attention) or %u "
                           "(sliding attention)",
                           l, (unsigned)o->layer_kinds[l], (unsigned)VP_LAYER_FULL,
                           (unsigned)VP_LAYER_SLIDING);
    return VP_OK;
}

/* rope's second table and linear factor */
static vp_status check_rope_bases(const vp_forward_options *o, vp_error *err)
{
    if (o->rope_local_theta != 0.0 && !(o->rope_local_theta > 0.0 && isfinite(o->rope_local_theta)))
        return vp_fail(err, VP_EINVAL,
                       "the sliding layers' rope theta %g; it must be finite and > 0, or 0 "
                       "for rope theta's",
                       o->rope_local_theta);
    if (o->rope_linear != 0.0 && !(o->rope_linear >= 1.0 && o->rope_linear <= 1e6))
        return vp_fail(err, VP_EINVAL,
                       "linear rope scaling factor %g; it must be from 1 to 1e6, or 0 for none",
                       o->rope_linear);
    if (o->rope_linear != 0.0 && o->rope_scaling.factor != 0.0)
        return vp_fail(err, VP_EINVAL,
                       "linear rope scaling factor %g beside Llama 3's factor %g: a RoPE table "
                       "is scaled one way",
                       o->rope_linear, o->rope_scaling.factor);
    return VP_OK;
}

vp_status fw_positions_check(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    vp_status status = vp_positions_check(o->positions, err);
    if (status == VP_OK)
        status = check_window(cfg, o, err);
    if (status != VP_OK)
        return status;
    /* the residual form's check rides here, beside the positions': both
       axes are the forward pass's alone */
    if ((status = fw_residual_check(cfg, o, err)) != VP_OK)
        return status;
    const vp_positions_traits *traits = vp_positions_traits_of(o->positions);
    if (traits->score_bias && cfg->mlp_only)
        return vp_fail(err, VP_EINVAL,
                       "positions %s with layers of MLPs alone: there are no attention scores "
                       "to bias; use positions none or learned, or attention layers",
                       traits->name);
    if (traits->rotary && ((status = check_fraction(o, err)) != VP_OK ||
                           (status = check_rope_bases(o, err)) != VP_OK))
        return status;
    if (traits->rotary) {
        if (cfg->mlp_only)
            return vp_fail(err, VP_EINVAL,
                           "positions rope with layers of MLPs alone: there is no attention "
                           "to rotate; use positions none or learned, or attention layers");
        const size_t hd = vp_forward_head_dim(o);
        const int whole = fw_rope_dim(o) == hd; /* else check_fraction's */
        if (whole && hd % 2 != 0 && o->head_dim)
            return vp_fail(err, VP_EINVAL,
                           "positions rope with head-dim %zu: rope rotates pairs, so a "
                           "head's width must be even",
                           hd);
        if (whole && hd % 2 != 0)
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
        /* OPT's table has position_offset rows before position 0's */
        const size_t held = t && t->rank == 2 && t->shape[0] > o->position_offset
                                ? t->shape[0] - o->position_offset
                                : 0;
        if (t && t->rank == 2 && held < o->tokens)
            return vp_fail(err, VP_EINVAL,
                           "tokens is %zu, but pos_embed.weight holds %zu positions (%zu rows, "
                           "from row %zu on); use at most %zu tokens per sequence",
                           o->tokens, held, t->shape[0], o->position_offset, held);
    }
    /* the embedding's width rides here too: both are the embedding step's */
    return fw_embedding_check(o, err);
}

size_t fw_layer_window(const fw_model *m, size_t l)
{
    return fw_layer_slides(m, l) ? m->window : 0;
}

size_t fw_sliding_layers(const vp_config *cfg, const vp_forward_options *o)
{
    const fw_model rule = {.window = o->sliding_window,
                           .layer_kinds = o->layer_kinds,
                           .window_pattern = o->window_pattern};
    size_t n = 0;
    for (size_t l = 0; o->sliding_window && !cfg->mlp_only && l < cfg->layers; l++)
        n += (size_t)fw_layer_slides(&rule, l);
    return n;
}

int fw_layer_slides(const fw_model *m, size_t l)
{
    if (m->window_pattern)
        return (l + 1) % m->window_pattern != 0;
    return !m->layer_kinds || m->layer_kinds[l] == VP_LAYER_SLIDING;
}

void fw_window_shape(fw_model *m, const vp_forward_options *o)
{
    m->rope_linear = o->rope_linear;
    m->rope_local_theta = o->rope_local_theta;
    m->window = o->sliding_window;
    m->layer_kinds = o->layer_kinds;
    m->window_pattern = o->window_pattern;
}

/* The tables: the full layers' [tokens][r / 2], then with a local base
   the sliding layers' as long, cos_t's and then sin_t's (the workspace
   gives sin_t half of the floats in). */
static size_t rope_tables(const fw_model *m)
{
    return m->rope_local_theta > 0.0 ? 2 : 1;
}

size_t fw_rope_floats(const fw_model *m, size_t tokens)
{
    return vp_positions_traits_of(m->positions)->rotary
               ? 2 * rope_tables(m) * tokens * (m->rope_dim / 2)
               : 0;
}

void fw_rope_fill(float *cos_t, float *sin_t, const fw_model *m, size_t tokens)
{
    /* the angles of the rotated width: theta^(-2i/r), as Hugging Face's
       inv_freq over rotary_ndims */
    fw_rope_table_linear(cos_t, sin_t, tokens, m->rope_dim, m->rope_theta, &m->rope_scaling,
                         m->rope_linear);
    /* Gemma 3's sliding layers: their base, default RoPE */
    const size_t n = tokens * (m->rope_dim / 2);
    if (rope_tables(m) > 1)
        fw_rope_table(cos_t + n, sin_t + n, tokens, m->rope_dim, m->rope_local_theta, NULL);
}

typedef struct {
    const fw_run *r;
    float *q, *k;
    int inverse;
} rope_job;

/* heads H of one sequence's rows of stride ld: all of each head at once,
   or its first rope_dim coordinates head by head (the rest pass through);
   the pairing the positions' row says */
static void rotate(const fw_model *m, float *x, size_t ld, const fw_run *r, size_t heads,
                   int inverse)
{
    const int interleaved = vp_positions_traits_of(m->positions)->rotary == VP_ROTARY_INTERLEAVED;
    void (*rope)(float *, size_t, const float *, const float *, size_t, size_t, size_t, int) =
        interleaved ? m->kernels->rope_interleaved : m->kernels->rope;
    /* a sliding layer turns by the local table where there is one */
    const size_t at =
        rope_tables(m) > 1 && fw_layer_slides(m, r->layer) ? r->tokens * (m->rope_dim / 2) : 0;
    const float *cos_t = r->rope_cos + at, *sin_t = r->rope_sin + at;
    if (m->rope_dim == m->head_dim) {
        rope(x, ld, cos_t, sin_t, r->tokens, heads, m->head_dim, inverse);
        return;
    }
    for (size_t h = 0; h < heads; h++)
        rope(x + h * m->head_dim, ld, cos_t, sin_t, r->tokens, 1, m->rope_dim, inverse);
}

/* one sequence's q and k, rows at positions 0 .. T - 1 */
static void rope_task(void *ctx, size_t b, size_t thread)
{
    (void)thread;
    const rope_job *j = ctx;
    const fw_run *r = j->r;
    const fw_model *m = r->m;
    const size_t q_at = b * r->tokens * m->q_width, k_at = b * r->tokens * m->kv_width;
    rotate(m, j->q + q_at, m->q_width, r, m->heads, j->inverse);
    rotate(m, j->k + k_at, m->kv_width, r, m->kv_heads, j->inverse);
}

void fw_rope(fw_run *r, float *q, float *k, int inverse)
{
    rope_job j = {r, q, k, inverse};
    fw_parallel(r, r->batch, rope_task, &j);
}
