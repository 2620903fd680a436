/* The backward pass's steps: dX of a projection, the parameter gradients of
 * a projection and of a norm, a norm's dx. Row-wise steps split rows over
 * the pool; parameter gradients split W's rows, each a sum over the batch's
 * rows in one fixed order, so that no figure depends on the thread count. */
#include <stdio.h>
#include <string.h>

#include "forward/backward.h"
#include "forward/tmp_grad_kernels.h"

void fw_bw_linear_dx(fw_bw *b, float *dx, const float *dy, const fw_linear *lin)
{
    /* W^T packed is W's transpose as a layer of in outputs from out inputs */
    const fw_linear t = {.in = lin->out, .out = lin->in, .packed = lin->packed_t, .bias = NULL};
    fw_project(b->r, dx, dy, &t);
}

void fw_bw_emit(fw_bw *b, const char *name, const float *grad, size_t rows, size_t cols)
{
    const vp_param_grad g = {name, cols ? 2 : 1, {rows, cols}, grad};
    b->o->on_param_grad(b->o->param_grad_ctx, &g);
}

/* a [rows][cols] -> t [cols][rows] */
static void transpose(float *t, const float *a, size_t rows, size_t cols)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            t[j * rows + i] = a[i * cols + j];
}

typedef struct {
    fw_bw *b;
    size_t out, in, per_task;
} dw_job;

/* dW rows [first, first + n) = dY^T rows times X: the matmul over k = the
   batch's rows, whose blocking is fixed, so only the split over W's rows
   moves with the threads */
static void dw_task(void *ctx, size_t task, size_t thread)
{
    const dw_job *j = ctx;
    fw_bw *b = j->b;
    const size_t first = task * j->per_task, rows = b->r->rows;
    if (first >= j->out)
        return;
    const size_t n = j->out - first < j->per_task ? j->out - first : j->per_task;
    b->r->m->kernels->matmul(b->dw + first * j->in, j->in, b->dy_t + first * rows, rows,
                             b->x_packed, NULL, n, rows, j->in, b->thread_ws[thread]);
}

void fw_bw_linear_params(fw_bw *b, const char *prefix, const fw_linear *lin, const float *dy,
                         const float *x)
{
    if (!b->o->on_param_grad)
        return;
    const size_t rows = b->r->rows, out = lin->out, in = lin->in;
    transpose(b->dy_t, dy, rows, out);
    transpose(b->x_t, x, rows, in);
    b->r->m->kernels->matmul_pack(b->x_packed, b->x_t, rows, in);
    const size_t tasks = b->r->n_tasks;
    dw_job j = {b, out, in, (out + tasks - 1) / tasks};
    thread_pool_run(b->r->pool, tasks, dw_task, &j);
    for (size_t o = 0; o < out; o++) {
        double sum = 0.0;
        for (size_t r = 0; r < rows; r++)
            sum += b->dy_t[o * rows + r];
        b->db[o] = (float)sum;
    }
    snprintf(b->name, sizeof b->name, "%s.weight", prefix);
    fw_bw_emit(b, b->name, b->dw, out, in);
    snprintf(b->name, sizeof b->name, "%s.bias", prefix);
    fw_bw_emit(b, b->name, b->db, out, 0);
}

typedef struct {
    fw_bw *b;
    float *out;
    const float *dy, *x, *weight, *bias;
    size_t width, rows, per_task;
    int rms, forward;
} norm_job;

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
    if (j->forward && j->rms)
        kern->rmsnorm(j->out + at, j->x + at, j->weight, n, j->width, eps);
    else if (j->forward)
        kern->layernorm(j->out + at, j->x + at, j->weight, j->bias, n, j->width, eps);
    else if (j->rms)
        fw_tmp_rmsnorm_backward(j->out + at, j->dy + at, j->x + at, j->weight, n, j->width, eps);
    else
        fw_tmp_layernorm_backward(j->out + at, j->dy + at, j->x + at, j->weight, n, j->width,
                                  eps);
}

static void run_norm_job(fw_bw *b, norm_job *j)
{
    const size_t tasks = b->r->n_tasks;
    j->per_task = (j->rows + tasks - 1) / tasks;
    thread_pool_run(b->r->pool, tasks, norm_task, j);
}

void fw_bw_norm_dx(fw_bw *b, float *dx, const float *dy, const float *x, const float *weight,
                   size_t rows, size_t width, int rms)
{
    norm_job j = {b, dx, dy, x, weight, NULL, width, rows, 0, rms, 0};
    run_norm_job(b, &j);
}

void fw_bw_norm_params(fw_bw *b, const char *prefix, const float *dy, const float *x,
                       size_t rows, size_t width, int rms, int has_bias)
{
    if (!b->o->on_param_grad)
        return;
    /* x normalised with weight 1 and bias 0, as the forward kernel does it */
    norm_job j = {b, b->xhat, NULL, x, b->ones, b->zeros, width, rows, 0, rms, 1};
    run_norm_job(b, &j);
    for (size_t i = 0; i < width; i++) {
        double w = 0.0, s = 0.0;
        for (size_t r = 0; r < rows; r++) {
            w += (double)dy[r * width + i] * b->xhat[r * width + i];
            s += dy[r * width + i];
        }
        b->dw[i] = (float)w;
        b->db[i] = (float)s;
    }
    snprintf(b->name, sizeof b->name, "%s.weight", prefix);
    fw_bw_emit(b, b->name, b->dw, width, 0);
    if (has_bias) {
        snprintf(b->name, sizeof b->name, "%s.bias", prefix);
        fw_bw_emit(b, b->name, b->db, width, 0);
    }
}

double fw_bw_square_sum(const fw_bw *b, const float *v, size_t n)
{
    return b->r->m->kernels->square_sum(v, n);
}
