/* The network's backward pass (varprof-maths(7), THE NETWORK'S BACKWARD
 * PASS): from the loss down through the head, the final norm and every
 * sub-block to the embedding, on what the forward pass kept. Per sub-block k
 * it measures grad_var, the mean square of dL/dx_k, and weight_grad,
 * RMS(dL/do) RMS(h) of each branch's last projection o = A h. Every buffer is
 * the run's workspace's: nothing is allocated here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "forward/backward.h"
#include "forward/embedding.h"
#include "forward/qk_layernorm.h"

static size_t aligned(size_t floats)
{
    return (floats + 15) & ~(size_t)15;
}

static size_t widest(const fw_model *m)
{
    size_t w = m->d > m->hidden ? m->d : m->hidden;
    if (m->q_width > w)
        w = m->q_width;
    return m->has_head && m->vocab > w ? m->vocab : w;
}

/* Lays the buffers out from block on (NULL: counts only); returns floats. */
static size_t lay_out(fw_bw *b, float *block, const fw_model *m, size_t rows)
{
    size_t used = 0;
#define TAKE(field, n)                                                                             \
    do {                                                                                           \
        if (b)                                                                                     \
            b->field = block + used;                                                               \
        used += aligned(n);                                                                        \
    } while (0)
    const size_t d = rows * m->d, hid = rows * m->hidden, w = widest(m);
    const size_t qw = rows * m->q_width, kvw = rows * m->kv_width;
    const int grouped = m->kv_heads != m->heads;
    TAKE(dx, d);
    TAKE(dz, d);
    TAKE(df, d);
    TAKE(dh, d);
    TAKE(dsum, d);
    TAKE(dpre, d > qw ? d : qw); /* an output norm's, or QK-norm's input's */
    TAKE(datt, qw);
    TAKE(dq, qw);
    TAKE(dk, kvw);
    TAKE(dv, kvw);
    TAKE(z, d);
    /* grouped-query attention: k and v repeated to the query heads, and
       their gradients there before each group's sum */
    TAKE(k_exp, grouped ? qw : 0);
    TAKE(v_exp, grouped ? qw : 0);
    TAKE(dk_exp, grouped ? qw : 0);
    TAKE(dv_exp, grouped ? qw : 0);
    TAKE(dhid, hid);
    TAKE(dhid_pre, hid);
    TAKE(dhid_up, m->gated ? hid : 0);
    TAKE(logits, m->has_head ? rows * m->vocab : 0);
    TAKE(logit_tanh, m->has_head && m->logit_softcap > 0.0f ? rows * m->vocab : 0);
    TAKE(head_dw, m->tied ? m->vocab * m->embed_dim : 0);
    /* a norm's rows: the stream's, or QK-norm's, one per head */
    TAKE(stats, 2 * rows * (m->qk_norm ? m->heads : 1) *
                    (m->qk_norm == VP_QK_NORM_HEAD_LAYERNORM ? 2 : 1));
    if (b) /* doubles, at a 64-byte boundary as every buffer */
        b->row_loss = (double *)(void *)(block + used);
    used += aligned(2 * rows);
    /* one parameter's gradient: the largest W is the embedding, the head or
       an MLP projection */
    size_t most_w = m->vocab * m->d > m->d * m->hidden ? m->vocab * m->d : m->d * m->hidden;
    if (m->n_ctx * m->d > most_w) /* learned positions */
        most_w = m->n_ctx * m->d;
    if (m->q_width * m->d > most_w) /* q and o */
        most_w = m->q_width * m->d;
    if (m->embed_dim * m->d > most_w) /* OPT's project_in and project_out */
        most_w = m->embed_dim * m->d;
    TAKE(dw, most_w);
    TAKE(db, w);
#undef TAKE
    return used;
}

size_t fw_backward_floats(const fw_model *m, size_t rows)
{
    return lay_out(NULL, NULL, m, rows);
}

size_t fw_backward_thread_floats(const fw_model *m, size_t rows, size_t threads)
{
    /* the dW matmul takes up to all of W's rows in one task; the attention's
       backward KERN_ATTENTION_BACKWARD_SCRATCH(T, hd) floats, T <= rows */
    const size_t w = widest(m);
    const size_t a = m->kernels->matmul_weight_grad_workspace_floats(rows, m->d, w);
    const size_t b = m->kernels->matmul_weight_grad_workspace_floats(rows, m->hidden, w);
    const size_t c = m->kernels->matmul_weight_grad_workspace_floats(rows, m->q_width, w);
    const size_t att = KERN_ATTENTION_BACKWARD_SCRATCH(rows, m->head_dim);
    size_t most = a > b ? a : b;
    most = c > most ? c : most;
    return threads * aligned((most > att ? most : att) + 32);
}

/* ---- per sub-block ---- */

typedef struct {
    const fw_bw *b;
    const fw_saved *s;
} att_job;

/* one sequence's attention backward: dq, dk, dv from datt. With fewer kv
   heads, k and v are repeated to the query heads as the forward did, and
   each kv head's gradient is its group's sum, in head order. */
static void attention_task(void *ctx, size_t seq, size_t thread)
{
    const att_job *j = ctx;
    const fw_bw *b = j->b;
    const fw_saved *s = j->s;
    const fw_run *r = b->r;
    const fw_model *m = r->m;
    const size_t qw = m->q_width, at = seq * r->tokens * qw;
    const size_t kv_at = seq * r->tokens * m->kv_width;
    if (m->kv_heads == m->heads) {
        m->kernels->attention_backward(b->dq + at, b->dk + at, b->dv + at, qw, b->datt + at, qw,
                                       s->q + at, s->k + at, s->v + at, qw, r->tokens, m->heads,
                                       m->head_dim, m->attn_scale, m->attn_softcap, r->alibi_slopes,
                                       fw_layer_window(m, r->layer), b->thread_ws[thread]);
        return;
    }
    fw_repeat_kv(m, b->k_exp + at, s->k + kv_at, r->tokens);
    fw_repeat_kv(m, b->v_exp + at, s->v + kv_at, r->tokens);
    m->kernels->attention_backward(b->dq + at, b->dk_exp + at, b->dv_exp + at, qw, b->datt + at, qw,
                                   s->q + at, b->k_exp + at, b->v_exp + at, qw, r->tokens, m->heads,
                                   m->head_dim, m->attn_scale, m->attn_softcap, r->alibi_slopes,
                                   fw_layer_window(m, r->layer), b->thread_ws[thread]);
    fw_sum_kv(m, b->dk + kv_at, b->dk_exp + at, r->tokens);
    fw_sum_kv(m, b->dv + kv_at, b->dv_exp + at, r->tokens);
}

/* The elementwise loops below go LANES at a time, a count gcc -O2
   vectorises (its cheap cost model takes no loop of unknown count), then
   one at a time; each element is the same operation either way. */
#define LANES 8

static void add_into(float *restrict acc, const float *restrict v, size_t n)
{
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (size_t j = 0; j < LANES; j++)
            acc[i + j] += v[i + j];
    for (; i < n; i++)
        acc[i] += v[i];
}

/* dh = the MLP's share of dL/dh, from df */
static void mlp_backward(fw_bw *b, float *dh, const fw_layer *layer, const fw_saved *s,
                         const float *h, const float *df, char *prefix, size_t layer_index)
{
    fw_run *r = b->r;
    const fw_model *m = r->m;
    const kern_table *kern = m->kernels;
    const size_t n = r->rows * m->hidden;
    fw_bw_linear_dx(b, b->dhid, df, &layer->fc2);
    snprintf(prefix, 64, "layers.%zu.mlp.%s", layer_index, m->gated ? "down" : "fc2");
    fw_bw_linear_params(b, prefix, &layer->fc2, df, s->hid);
    if (m->gated) {
        /* gate's and up's gradients, then dh = dgate Wg + dup Wu */
        fw_activate_backward(kern, m->mlp, b->dhid_pre, b->dhid_up, b->dhid, s->hid_pre, s->hid_up,
                             NULL, n);
        snprintf(prefix, 64, "layers.%zu.mlp.gate", layer_index);
        fw_bw_linear_params(b, prefix, &layer->fc1, b->dhid_pre, h);
        snprintf(prefix, 64, "layers.%zu.mlp.up", layer_index);
        fw_bw_linear_params(b, prefix, &layer->up, b->dhid_up, h);
        fw_bw_linear_dx(b, dh, b->dhid_pre, &layer->fc1);
        fw_bw_linear_dx(b, b->z, b->dhid_up, &layer->up);
        add_into(dh, b->z, r->rows * m->d);
        return;
    }
    fw_activate_backward(kern, m->mlp, b->dhid_pre, NULL, b->dhid, s->hid_pre, NULL, s->hid_cdf, n);
    snprintf(prefix, 64, "layers.%zu.mlp.fc1", layer_index);
    fw_bw_linear_params(b, prefix, &layer->fc1, b->dhid_pre, h);
    fw_bw_linear_dx(b, dh, b->dhid_pre, &layer->fc1);
}

/* QK-norm's backward of one of q, k: dpre from dqk; its weight's gradient */
static void head_norm_backward(fw_bw *b, float *dpre, const float *dqk, const float *pre,
                               const float *weight, const char *name, size_t heads)
{
    const fw_model *m = b->r->m;
    if (m->qk_norm == VP_QK_NORM_HEAD_LAYERNORM) { /* Cohere's: a weight per head */
        fw_bw_qk_layernorm(b, name, dpre, dqk, pre, weight, heads);
        return;
    }
    const size_t per_row = m->qk_norm == VP_QK_NORM_FULL ? 1 : heads;
    const size_t rows = b->r->rows * per_row, width = heads * m->head_dim / per_row;
    fw_bw_norm(b, name, dpre, dqk, pre, NULL, weight, rows, width, 1, 0);
}

/* dh = the attention's share of dL/dh, from df: q's, then k's and v's
   added (through b->z) */
static void attention_backward(fw_bw *b, float *dh, const fw_layer *layer, const fw_saved *s,
                               const float *h, const float *df, char *prefix, size_t l)
{
    fw_run *r = b->r;
    const fw_model *m = r->m;
    const size_t n = r->rows * m->d;
    fw_bw_linear_dx(b, b->datt, df, &layer->o);
    snprintf(prefix, 64, "layers.%zu.attn.o", l);
    fw_bw_linear_params(b, prefix, &layer->o, df, s->att);
    att_job j = {b, s};
    fw_parallel(r, r->batch, attention_task, &j);
    /* rope's transpose, before QK-norm's backward and the projections' */
    if (vp_positions_traits_of(m->positions)->rotary)
        fw_rope(r, b->dq, b->dk, 1);
    const fw_linear *proj[3] = {&layer->q, &layer->k, &layer->v};
    const float *norms[2] = {layer->q_norm, layer->k_norm};
    const char *names[3] = {"q", "k", "v"};
    float *dqkv[3] = {b->dq, b->dk, b->dv};
    const float *pre[2] = {s->q_pre, s->k_pre};
    for (size_t i = 0; i < 3; i++) {
        const float *dproj = dqkv[i];
        if (i < 2 && m->qk_norm) {
            snprintf(prefix, 64, "layers.%zu.attn.%s_norm", l, names[i]);
            head_norm_backward(b, b->dpre, dqkv[i], pre[i], norms[i], prefix,
                               i == 0 ? m->heads : m->kv_heads);
            dproj = b->dpre;
        }
        snprintf(prefix, 64, "layers.%zu.attn.%s", l, names[i]);
        fw_bw_linear_params(b, prefix, proj[i], dproj, h);
        if (i == 0) {
            fw_bw_linear_dx(b, dh, dproj, proj[i]);
        } else {
            fw_bw_linear_dx(b, b->z, dproj, proj[i]);
            add_into(dh, b->z, n);
        }
    }
}

/* A parallel block's MLP on its own norm (residual parallel-two-norms):
   the norm's output made again from x_in as the forward made it, into
   dpre, which nothing reads before the attention's backward; the MLP's
   backward through it; the norm's gradient into dz (a stream norm's,
   which a parallel block has not), for the caller to add to dx once the
   attention has read df, which may be dx itself. */
static void mlp_two_norms_backward(fw_bw *b, const fw_layer *layer, const fw_saved *s,
                                   const float *df, char *prefix, size_t l)
{
    fw_run *r = b->r;
    const fw_model *m = r->m;
    const int rms_norm = m->norm == VP_NORM_RMSNORM;
    fw_normalise(r, b->dpre, s->x_in, &layer->mlp_norm);
    mlp_backward(b, b->dh, layer, s, b->dpre, df, prefix, l);
    snprintf(prefix, 64, "layers.%zu.mlp_norm", l);
    fw_bw_norm(b, prefix, b->dz, b->dh, s->x_in, NULL, layer->mlp_norm.weight, r->rows, m->d,
               rms_norm, !rms_norm);
}

static double rms(const fw_bw *b, const float *v, size_t n)
{
    return sqrt(fw_bw_square_sum(b, v, n) / (double)n);
}

/* One sub-block's backward: dx = dL/dx_k on entry, dL/dx_{k-1} on return.
   Returns weight_grad. */
static double sub_block_backward(fw_bw *b, size_t k)
{
    fw_run *r = b->r;
    const fw_model *m = r->m;
    const vp_placement_traits *t = m->traits;
    const size_t l = vp_config_layer_of(r->cfg, k), n = r->rows * m->d;
    const vp_part part = vp_config_part_of(r->cfg, k);
    const fw_layer *layer = &m->layers_[l];
    const fw_saved *s = &r->saved[k];
    r->layer = l; /* its window and RoPE table (fw_layer_window) */
    const int attn = part == VP_PART_ATTN || part == VP_PART_BLOCK;
    const int mlp = part == VP_PART_MLP || part == VP_PART_BLOCK;
    const int rms_norm = m->norm == VP_NORM_RMSNORM;
    const char *side = part == VP_PART_MLP ? "mlp" : "attn";
    const fw_norm *in_norm = part == VP_PART_MLP ? &layer->mlp_norm : &layer->attn_norm;
    const fw_norm *out_norm = part == VP_PART_MLP ? &layer->mlp_out_norm : &layer->attn_out_norm;
    char prefix[64];
    /* dL/do, o what the sub-block adds */
    const float *d_added = b->dx;
    if (t->norm_stream) {
        /* x_k = N(alpha x_{k-1} + o): z again, as the forward summed it */
        const double alpha = t->residual_alpha ? r->cfg->alpha : 1.0;
        const float *o = s->f;
        if (t->norm_out) {
            fw_normalise(r, b->dpre, s->f, out_norm);
            o = b->dpre;
        }
        m->kernels->scale_add(b->z, s->x_in, o, n, alpha);
        snprintf(prefix, sizeof prefix, "layers.%zu.%s_norm", l, side);
        fw_bw_norm(b, prefix, b->dz, b->dx, b->z, s->stream_stats, in_norm->weight, r->rows, m->d,
                   rms_norm, !rms_norm);
        m->kernels->scale_add(b->dx, b->dz, NULL, n, alpha);
        d_added = b->dz;
    }
    const float *df = d_added;
    if (t->norm_out) {
        snprintf(prefix, sizeof prefix, "layers.%zu.%s_out_norm", l, side);
        fw_bw_norm(b, prefix, b->df, d_added, s->f, NULL, out_norm->weight, r->rows, m->d, rms_norm,
                   !rms_norm);
        df = b->df;
    }
    const float *h = s->h ? s->h : s->x_in;
    /* weight_grad: RMS(dL/do) RMS(h) of each branch's last projection */
    const int measured = !r->no_weight_grad;
    const double rms_df = measured ? rms(b, df, n) : NAN;
    double wg2 = 0.0;
    const int two_norms = attn && mlp && m->residual->norms_per_sub_block > 1;
    if (mlp) {
        const double wg = measured ? rms_df * rms(b, s->hid, r->rows * m->hidden) : NAN;
        wg2 += wg * wg;
        if (two_norms)
            mlp_two_norms_backward(b, layer, s, df, prefix, l);
        else
            mlp_backward(b, b->dh, layer, s, h, df, prefix, l);
    }
    if (attn) {
        const double wg = measured ? rms_df * rms(b, s->att, r->rows * m->q_width) : NAN;
        wg2 += wg * wg;
        /* a parallel block sums the attention's share apart, then adds it:
           mlp + (q + k + v), the order its gradients were always summed in */
        const int summed = mlp && !two_norms;
        attention_backward(b, summed ? b->dsum : b->dh, layer, s, h, df, prefix, l);
        if (summed)
            add_into(b->dh, b->dsum, n);
    }
    /* the branch input's gradient joins the residual path's */
    if (t->norm_in) {
        snprintf(prefix, sizeof prefix, "layers.%zu.%s_norm", l, side);
        /* the statistics the forward normalised x_in with */
        fw_bw_norm(b, prefix, b->dsum, b->dh, s->x_in, s->in_stats, in_norm->weight, r->rows, m->d,
                   rms_norm, !rms_norm);
        add_into(b->dx, b->dsum, n);
    } else {
        add_into(b->dx, b->dh, n);
    }
    if (two_norms) /* the MLP's share, through its own norm */
        add_into(b->dx, b->dz, n);
    return sqrt(wg2 / (double)(attn + mlp));
}

/* OPT's project_in: its W's gradient from the rows looked up again (into
   b->z), and dL/d(looked-up rows) into b->dh, which it returns */
static const float *project_in_backward(fw_bw *b)
{
    const fw_run *r = b->r;
    const size_t e = r->m->embed_dim;
    for (size_t row = 0; row < r->rows; row++)
        fw_embed_row(r->m, b->z + row * e, r->token_ids[row]);
    fw_bw_linear_params(b, "project_in", &r->m->project_in, b->dx, b->z);
    fw_bw_linear_dx(b, b->dh, b->dx, &r->m->project_in);
    return b->dh;
}

/* The embedding's LayerNorm (BLOOM's): its input made again (into b->df:
   looked up, learned positions added; never with project_in, which
   fw_embedding_check refuses beside it), then its backward from dL/dx_0 in
   b->dx to dL/d(its input) in b->dh, which it returns */
static const float *embed_norm_backward(fw_bw *b)
{
    const fw_run *r = b->r;
    const fw_model *m = r->m;
    const size_t d = m->d;
    for (size_t row = 0; row < r->rows; row++) {
        float *x = b->df + row * d;
        fw_embed_row(m, x, r->token_ids[row]);
        const float *pos =
            m->pos_embed ? m->pos_embed + (row % r->tokens + m->position_offset) * d : NULL;
        for (size_t i = 0; pos && i < d; i++)
            x[i] += pos[i];
    }
    fw_bw_norm(b, vp_embedding_norm_traits_of(m->embedding_norm)->prefix, b->dh, b->dx, b->df, NULL,
               m->embed_norm.weight, r->rows, d, 0, 1);
    return b->dh;
}

/* dL/dE: each row's dL/dx_0 (through the embedding's norm and project_in,
   where there are) added to its token's row, in row order; then the learned
   positions' */
static void embedding_backward(fw_bw *b)
{
    if (!b->o->on_param_grad)
        return;
    const fw_run *r = b->r;
    const size_t d = r->m->d, e = r->m->embed_dim;
    const float *dx0 = r->m->embed_norm.weight ? embed_norm_backward(b) : b->dx;
    const float *de = e == d ? dx0 : project_in_backward(b);
    float *dw = fw_bw_grad_at(b, r->m->embed);
    memset(dw, 0, r->m->vocab * e * sizeof *dw);
    const float scale = r->m->embed_scale;
    for (size_t row = 0; row < r->rows; row++) {
        if ((size_t)r->token_ids[row] + 1 == r->m->embed_padding)
            continue; /* nn.Embedding's padding_idx: the lookup gives its row nothing */
        float *dst = dw + (size_t)r->token_ids[row] * e;
        if (scale == 1.0f) {
            add_into(dst, de + row * e, e);
            continue;
        }
        for (size_t i = 0; i < e; i++) /* x_0 = E s: dE gets s dL/dx_0 */
            dst[i] += de[row * e + i] * scale;
    }
    /* tied: the head's use first, the lookups' sum added to it, as PyTorch
       accumulates the one parameter's two gradients */
    for (size_t i = 0; r->m->tied && i < r->m->vocab * e; i++)
        dw[i] = b->head_dw[i] + dw[i];
    fw_bw_emit(b, "embed.weight", dw, r->m->vocab, e);
    if (!r->m->pos_embed)
        return;
    /* learned positions: row t of dL/dP sums dL/dx_0 at position t over the
       batch, in row order (OPT's offset rows on); the others stay 0 */
    dw = fw_bw_grad_at(b, r->m->pos_embed);
    memset(dw, 0, r->m->n_ctx * d * sizeof *dw);
    for (size_t row = 0; row < r->rows; row++)
        add_into(dw + (row % r->tokens + r->m->position_offset) * d, dx0 + row * d, d);
    fw_bw_emit(b, "pos_embed.weight", dw, r->m->n_ctx, d);
}

/* grad_var of row k from b->dx; 0 when it is not a finite float's (on an
   unmeasured run NaN, not measured, and 1) */
static int measure(fw_bw *b, vp_profile *profile, size_t k)
{
    if (b->r->unmeasured) {
        profile->rows[k].grad_var = NAN;
        return 1;
    }
    const size_t n = b->r->rows * b->r->m->d;
    const double g = fw_bw_square_sum(b, b->dx, n) / (double)n;
    profile->rows[k].grad_var = g;
    return isfinite(g);
}

/* The gradient left float's range at sub-block k: no gradient figure from
 * there down (NaN: no value in CSV and JSON), but sub-block k's own where
 * they were measured finite before it. */
static void overflowed(vp_profile *profile, size_t k)
{
    profile->overflow_at = k;
    profile->overflowed = VP_OVERFLOW_FLOAT_GRAD;
    for (size_t i = 0; i < k; i++)
        profile->rows[i].grad_var = profile->rows[i].weight_grad = NAN;
    vp_row *row = &profile->rows[k];
    if (!isfinite(row->grad_var))
        row->grad_var = NAN;
    if (!isfinite(row->weight_grad))
        row->weight_grad = NAN;
}

void fw_backward(fw_run *r, const vp_forward_options *o, vp_profile *profile)
{
    const fw_model *m = r->m;
    const size_t K = profile->sub_blocks;
    fw_bw b = {.r = r, .o = o, .thread_ws = r->backward_thread_ws};
    lay_out(&b, r->backward_block, m, r->rows);
    profile->fields |= VP_HAS_GRAD;
    profile->sampling.loss = o->loss;
    profile->sampling.has_loss = 1;
    const fw_saved *top = &r->saved[K + 1];
    fw_head_loss(&b, top->h, m->has_final_norm ? b.dz : b.dx, &profile->loss);
    if (m->has_final_norm) {
        const int rms_norm = m->norm == VP_NORM_RMSNORM;
        fw_bw_norm(&b, "final_norm", b.dx, b.dz, top->x_in, NULL, m->final_norm.weight, r->rows,
                   m->d, rms_norm, !rms_norm);
    }
    profile->rows[K].grad_var = NAN; /* until measured */
    for (size_t k = 1; k <= K; k++)
        profile->rows[k].weight_grad = NAN;
    int finite = isfinite(profile->loss) && measure(&b, profile, K);
    if (!finite)
        overflowed(profile, K);
    for (size_t k = K; finite && k >= 1; k--) {
        if (fw_model_use_layer(r->m, vp_config_layer_of(r->cfg, k)) != VP_OK)
            return; /* fw_run_network says why */
        if (m->recompute)
            fw_recompute_sub_block(r, k);
        profile->rows[k].weight_grad = sub_block_backward(&b, k);
        progress_meter_add(r->meter, 1);
        if (!(finite = measure(&b, profile, k - 1) &&
                       (r->no_weight_grad || isfinite(profile->rows[k].weight_grad))))
            overflowed(profile, k);
    }
    if (finite)
        embedding_backward(&b);
}
