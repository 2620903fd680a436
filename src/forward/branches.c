/* The branches, attention and the MLP, and the row-parallel steps they run on the pool. */
#include <string.h>

#include "forward/matmul_split.h"
#include "forward/network.h"
#include "forward/qk_layernorm.h"
#include "forward/run.h"
#include "forward/sub_block.h"

/* ---- row-parallel steps ---- */

typedef struct {
    fw_run *run;
    float *out;
    const float *in;
    size_t ldo, ldi;
    const fw_linear *linear;
    const float *wt; /* W^T [in][out] read where it lies (fw_project_wt), else NULL */
    fw_split split;  /* on several threads: whole tiles a task (matmul_split.h) */
} matmul_job;

static void matmul_task(void *ctx, size_t task, size_t thread)
{
    matmul_job *j = ctx;
    fw_run *r = j->run;
    const size_t first = task * r->rows_per_task;
    if (first >= r->rows)
        return;
    const size_t n = r->rows - first < r->rows_per_task ? r->rows - first : r->rows_per_task;
    const fw_linear *l = j->linear;
    if (j->wt)
        r->m->kernels->matmul_wt_columns(j->out + first * j->ldo, j->ldo, j->in + first * j->ldi,
                                         j->ldi, j->wt, l->out, l->bias, n, l->in, l->out, 0,
                                         l->out, 0, r->matmul_ws[thread]);
    else
        r->m->kernels->matmul(j->out + first * j->ldo, j->ldo, j->in + first * j->ldi, j->ldi,
                              l->packed, l->bias, n, l->in, l->out, r->matmul_ws[thread]);
}

/* one tile-aligned block of rows and columns (matmul_split.h) */
static void matmul_columns_task(void *ctx, size_t task, size_t thread)
{
    const matmul_job *j = ctx;
    const fw_run *r = j->run;
    const fw_linear *l = j->linear;
    const size_t m = l->out;
    size_t i0, i1, j0, j1;
    fw_split_task(&j->split, task, &i0, &i1, &j0, &j1);
    float *out = j->out + i0 * j->ldo;
    const float *in = j->in + i0 * j->ldi;
    const kern_table *kn = r->m->kernels;
    if (j->wt) {
        kn->matmul_wt_columns(out, j->ldo, in, j->ldi, j->wt, m, l->bias, i1 - i0, l->in, m, j0, j1,
                              0, r->matmul_ws[thread]);
        return;
    }
    if (l->packed) {
        kn->matmul_columns(out, j->ldo, in, j->ldi, l->packed, l->bias, i1 - i0, l->in, m, j0, j1,
                           r->matmul_ws[thread]);
        return;
    }
    /* drawn: each task makes the panels of its own columns (matmul_split.h
       weighs drawing them again in a second row group) */
    const kern_panel_source w = fw_draw_source(&l->draw);
    kn->matmul_drawn_columns(out, j->ldo, in, j->ldi, &w, l->bias, i1 - i0, l->in, m, j0, j1,
                             r->matmul_ws[thread]);
}

size_t fw_matmul_rows(const fw_model *m, size_t rows, size_t threads)
{
    return threads > 1 || m->drawn ? rows : fw_rows_per_task(rows, threads);
}

static void project(fw_run *r, float *out, const float *in, const fw_linear *linear,
                    const float *wt)
{
    matmul_job j = {r, out, in, linear->out, linear->in, linear, wt, {0}};
    if (r->threads <= 1 && (linear->packed || wt)) {
        fw_parallel(r, r->n_tasks, matmul_task, &j);
        return;
    }
    /* whole tiles a thread: over the columns, and over the rows too where
       the columns alone leave threads idle or uneven */
    const kern_table *kn = r->m->kernels;
    j.split = fw_split_for(r->rows, linear->out, kn->matmul_row_block(linear->out),
                           kn->matmul_column_block(linear->out), r->threads,
                           linear->packed || wt ? FW_SPLIT_STORED_ROWS : FW_SPLIT_DRAW_ROWS);
    fw_parallel(r, fw_split_tasks(&j.split), matmul_columns_task, &j);
}

void fw_project(fw_run *r, float *out, const float *in, const fw_linear *linear)
{
    project(r, out, in, linear, NULL);
}

void fw_project_wt(fw_run *r, float *out, const float *in, const float *wt, size_t k, size_t m)
{
    const fw_linear t = {.in = k, .out = m};
    project(r, out, in, &t, wt);
}

typedef struct {
    fw_run *run;
    float *out;
    const float *in;
    const float *weight, *bias;
    size_t width, rows_per_task, rows;
    int rms, activate;
    const float *in2; /* a gated MLP's second input, up's projection */
    float *cdf;       /* the erf GELU's Phi, kept for the backward; else NULL */
    float *stats;     /* a norm's statistics [rows][2], kept for the backward; else NULL */
} rowwise_job;

static void rowwise_task(void *ctx, size_t task, size_t thread)
{
    (void)thread;
    rowwise_job *j = ctx;
    const fw_model *m = j->run->m;
    const size_t first = task * j->rows_per_task;
    if (first >= j->rows)
        return;
    const size_t n = j->rows - first < j->rows_per_task ? j->rows - first : j->rows_per_task;
    float *out = j->out + first * j->width;
    const float *in = j->in + first * j->width;
    if (j->activate && j->cdf)
        m->kernels->gelu_keep(out, j->cdf + first * j->width, in, n * j->width);
    else if (j->activate)
        fw_activate(m->kernels, m->mlp, out, in, j->in2 ? j->in2 + first * j->width : NULL,
                    n * j->width);
    else if (j->stats && j->rms)
        m->kernels->rmsnorm_keep(out, j->stats + 2 * first, in, j->weight, n, j->width, m->eps);
    else if (j->stats)
        m->kernels->layernorm_keep(out, j->stats + 2 * first, in, j->weight, j->bias, n, j->width,
                                   m->eps);
    else if (j->rms)
        m->kernels->rmsnorm(out, in, j->weight, n, j->width, m->eps);
    else
        m->kernels->layernorm(out, in, j->weight, j->bias, n, j->width, m->eps);
}

void fw_normalise_keep(fw_run *r, float *out, float *stats, const float *in, const fw_norm *norm)
{
    rowwise_job j = {r,
                     out,
                     in,
                     norm->weight,
                     norm->bias,
                     r->m->d,
                     r->rows_per_task,
                     r->rows,
                     r->m->norm == VP_NORM_RMSNORM,
                     0,
                     NULL,
                     NULL,
                     stats};
    fw_parallel(r, r->n_tasks, rowwise_task, &j);
}

void fw_normalise(fw_run *r, float *out, const float *in, const fw_norm *norm)
{
    fw_normalise_keep(r, out, NULL, in, norm);
}

void fw_embed_normalise(fw_run *r, float *x)
{
    const fw_norm *norm = &r->m->embed_norm;
    rowwise_job j = {.run = r,
                     .out = x,
                     .in = x,
                     .weight = norm->weight,
                     .bias = norm->bias,
                     .width = r->m->d,
                     .rows_per_task = r->rows_per_task,
                     .rows = r->rows};
    fw_parallel(r, r->n_tasks, rowwise_task, &j);
}

/* out = act(in), or act(in) * in2 for a gated MLP */
static void activate(fw_run *r, float *out, const float *in, const float *in2)
{
    rowwise_job j = {.run = r,
                     .out = out,
                     .in = in,
                     .width = r->m->hidden,
                     .rows_per_task = r->rows_per_task,
                     .rows = r->rows,
                     .activate = 1,
                     .in2 = in2,
                     .cdf = in2 ? NULL : r->hid_cdf};
    fw_parallel(r, r->n_tasks, rowwise_task, &j);
}

/* QK-norm: RMSNorm over each head's hd coordinates, rows of [rows * heads][hd],
   or over each token's heads hd together (VP_QK_NORM_FULL), rows of [rows][heads hd]. */
static void head_norm(fw_run *r, float *out, const float *in, const float *weight, size_t heads)
{
    if (r->m->qk_norm == VP_QK_NORM_HEAD_LAYERNORM) { /* Cohere's: a weight per head */
        fw_qk_layernorm(r, out, in, weight, heads);
        return;
    }
    const size_t per_row = r->m->qk_norm == VP_QK_NORM_FULL ? 1 : heads;
    rowwise_job j = {r,
                     out,
                     in,
                     weight,
                     NULL,
                     heads * r->m->head_dim / per_row,
                     r->rows_per_task * per_row,
                     r->rows * per_row,
                     1,
                     0,
                     NULL,
                     NULL,
                     NULL};
    fw_parallel(r, r->n_tasks, rowwise_task, &j);
}

void fw_repeat_kv(const fw_model *m, float *dst, const float *src, size_t n)
{
    const size_t hd = m->head_dim, group = m->heads / m->kv_heads;
    for (size_t row = 0; row < n; row++)
        for (size_t h = 0; h < m->heads; h++)
            memcpy(dst + row * m->q_width + h * hd, src + row * m->kv_width + h / group * hd,
                   hd * sizeof *dst);
}

void fw_sum_kv(const fw_model *m, float *dst, const float *src, size_t n)
{
    const size_t hd = m->head_dim, group = m->heads / m->kv_heads;
    for (size_t row = 0; row < n; row++)
        for (size_t j = 0; j < m->kv_heads; j++)
            for (size_t i = 0; i < hd; i++) {
                const float *s = src + row * m->q_width + j * group * hd + i;
                double sum = 0.0;
                for (size_t g = 0; g < group; g++)
                    sum += s[g * hd];
                dst[row * m->kv_width + j * hd + i] = (float)sum;
            }
}

/* one sequence's k and v repeated to the query heads, where they are fewer */
static void repeat_kv_task(void *ctx, size_t b, size_t thread)
{
    (void)thread;
    fw_run *r = ctx;
    const fw_model *m = r->m;
    const size_t at = b * r->tokens * m->q_width, kv_at = b * r->tokens * m->kv_width;
    fw_repeat_kv(m, r->k_exp + at, r->k + kv_at, r->tokens);
    fw_repeat_kv(m, r->v_exp + at, r->v + kv_at, r->tokens);
}

/* one head of one sequence (task b H + h): the kernel over that head alone,
   the same bits as over all H at once (its heads are independent), so that
   a batch of one still fills the threads */
static void attention_task(void *ctx, size_t task, size_t thread)
{
    fw_run *r = ctx;
    const fw_model *m = r->m;
    const size_t b = task / m->heads, h = task % m->heads;
    const size_t at = b * r->tokens * m->q_width + h * m->head_dim;
    m->kernels->attention(r->att + at, m->q_width, r->q + at, r->k_exp + at, r->v_exp + at,
                          m->q_width, r->tokens, 1, m->head_dim, m->attn_scale, m->attn_softcap,
                          r->alibi_slopes ? r->alibi_slopes + h : NULL,
                          fw_layer_window(m, r->layer), r->att_scratch[thread]);
}

/* ---- the branches ---- */

void fw_attention_branch(fw_run *r, const fw_layer *layer, const float *h, float *out)
{
    fw_project(r, r->q_pre, h, &layer->q);
    fw_project(r, r->k_pre, h, &layer->k);
    fw_project(r, r->v, h, &layer->v);
    if (r->m->qk_norm) {
        head_norm(r, r->q, r->q_pre, layer->q_norm, r->m->heads);
        head_norm(r, r->k, r->k_pre, layer->k_norm, r->m->kv_heads);
    }
    if (r->m->kv_heads == r->m->heads) /* the kernel reads k and v as they are */
        r->k_exp = r->k, r->v_exp = r->v;
    /* after QK-norm, as OLMo 2 (Llama has none): q and k in place; without
       QK-norm q_pre is q, which the backward does not read */
    if (vp_positions_traits_of(r->m->positions)->rotary)
        fw_rope(r, r->q, r->k, 0);
    if (r->k_exp != r->k)
        fw_parallel(r, r->batch, repeat_kv_task, r);
    fw_parallel(r, r->batch * r->m->heads, attention_task, r);
    fw_project(r, out, r->att, &layer->o);
}

void fw_mlp_branch(fw_run *r, const fw_layer *layer, const float *h, float *out)
{
    fw_project(r, r->hid_pre, h, &layer->fc1);
    if (r->m->gated) {
        fw_project(r, r->hid_up, h, &layer->up);
        activate(r, r->hid, r->hid_pre, r->hid_up);
    } else {
        activate(r, r->hid, r->hid_pre, NULL);
    }
    fw_project(r, out, r->hid, &layer->fc2);
}
