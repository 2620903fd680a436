/* Cohere's QK-norm: a LayerNorm without bias over each head, a weight per head.
 * The kernels' LayerNorm takes one weight for every row and a bias, so each
 * head's row is normalised alone, with norm_stats's statistics (which the
 * backward sums again, to the same bits) and layernorm_backward for its dx. */
#include <stdio.h>
#include <string.h>

#include "forward/qk_layernorm.h"

void fw_q_norm_shape(const fw_model *m, int keys, size_t *rows, size_t *cols)
{
    if (m->qk_norm == VP_QK_NORM_HEAD_LAYERNORM) {
        *rows = keys ? m->kv_heads : m->heads;
        *cols = m->head_dim;
        return;
    }
    *rows = fw_q_norm_width(m, keys);
    *cols = 0;
}

typedef struct {
    const fw_run *r;
    float *out;
    const float *in, *weight;
    size_t heads;
} forward_job;

/* token rows [task rows_per_task, ...), each head's hd in turn */
static void forward_task(void *ctx, size_t task, size_t thread)
{
    (void)thread;
    const forward_job *j = ctx;
    const fw_run *r = j->r;
    const size_t hd = r->m->head_dim, first = task * r->rows_per_task;
    if (first >= r->rows)
        return;
    const size_t n = r->rows - first < r->rows_per_task ? r->rows - first : r->rows_per_task;
    for (size_t row = first * j->heads; row < (first + n) * j->heads; row++) {
        const float *x = j->in + row * hd, *w = j->weight + row % j->heads * hd;
        float *y = j->out + row * hd, stats[2];
        r->m->kernels->norm_stats(stats, x, 1, hd, r->m->eps, 0);
        /* as the layernorm kernel's scalar loop, without its bias */
        for (size_t i = 0; i < hd; i++)
            y[i] = (x[i] - stats[0]) * stats[1] * w[i];
    }
}

void fw_qk_layernorm(fw_run *r, float *out, const float *in, const float *weight, size_t heads)
{
    forward_job j = {r, out, in, weight, heads};
    fw_parallel(r, r->n_tasks, forward_task, &j);
}

typedef struct {
    fw_bw *b;
    float *dx, *dw;
    const float *dy, *x, *weight;
    size_t heads, per_task; /* per_task: the norm rows (token rows x heads) a task */
} backward_job;

/* norm rows [task per_task, ...): their statistics into b->stats, then dx,
   each row with its head's weight */
static void dx_task(void *ctx, size_t task, size_t thread)
{
    (void)thread;
    const backward_job *j = ctx;
    const fw_run *r = j->b->r;
    const kern_table *kern = r->m->kernels;
    const size_t hd = r->m->head_dim, rows = r->rows * j->heads, first = task * j->per_task;
    if (first >= rows)
        return;
    const size_t n = rows - first < j->per_task ? rows - first : j->per_task;
    float *stats = j->b->stats;
    kern->norm_stats(stats + 2 * first, j->x + first * hd, n, hd, r->m->eps, 0);
    for (size_t row = first; row < first + n; row++)
        kern->layernorm_backward(j->dx + row * hd, j->dy + row * hd, j->x + row * hd,
                                 stats + 2 * row, j->weight + row % j->heads * hd, 1, hd,
                                 r->m->eps);
}

/* head h's weight gradient: its rows' statistics gathered after every
   head's (b->stats' second half), then the kernel over its hd columns of
   the [rows][heads hd] rows */
static void weight_task(void *ctx, size_t h, size_t thread)
{
    (void)thread;
    const backward_job *j = ctx;
    const fw_run *r = j->b->r;
    const size_t hd = r->m->head_dim, rows = r->rows, heads = j->heads;
    const float *stats = j->b->stats;
    float *gathered = j->b->stats + 2 * rows * heads + 2 * rows * h;
    for (size_t i = 0; i < rows; i++) {
        gathered[2 * i] = stats[2 * (i * heads + h)];
        gathered[2 * i + 1] = stats[2 * (i * heads + h) + 1];
    }
    memset(j->dw + h * hd, 0, hd * sizeof *j->dw); /* the kernel adds to it */
    r->m->kernels->norm_param_grads(j->dw, NULL, j->dy, j->x, gathered, rows, heads * hd, h * hd,
                                    (h + 1) * hd, r->m->eps, 0);
}

void fw_bw_qk_layernorm(fw_bw *b, const char *prefix, float *dx, const float *dy, const float *x,
                        const float *weight, size_t heads)
{
    const fw_run *r = b->r;
    const size_t tasks = r->n_tasks, rows = r->rows * heads;
    backward_job j = {b, dx, NULL, dy, x, weight, heads, (rows + tasks - 1) / tasks};
    fw_parallel(r, tasks, dx_task, &j);
    if (!b->o->on_param_grad)
        return;
    j.dw = fw_bw_grad_at(b, weight);
    fw_parallel(r, heads, weight_task, &j);
    snprintf(b->name, sizeof b->name, "%s.weight", prefix);
    fw_bw_emit(b, b->name, j.dw, heads, r->m->head_dim);
}
