/* The backward pass's steps: dX of a projection, the parameter gradients of
 * a projection and of a norm, a norm's dx. Row-wise steps split rows over
 * the pool; parameter gradients split W's rows, each a sum over the batch's
 * rows in one fixed order, so that no figure depends on the thread count. */
#include <stdio.h>
#include <string.h>

#include "forward/backward.h"

void fw_bw_linear_dx(fw_bw *b, float *dx, const float *dy, const fw_linear *lin)
{
    if (lin->raw && !lin->packed_t) { /* W [out][in] is W^T's transpose as it lies */
        fw_project_wt(b->r, dx, dy, lin->raw, lin->out, lin->in);
        return;
    }
    /* W^T packed is W's transpose as a layer of in outputs from out inputs;
       drawn, its panels made from W's draws */
    fw_linear t = {
        .in = lin->out, .out = lin->in, .packed = lin->packed_t, .bias = NULL, .draw = lin->draw};
    t.draw.transposed = 1;
    fw_project(b->r, dx, dy, &t);
}

void fw_bw_emit(fw_bw *b, const char *name, const float *grad, size_t rows, size_t cols)
{
    const vp_param_grad g = {name, cols ? 2 : 1, {rows, cols}, grad};
    b->o->on_param_grad(b->o->param_grad_ctx, &g);
}

typedef struct {
    fw_bw *b;
    float *dw, *db;
    const float *dy, *x;
    size_t out, in, per_task;
} dw_job;

/* dW's rows [first, first + n) and db's, each a sum over the batch's rows in
   one order, whatever the split */
static void dw_task(void *ctx, size_t task, size_t thread)
{
    const dw_job *j = ctx;
    fw_bw *b = j->b;
    const size_t first = task * j->per_task, rows = b->r->rows;
    if (first >= j->out)
        return;
    const size_t n = j->out - first < j->per_task ? j->out - first : j->per_task;
    /* set, not added to: each task writes its own rows */
    b->r->m->kernels->matmul_weight_grad(j->dw + first * j->in, j->in, j->db + first, j->dy + first,
                                         j->out, j->x, j->in, rows, j->in, n, 0,
                                         b->thread_ws[thread]);
}

static void linear_grads(fw_bw *b, const fw_linear *lin, const float *dy, const float *x, float *dw,
                         float *db)
{
    const size_t out = lin->out, in = lin->in;
    const size_t tasks = b->r->n_tasks;
    /* dW's rows are the rows of the kernel's matmul (of in columns): whole
       tiles of them a task, so that no task ends in a short panel */
    const size_t mr = b->r->m->kernels->matmul_row_block(in);
    const size_t per_task = ((out + tasks - 1) / tasks + mr - 1) / mr * mr;
    dw_job j = {b, dw, db, dy, x, out, in, per_task};
    fw_parallel(b->r, (out + per_task - 1) / per_task, dw_task, &j);
}

/* The arena's slot for the tensor at param, else own */
static float *slot_or(const fw_bw *b, const float *param, float *own)
{
    const fw_grad_slot *s = b->r->grads ? fw_grads_slot_of(b->r->grads, param) : NULL;
    return s ? s->grad : own;
}

float *fw_bw_grad_at(fw_bw *b, const float *param)
{
    return slot_or(b, param, b->dw);
}

void fw_bw_linear_grads(fw_bw *b, const fw_linear *lin, const float *dy, const float *x)
{
    float *db = lin->bias ? slot_or(b, lin->bias, b->db) : b->db;
    linear_grads(b, lin, dy, x, b->dw, db);
    if (db != b->db) /* in b->db too, as promised */
        memcpy(b->db, db, lin->out * sizeof *db);
}

/* The gradient `name` of the tensor at param, n floats, goes into its slot
   of the run's arena, else where the caller says (param_grad_dest), else
   into own. */
static float *grad_dest(const fw_bw *b, const float *param, const char *name, size_t n, float *own)
{
    if (b->r->grads)
        return slot_or(b, param, own);
    float *dest =
        b->o->param_grad_dest ? b->o->param_grad_dest(b->o->param_grad_ctx, name, n) : NULL;
    return dest ? dest : own;
}

void fw_bw_linear_params(fw_bw *b, const char *prefix, const fw_linear *lin, const float *dy,
                         const float *x)
{
    if (!b->o->on_param_grad)
        return;
    const size_t out = lin->out, in = lin->in;
    char bias_name[sizeof b->name];
    snprintf(b->name, sizeof b->name, "%s.weight", prefix);
    snprintf(bias_name, sizeof bias_name, "%s.bias", prefix);
    float *dw = grad_dest(b, lin->raw, b->name, out * in, b->dw);
    float *db = lin->bias ? grad_dest(b, lin->bias, bias_name, out, b->db) : b->db;
    linear_grads(b, lin, dy, x, dw, db);
    fw_bw_emit(b, b->name, dw, out, in);
    if (!lin->bias)
        return; /* db was summed with dW; a projection without a bias has no tensor for it */
    fw_bw_emit(b, bias_name, db, out, 0);
}

typedef struct {
    fw_bw *b;
    float *dx;
    const float *dy, *x, *weight;
    size_t width, rows, per_task;
    int rms;
    const float *kept; /* the forward's statistics of x's rows, or NULL */
} norm_job;

/* the rows [first, first + per_task): their statistics, then their dx */
static void norm_task(void *ctx, size_t task, size_t thread)
{
    (void)thread;
    const norm_job *j = ctx;
    const size_t first = task * j->per_task;
    if (first >= j->rows)
        return;
    const size_t n = j->rows - first < j->per_task ? j->rows - first : j->per_task;
    const size_t at = first * j->width;
    const kern_table *kern = j->b->r->m->kernels;
    const float eps = j->b->r->m->eps;
    const float *stats = j->kept ? j->kept + 2 * first : j->b->stats + 2 * first;
    if (!j->kept)
        kern->norm_stats(j->b->stats + 2 * first, j->x + at, n, j->width, eps, j->rms);
    if (j->rms)
        kern->rmsnorm_backward(j->dx + at, j->dy + at, j->x + at, stats, j->weight, n, j->width,
                               eps);
    else
        kern->layernorm_backward(j->dx + at, j->dy + at, j->x + at, stats, j->weight, n, j->width,
                                 eps);
}

typedef struct {
    fw_bw *b;
    float *dw, *db; /* the weight's and the bias's gradients [width] */
    const float *dy, *x, *stats;
    size_t rows, width, per_task;
    int rms;
} norm_params_job;

/* the columns [first, first + per_task) of the norm's weight and bias */
static void norm_params_task(void *ctx, size_t task, size_t thread)
{
    (void)thread;
    const norm_params_job *j = ctx;
    const size_t first = task * j->per_task;
    if (first >= j->width)
        return;
    const size_t end = first + j->per_task < j->width ? first + j->per_task : j->width;
    fw_bw *b = j->b;
    /* the kernel adds to them: each task clears its own columns */
    memset(j->dw + first, 0, (end - first) * sizeof *j->dw);
    memset(j->db + first, 0, (end - first) * sizeof *j->db);
    b->r->m->kernels->norm_param_grads(j->dw, j->rms ? NULL : j->db, j->dy, j->x, j->stats, j->rows,
                                       j->width, first, end, b->r->m->eps, j->rms);
}

void fw_bw_norm(fw_bw *b, const char *prefix, float *dx, const float *dy, const float *x,
                const float *kept, const float *weight, size_t rows, size_t width, int rms,
                int has_bias)
{
    const size_t tasks = b->r->n_tasks;
    has_bias = has_bias && !b->r->m->norm_unbiased; /* Cohere's LayerNorm: no bias tensor */
    norm_job j = {b, dx, dy, x, weight, width, rows, (rows + tasks - 1) / tasks, rms, kept};
    fw_parallel(b->r, tasks, norm_task, &j);
    if (!b->o->on_param_grad)
        return;
    /* in the arena, the bias's slot is the next one: fw_model_tensors
       walks a norm's weight, then its bias */
    const fw_grad_slot *s = b->r->grads ? fw_grads_slot_of(b->r->grads, weight) : NULL;
    float *dw = s ? s->grad : b->dw, *db = s && has_bias ? s[1].grad : b->db;
    norm_params_job pj = {
        b, dw, db, dy, x, kept ? kept : b->stats, rows, width, (width + tasks - 1) / tasks, rms};
    fw_parallel(b->r, tasks, norm_params_task, &pj);
    snprintf(b->name, sizeof b->name, "%s.weight", prefix);
    fw_bw_emit(b, b->name, dw, width, 0);
    if (has_bias) {
        snprintf(b->name, sizeof b->name, "%s.bias", prefix);
        fw_bw_emit(b, b->name, db, width, 0);
    }
}

double fw_bw_square_sum(const fw_bw *b, const float *v, size_t n)
{
    return b->r->m->kernels->square_sum(v, n);
}
