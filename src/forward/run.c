/* Running the network: a sub-block (sub_block, first), the stack of them, its measurements. */
#include <math.h>
#include <string.h>

#include "forward/embedding.h"
#include "forward/network.h"
#include "forward/run.h"
#include "forward/sub_block.h"
#include "sys/progress_meter.h"
#include "sys/thread_pool.h"

/* ---- a sub-block ---- */

/* Sub-block k on the stream r->x: the branch input (the stream or its
   norm), the attention branch, the MLP or both side by side, what is added
   (the branches' output or its norm), then the residual update with the
   measurements' sums of each group of rows. */
static void sub_block(fw_run *r, size_t k)
{
    const fw_model *m = r->m;
    const vp_placement_traits *t = m->traits;
    const size_t l = vp_config_layer_of(r->cfg, k);
    const vp_part part = vp_config_part_of(r->cfg, k);
    const fw_layer *layer = &m->layers_[l];
    const int attn = part == VP_PART_ATTN || part == VP_PART_BLOCK;
    const int mlp = part == VP_PART_MLP || part == VP_PART_BLOCK;
    r->layer = l; /* its window and RoPE table (fw_layer_window) */
    /* the branch's input: the stream, or its norm */
    const float *h = r->x;
    if (t->norm_in) {
        fw_normalise_keep(r, r->h, r->in_stats, r->x,
                          part == VP_PART_MLP ? &layer->mlp_norm : &layer->attn_norm);
        h = r->h;
    }
    if (attn)
        fw_attention_branch(r, layer, h, r->f);
    const float *h_mlp = h;
    if (attn && mlp && m->residual->norms_per_sub_block > 1) {
        /* two norms: the MLP's own on the same stream, into o's buffer,
           free once the attention has projected its output */
        fw_normalise(r, r->o, r->x, &layer->mlp_norm);
        h_mlp = r->o;
    }
    if (mlp)
        fw_mlp_branch(r, layer, h_mlp, attn ? r->f2 : r->f);
    if (attn && mlp) /* a parallel block adds both branches */
        for (size_t i = 0; i < r->rows * m->d; i++)
            r->f[i] += r->f2[i];
    /* what is added: the branch's output, or its norm (gamma its weight) */
    const float *o = r->f;
    if (t->norm_out) {
        fw_normalise(r, r->o, r->f,
                     part == VP_PART_MLP ? &layer->mlp_out_norm : &layer->attn_out_norm);
        o = r->o;
    }
    fw_update_job j = {r, h, r->f, o, NULL, 1.0};
    if (t->norm_stream) {
        /* each sub-block its own norm; a parallel layer's one is attn_norm */
        j.stream_norm = part == VP_PART_MLP ? &layer->mlp_norm : &layer->attn_norm;
        if (t->residual_alpha)
            j.alpha = r->cfg->alpha;
    }
    /* h may be x itself: the stats read it before the update writes x */
    fw_parallel(r, r->n_tasks, fw_update_task, &j);
}

/* ---- the measurements ---- */

static size_t groups_of(size_t rows)
{
    return (rows + GROUP_ROWS - 1) / GROUP_ROWS;
}

static void sum_stats(const fw_run *r, double sums[N_STATS])
{
    for (int s = 0; s < N_STATS; s++)
        sums[s] = 0.0;
    for (size_t g = 0; g < groups_of(r->rows); g++)
        for (int s = 0; s < N_STATS; s++)
            sums[s] += r->stats[g * N_STATS + s];
}

static int fill_row(const fw_run *r, vp_profile *profile, size_t k, double alpha)
{
    double s[N_STATS];
    sum_stats(r, s);
    const double n = (double)(r->rows * r->m->d);
    vp_row *row = &profile->rows[k];
    row->gain = vp_config_gain(r->cfg, k);
    row->stream_var = s[S_XX] / n;
    row->update_ratio = sqrt(s[S_OO] / (alpha * alpha * s[S_XX_BEFORE]));
    row->embedding_share = sqrt(s[S_CC] / s[S_XX]);
    row->log2_share = log2(row->embedding_share);
    /* a branch that adds nothing has gain 0 and no direction: cosine 0 */
    row->measured_gain = s[S_HH] > 0.0 ? sqrt(s[S_FF] / s[S_HH]) : 0.0;
    row->update_cosine =
        s[S_XX_BEFORE] > 0.0 && s[S_OO] > 0.0 ? s[S_XO] / sqrt(s[S_XX_BEFORE] * s[S_OO]) : 0.0;
    row->stream_norm = sqrt(s[S_XX]);
    return isfinite(row->stream_var) && isfinite(row->update_ratio) &&
           isfinite(row->embedding_share) && isfinite(row->stream_norm);
}

/* x += pos: GPT-2's wte + wpe, one float sum */
static void add_position(float *restrict x, const float *restrict pos, size_t d)
{
    for (size_t i = 0; i < d; i++)
        x[i] += pos[i];
}

static void embed(fw_run *r, vp_profile *profile)
{
    const fw_model *m = r->m;
    const size_t d = m->d, e = m->embed_dim;
    /* OPT's narrower embedding is looked up apart (f is free until the first
       branch) and mapped to the stream by project_in */
    float *looked_up = e == d ? r->x : r->f;
    for (size_t row = 0; row < r->rows; row++)
        fw_embed_row(m, looked_up + row * e, r->token_ids[row]);
    if (e != d)
        fw_project(r, r->x, looked_up, &m->project_in);
    for (size_t row = 0; m->pos_embed && row < r->rows; row++) /* position t, offset rows on */
        add_position(r->x + row * d, m->pos_embed + (row % r->tokens + m->position_offset) * d, d);
    if (m->embed_norm.weight) /* BLOOM's word_embeddings_layernorm */
        fw_embed_normalise(r, r->x);
    double xx = 0.0;
    for (size_t row = 0; row < r->rows; row++) {
        for (size_t i = 0; i < d; i++)
            xx += (double)r->x[row * d + i] * r->x[row * d + i];
    }
    memcpy(r->c, r->x, r->rows * d * sizeof(float));
    /* |c|^2 stands until a norm moves c */
    for (size_t g = 0; g < groups_of(r->rows); g++)
        r->stats[g * N_STATS + S_CC] = 0.0;
    for (size_t row = 0; row < r->rows; row++)
        r->stats[row / GROUP_ROWS * N_STATS + S_CC] += r->m->kernels->square_sum(r->c + row * d, d);
    vp_row *row0 = &profile->rows[0];
    row0->stream_var = xx / (double)(r->rows * d);
    row0->embedding_share = 1.0;
    row0->stream_norm = sqrt(xx);
}

/* ---- the run ---- */

size_t fw_stats_doubles(size_t rows)
{
    return groups_of(rows) * N_STATS;
}

size_t fw_rows_per_task(size_t rows, size_t threads)
{
    const size_t tasks = threads <= 1 ? 1 : 4 * threads;
    const size_t per_task = rows == 0 ? 1 : (rows + tasks - 1) / tasks;
    return (per_task + GROUP_ROWS - 1) / GROUP_ROWS * GROUP_ROWS;
}

/* Points the run's intermediate values of sub-block k where the backward
   finds them. */
static void point_at_saved(fw_run *r, size_t k)
{
    const fw_saved *s = &r->saved[k];
    if (s->h)
        r->h = s->h;
    r->in_stats = s->in_stats;
    r->stream_stats = s->stream_stats;
    r->f = s->f;
    if (s->hid) {
        r->hid_pre = s->hid_pre;
        r->hid = s->hid;
        r->hid_up = s->hid_up;
        r->hid_cdf = s->hid_cdf;
    }
    if (s->q) {
        r->q_pre = s->q_pre;
        r->k_pre = s->k_pre;
        r->q = s->q;
        r->k = s->k;
        r->v = s->v;
        r->att = s->att;
    }
}

/* With a backward, sub-block k's stream and intermediate values go where
   the backward finds them; the run's own buffers serve otherwise. */
static void keep_sub_block(fw_run *r, size_t k)
{
    memcpy(r->saved[k].x_in, r->x, r->rows * r->m->d * sizeof(float));
    point_at_saved(r, k);
}

void fw_recompute_sub_block(fw_run *r, size_t k)
{
    /* the stream it started from; its output and measurements go unread */
    memcpy(r->x, r->saved[k].x_in, r->rows * r->m->d * sizeof(float));
    point_at_saved(r, k);
    sub_block(r, k);
}

/* Points the run at the workspace's buffers: keep_sub_block moves them on
   into the kept ones, so every run starts here again. */
static void point_at(fw_run *r, fw_workspace *ws)
{
    const fw_model *m = r->m;
    const size_t block = r->rows * m->d, q_block = r->rows * m->q_width;
    const size_t kv_block = r->rows * m->kv_width;
    float *p = ws->activations;
    r->pool = ws->pool;
    r->stats = ws->stats;
    r->matmul_ws = ws->matmul_ws;
    r->att_scratch = ws->att_scratch;
    r->saved = ws->saved;
    r->backward_block = ws->backward_block;
    r->backward_thread_ws = ws->backward_thread_ws;
    r->no_weight_grad = ws->no_weight_grad;
    r->unmeasured = ws->unmeasured;
    r->rope_cos = ws->rope_cos;
    r->rope_sin = ws->rope_sin;
    r->alibi_slopes = ws->alibi_slopes;
    r->grads = ws->grads;
    r->x = p, p += block;
    r->c = p, p += block;
    r->h = p, p += block;
    r->f = p, p += block;
    r->f2 = p, p += block;
    r->o = p, p += block;
    r->q = p, p += q_block;
    r->k = p, p += kv_block;
    r->v = p, p += kv_block;
    /* the attention's output is projected before o is written */
    if (m->q_width <= m->d)
        r->att = r->o;
    else
        r->att = p, p += q_block;
    r->k_exp = r->k, r->v_exp = r->v;
    if (m->kv_heads != m->heads) {
        r->k_exp = p, p += q_block;
        r->v_exp = p, p += q_block;
    }
    r->hid = p, p += r->rows * m->hidden;
    r->hid_up = m->gated ? p : NULL;
    r->q_pre = r->q, r->k_pre = r->k, r->hid_pre = r->hid; /* normalised, activated in place */
}

/* Multiply-adds of a sub-block's largest matmul each thread is given at
   the least: below it, waking one more of the pool's threads for each step
   costs more than the share of the step it takes (the measurements are in
   tests/bench/RESULTS.md). A run takes as many threads as its work fills,
   at most those it was given; below two threads' worth (2^22) it keeps to
   the calling thread. */
#define FW_WORK_PER_THREAD 2097152.0

/* The stack, its measurements and, with a backward, the backward pass. */
static void run_stack(fw_run *r, const vp_forward_options *o, vp_profile *profile, int backward)
{
    const fw_model *m = r->m;
    embed(r, profile);
    const double alpha = m->traits->residual_alpha ? r->cfg->alpha : 1.0;
    for (size_t k = 1; k <= profile->sub_blocks; k++) {
        if (fw_model_use_layer(m, vp_config_layer_of(r->cfg, k)) != VP_OK)
            return; /* a streamed layer that could not be read: the caller says */
        if (backward)
            keep_sub_block(r, k);
        sub_block(r, k);
        progress_meter_add(r->meter, 1);
        if (!r->unmeasured && !fill_row(r, profile, k, alpha)) {
            profile->overflow_at = k;
            profile->overflowed = isinf(profile->rows[k].stream_var) ? VP_OVERFLOW_STREAM_VAR
                                                                     : VP_OVERFLOW_FLOAT_STREAM;
            profile->n_rows = k;
            break;
        }
    }
    /* the backward starts from the top of a stack that stayed finite */
    if (backward && !profile->overflow_at) {
        const fw_saved *top = &r->saved[profile->sub_blocks + 1];
        memcpy(top->x_in, r->x, r->rows * m->d * sizeof(float));
        if (m->has_final_norm)
            fw_normalise(r, top->h, top->x_in, &m->final_norm);
        fw_backward(r, o, profile);
    }
}

vp_status fw_run_network(const fw_model *m, const vp_config *cfg, const vp_forward_options *o,
                         const uint32_t *token_ids, vp_profile *profile, fw_workspace *ws,
                         vp_error *err)
{
    fw_workspace *own = NULL;
    if (!ws) {
        vp_status status = fw_workspace_create(m, o->batch, o->tokens, o->threads, &own, err);
        if (status != VP_OK)
            return status;
        ws = own;
    }
    const int backward = cfg->grad && m->backward;
    if (ws->m != m || ws->batch != o->batch || ws->tokens != o->tokens ||
        ws->threads != o->threads || (backward && profile->sub_blocks != ws->sub_blocks)) {
        fw_workspace_free(own);
        return vp_fail(err, VP_EINVAL,
                       "the workspace was made for another model or for %zu x %zu tokens on "
                       "%zu threads, not %zu x %zu on %zu",
                       ws->batch, ws->tokens, ws->threads, o->batch, o->tokens, o->threads);
    }
    progress_meter meter;
    fw_run r = {.m = m,
                .cfg = cfg,
                .batch = o->batch,
                .tokens = o->tokens,
                .rows = o->batch * o->tokens,
                .token_ids = (uint32_t *)token_ids,
                .meter = &meter};
    /* a stack whose sub-block is little work (the seed stack's: 24 rows of
       width 48) runs on the calling thread alone: handing each step to the
       pool's threads costs more than the step */
    const double work =
        (double)r.rows * (double)m->d * (double)(m->hidden > m->d ? m->hidden : m->d);
    const double filled = floor(work / FW_WORK_PER_THREAD);
    r.threads = filled < 2.0 ? 1 : filled < (double)ws->threads ? (size_t)filled : ws->threads;
    r.rows_per_task = fw_rows_per_task(r.rows, r.threads);
    r.n_tasks = (r.rows + r.rows_per_task - 1) / r.rows_per_task;
    point_at(&r, ws);
    progress_meter_start(&meter, o->progress, profile->sub_blocks * (backward ? 2 : 1));
    run_stack(&r, o, profile, backward);
    progress_meter_finish(&meter);
    fw_workspace_free(own);
    if (m->stream && m->stream->status != VP_OK) /* a layer that could not be read */
        return vp_fail(err, m->stream->status, "%s", m->stream->err.message);
    return VP_OK;
}
