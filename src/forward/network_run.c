/* Running the network: every sub-block on the batch, then its measurements. */
#include <Random123/philox.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forward/network.h"
#include "forward/run.h"
#include "sys/progress_meter.h"
#include "sys/thread_pool.h"
#include "core/profile_header.h"

#define TOKEN_WORD 0x544f4b4eu /* "TOKN": the token ids' Philox stream */

/* Sums in double over each group of GROUP_ROWS rows (the last may be
   shorter), reduced in group order after each sub-block: the residual
   kernel's, then |c|^2. Groups start at fixed rows and a task holds whole
   groups, so the sums do not depend on the thread count; a group, not a
   row, keeps the per-sum reductions off a narrow stream's inner loop. */
#define GROUP_ROWS 8

enum {
    S_XX_BEFORE = KERN_RESIDUAL_XX_BEFORE,
    S_OO = KERN_RESIDUAL_OO,
    S_XO = KERN_RESIDUAL_XO,
    S_HH = KERN_RESIDUAL_HH,
    S_FF = KERN_RESIDUAL_FF,
    S_XX = KERN_RESIDUAL_XX,
    S_CC = KERN_RESIDUAL_SUMS,
    N_STATS
};

static size_t groups_of(size_t rows)
{
    return (rows + GROUP_ROWS - 1) / GROUP_ROWS;
}

/* ---- row-parallel steps ---- */

typedef struct {
    fw_run *run;
    float *out;
    const float *in;
    size_t ldo, ldi;
    const fw_linear *linear;
    const float *wt;      /* W^T [in][out] read where it lies (fw_project_wt), else NULL */
    size_t cols_per_task; /* split by columns: a multiple of the kernel's column block */
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

/* columns [task c, (task + 1) c) of every row */
static void matmul_columns_task(void *ctx, size_t task, size_t thread)
{
    const matmul_job *j = ctx;
    const fw_run *r = j->run;
    const size_t m = j->linear->out, j0 = task * j->cols_per_task;
    if (j0 >= m)
        return;
    const size_t j1 = m - j0 < j->cols_per_task ? m : j0 + j->cols_per_task;
    if (j->wt) {
        r->m->kernels->matmul_wt_columns(j->out, j->ldo, j->in, j->ldi, j->wt, m, j->linear->bias,
                                         r->rows, j->linear->in, m, j0, j1, 0,
                                         r->matmul_ws[thread]);
        return;
    }
    if (j->linear->packed) {
        r->m->kernels->matmul_columns(j->out, j->ldo, j->in, j->ldi, j->linear->packed,
                                      j->linear->bias, r->rows, j->linear->in, m, j0, j1,
                                      r->matmul_ws[thread]);
        return;
    }
    /* drawn: each thread makes the panels of its own columns */
    const kern_panel_source w = fw_draw_source(&j->linear->draw);
    r->m->kernels->matmul_drawn_columns(j->out, j->ldo, j->in, j->ldi, &w, j->linear->bias, r->rows,
                                        j->linear->in, m, j0, j1, r->matmul_ws[thread]);
}

size_t fw_matmul_rows(const fw_model *m, size_t rows, size_t threads)
{
    return threads > 1 || m->drawn ? rows : fw_rows_per_task(rows, threads);
}

static void project(fw_run *r, float *out, const float *in, const fw_linear *linear,
                    const float *wt)
{
    matmul_job j = {r, out, in, linear->out, linear->in, linear, wt, 0};
    if (r->threads <= 1 && (linear->packed || wt)) {
        fw_parallel(r, r->n_tasks, matmul_task, &j);
        return;
    }
    /* one range of whole column blocks a thread */
    const size_t block = r->m->kernels->matmul_column_block(linear->out);
    const size_t blocks = (linear->out + block - 1) / block;
    j.cols_per_task = (blocks + r->threads - 1) / r->threads * block;
    fw_parallel(r, (linear->out + j.cols_per_task - 1) / j.cols_per_task, matmul_columns_task, &j);
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
                          r->att_scratch[thread]);
}

/* ---- the branches ---- */

static void attention_branch(fw_run *r, const fw_layer *layer, const float *h, float *out)
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
    if (r->m->positions == VP_POSITIONS_ROPE)
        fw_rope(r, r->q, r->k, 0);
    if (r->k_exp != r->k)
        fw_parallel(r, r->batch, repeat_kv_task, r);
    fw_parallel(r, r->batch * r->m->heads, attention_task, r);
    fw_project(r, out, r->att, &layer->o);
}

static void mlp_branch(fw_run *r, const fw_layer *layer, const float *h, float *out)
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

/* ---- the residual update and the measurements ---- */

typedef struct {
    fw_run *run;
    const float *h, *f, *o;
    const fw_norm *stream_norm; /* NULL: the stream is not normalised */
    double alpha;
} update_job;

/* The elementwise loops here (the Post-LN update's steps in double are
   kernels: stream_body.h) go LANES at a time, a count gcc -O2 vectorises
   (its cheap cost model takes no loop of unknown count), then one at a
   time; each element is the same operation either way. The row's sums
   stay one at a time, in order. */
#define LANES 8

/* x += o, the float sum the residual kernel makes, without its sums */
static void add_float(float *restrict x, const float *restrict o, size_t n)
{
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (size_t j = 0; j < LANES; j++)
            x[i + j] = x[i + j] + o[i + j];
    for (; i < n; i++)
        x[i] = x[i] + o[i];
}

/* c = (alpha c - c_mean) inv weight, in double */
static void centre_scale(float *restrict c, const float *restrict weight, size_t d, double alpha,
                         double c_mean, double inv)
{
    size_t i = 0;
    for (; i + LANES <= d; i += LANES)
        for (size_t j = 0; j < LANES; j++)
            c[i + j] = (float)((alpha * c[i + j] - c_mean) * inv * weight[i + j]);
    for (; i < d; i++)
        c[i] = (float)((alpha * c[i] - c_mean) * inv * weight[i]);
}

/* sum[k] = sum_i x[k][i] and c_sum[k] = sum_i alpha c[k][i] over n rows of
   d, each in i order: a group's last rows (group_sums takes whole groups) */
static inline __attribute__((always_inline)) void
row_sums(double *restrict sum, double *restrict c_sum, const float *restrict x,
         const float *restrict c, size_t d, size_t n, double alpha)
{
    double s_x[GROUP_ROWS] = {0}, s_c[GROUP_ROWS] = {0};
    for (size_t i = 0; i < d; i++)
        for (size_t k = 0; k < n; k++) {
            s_x[k] += x[k * d + i];
            s_c[k] += alpha * c[k * d + i];
        }
    for (size_t k = 0; k < n; k++) {
        sum[k] = s_x[k];
        c_sum[k] = s_c[k];
    }
}

/* ms[k] = sum_i (x[k][i] - mean[k])^2, in i order: a group's last rows */
static inline __attribute__((always_inline)) void row_square_sums(double *restrict ms,
                                                                  const float *restrict x,
                                                                  const double *restrict mean,
                                                                  size_t d, size_t n)
{
    double s[GROUP_ROWS] = {0}, m[GROUP_ROWS];
    for (size_t k = 0; k < n; k++)
        m[k] = mean[k];
    for (size_t i = 0; i < d; i++)
        for (size_t k = 0; k < n; k++)
            s[k] += (x[k * d + i] - m[k]) * (x[k * d + i] - m[k]);
    for (size_t k = 0; k < n; k++)
        ms[k] = s[k];
}

/* A whole group's sums as four pairs of rows, two doubles side by side in
   a register each: the same adds as row_sums and row_square_sums, lane by
   lane, which gcc left in memory through every step of i (a store and a
   reload in each row's chain of adds: 13 % of a Post-LN training run). */
typedef double row_pair __attribute__((vector_size(16)));

static inline row_pair pair_at(const float *restrict x, size_t d, size_t k, size_t i)
{
    return (row_pair){x[k * d + i], x[(k + 1) * d + i]};
}

/* out[0..7] = the four pairs' lanes, in row order (copied whole: clang's
   analyser cannot follow a vector's lanes read one at a time) */
static inline void store_pairs(double *restrict out, row_pair p0, row_pair p1, row_pair p2,
                               row_pair p3)
{
    memcpy(out, &p0, sizeof p0);
    memcpy(out + 2, &p1, sizeof p1);
    memcpy(out + 4, &p2, sizeof p2);
    memcpy(out + 6, &p3, sizeof p3);
}

/* sum[k] = sum_i x[k][i] over the GROUP_ROWS rows, each in i order; with c,
   c_sum[k] = sum_i alpha c[k][i] too */
static void group_sums(double *restrict sum, double *restrict c_sum, const float *restrict x,
                       const float *restrict c, size_t d, double alpha)
{
    row_pair s0 = {0, 0}, s1 = {0, 0}, s2 = {0, 0}, s3 = {0, 0};
    for (size_t i = 0; i < d; i++) {
        s0 += pair_at(x, d, 0, i);
        s1 += pair_at(x, d, 2, i);
        s2 += pair_at(x, d, 4, i);
        s3 += pair_at(x, d, 6, i);
    }
    store_pairs(sum, s0, s1, s2, s3);
    if (!c)
        return;
    row_pair t0 = {0, 0}, t1 = {0, 0}, t2 = {0, 0}, t3 = {0, 0};
    const row_pair a = {alpha, alpha};
    for (size_t i = 0; i < d; i++) {
        t0 += a * pair_at(c, d, 0, i);
        t1 += a * pair_at(c, d, 2, i);
        t2 += a * pair_at(c, d, 4, i);
        t3 += a * pair_at(c, d, 6, i);
    }
    store_pairs(c_sum, t0, t1, t2, t3);
}

/* ms[k] = sum_i (x[k][i] - mean[k])^2 over the GROUP_ROWS rows, in i order */
static void group_square_sums(double *restrict ms, const float *restrict x,
                              const double *restrict mean, size_t d)
{
    const row_pair m0 = {mean[0], mean[1]}, m1 = {mean[2], mean[3]};
    const row_pair m2 = {mean[4], mean[5]}, m3 = {mean[6], mean[7]};
    row_pair s0 = {0, 0}, s1 = {0, 0}, s2 = {0, 0}, s3 = {0, 0};
    for (size_t i = 0; i < d; i++) {
        const row_pair v0 = pair_at(x, d, 0, i) - m0, v1 = pair_at(x, d, 2, i) - m1;
        const row_pair v2 = pair_at(x, d, 4, i) - m2, v3 = pair_at(x, d, 6, i) - m3;
        s0 += v0 * v0;
        s1 += v1 * v1;
        s2 += v2 * v2;
        s3 += v3 * v3;
    }
    store_pairs(ms, s0, s1, s2, s3);
}

/* Post-LN and DeepNorm: x = norm(alpha x + o), and the identity-path part c
   sees the same centring and the same division, at the stream's statistics.
   The n rows (at most GROUP_ROWS) from `first` go together: each row's sums
   in coordinate order as one row alone would make them, the rows' chains of
   dependent adds side by side rather than one after the other. */
static void normalise_rows(const update_job *j, size_t first, size_t n, double *s)
{
    const fw_run *r = j->run;
    const size_t d = r->m->d;
    float *x[GROUP_ROWS], *c[GROUP_ROWS];
    const double alpha = j->alpha;
    const int layernorm = r->m->norm == VP_NORM_LAYERNORM;
    double sum[GROUP_ROWS] = {0}, c_sum[GROUP_ROWS] = {0}, ms[GROUP_ROWS] = {0};
    double mean[GROUP_ROWS], c_mean[GROUP_ROWS];
    for (size_t k = 0; k < n; k++) {
        x[k] = r->x + (first + k) * d;
        c[k] = r->c + (first + k) * d;
        r->m->kernels->scale_add(x[k], x[k], j->o + (first + k) * d, d, alpha);
    }
    if (n == GROUP_ROWS) /* c's sums only where they are measured */
        group_sums(sum, c_sum, r->x + first * d, r->unmeasured ? NULL : r->c + first * d, d, alpha);
    else
        row_sums(sum, c_sum, r->x + first * d, r->c + first * d, d, n, alpha);
    for (size_t k = 0; k < n; k++) {
        mean[k] = layernorm ? sum[k] / (double)d : 0.0;
        c_mean[k] = layernorm ? c_sum[k] / (double)d : 0.0;
    }
    if (n == GROUP_ROWS)
        group_square_sums(ms, r->x + first * d, mean, d);
    else
        row_square_sums(ms, r->x + first * d, mean, d, n);
    const fw_norm *norm = j->stream_norm;
    for (size_t k = 0; k < n; k++) {
        const double inv = 1.0 / sqrt(ms[k] / (double)d + r->m->eps);
        if (r->stream_stats) { /* for the backward, as norm_stats lays them out */
            r->stream_stats[2 * (first + k)] = (float)mean[k];
            r->stream_stats[2 * (first + k) + 1] = (float)inv;
        }
        r->m->kernels->norm_apply(x[k], norm->weight, norm->bias, d, mean[k], inv);
        if (r->unmeasured)
            continue; /* c and the sums are the measurements' alone */
        centre_scale(c[k], norm->weight, d, alpha, c_mean[k], inv);
        s[S_XX] += r->m->kernels->square_sum(x[k], d);
        s[S_CC] += r->m->kernels->square_sum(c[k], d);
    }
}

/* The branch's sums, then x + o (the float sum, as PyTorch adds: c is
   untouched and its sum stands) or the normalised stream, group by group;
   unmeasured, the update alone.
   h may be x: the sums read it before the update writes x. */
static void update_task(void *ctx, size_t task, size_t thread)
{
    (void)thread;
    update_job *j = ctx;
    const fw_run *r = j->run;
    const size_t d = r->m->d;
    const size_t end =
        (task + 1) * r->rows_per_task < r->rows ? (task + 1) * r->rows_per_task : r->rows;
    for (size_t first = task * r->rows_per_task; first < end; first += GROUP_ROWS) {
        const size_t n = end - first < GROUP_ROWS ? end - first : GROUP_ROWS, at = first * d;
        double *s = r->stats + first / GROUP_ROWS * N_STATS;
        if (r->unmeasured) { /* the update alone */
            if (j->stream_norm)
                normalise_rows(j, first, n, s);
            else
                add_float(r->x + at, j->o + at, n * d);
            continue;
        }
        r->m->kernels->residual(r->x + at, j->o + at, j->h + at, j->f + at, n * d, !j->stream_norm,
                                s);
        if (j->stream_norm) {
            s[S_XX] = s[S_CC] = 0.0;
            normalise_rows(j, first, n, s);
        }
    }
}

/* ---- a sub-block ---- */

static void sub_block(fw_run *r, size_t k)
{
    const fw_model *m = r->m;
    const vp_placement_traits *t = m->traits;
    const size_t l = vp_config_layer_of(r->cfg, k);
    const vp_part part = vp_config_part_of(r->cfg, k);
    const fw_layer *layer = &m->layers_[l];
    const int attn = part == VP_PART_ATTN || part == VP_PART_BLOCK;
    const int mlp = part == VP_PART_MLP || part == VP_PART_BLOCK;
    /* the branch's input: the stream, or its norm */
    const float *h = r->x;
    if (t->norm_in) {
        fw_normalise_keep(r, r->h, r->in_stats, r->x,
                          part == VP_PART_MLP ? &layer->mlp_norm : &layer->attn_norm);
        h = r->h;
    }
    if (attn)
        attention_branch(r, layer, h, r->f);
    if (mlp)
        mlp_branch(r, layer, h, attn ? r->f2 : r->f);
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
    update_job j = {r, h, r->f, o, NULL, 1.0};
    if (t->norm_stream) {
        /* each sub-block its own norm; a parallel layer's one is attn_norm */
        j.stream_norm = part == VP_PART_MLP ? &layer->mlp_norm : &layer->attn_norm;
        if (t->residual_alpha)
            j.alpha = r->cfg->alpha;
    }
    /* h may be x itself: the stats read it before the update writes x */
    fw_parallel(r, r->n_tasks, update_task, &j);
}

/* ---- the measurements ---- */

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
    const size_t d = r->m->d;
    double xx = 0.0;
    for (size_t row = 0; row < r->rows; row++) {
        const size_t token = r->token_ids[row];
        if (r->m->embed) /* else drawn: the token's row made by position */
            memcpy(r->x + row * d, r->m->embed + token * d, d * sizeof(float));
        else
            fw_draw_values(&r->m->embed_draw, r->x + row * d, d, (uint64_t)token * d);
        if (r->m->embed_scale != 1.0f) /* Gemma's sqrt(d), one float product */
            for (size_t i = 0; i < d; i++)
                r->x[row * d + i] *= r->m->embed_scale;
        if (r->m->pos_embed) /* position t of its sequence */
            add_position(r->x + row * d, r->m->pos_embed + row % r->tokens * d, d);
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

static void draw_tokens(uint32_t *ids, size_t batch, size_t tokens, size_t vocab,
                        unsigned long long seed)
{
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    for (size_t b = 0; b < batch; b++)
        for (size_t t = 0; t < tokens; t++) {
            philox4x32_ctr_t ctr = {{(uint32_t)b, (uint32_t)t, TOKEN_WORD, 0}};
            philox4x32_ctr_t x = philox4x32(ctr, key);
            ids[b * tokens + t] = (uint32_t)(((uint64_t)x.v[0] * vocab) >> 32);
        }
}

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

/* Multiply-adds of a sub-block's largest matmul below which a run keeps
   to the calling thread: 2^22, about 20 microseconds of one core's FMAs,
   where waking a pool's threads for each step costs tens of them. */
#define FW_THREADED_WORK 4194304.0

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
    /* a stack whose sub-block is a few microseconds of work (the seed
       stack's: 24 rows of width 48) runs on the calling thread alone: handing
       each step to the pool's threads costs more than the step */
    const double work =
        (double)r.rows * (double)m->d * (double)(m->hidden > m->d ? m->hidden : m->d);
    r.threads = work < FW_THREADED_WORK ? 1 : ws->threads;
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

/* ---- the public entry ---- */

size_t vp_forward_kv_heads(const vp_forward_options *o)
{
    return o->kv_heads ? o->kv_heads : o->heads;
}

size_t vp_forward_head_dim(const vp_forward_options *o)
{
    return o->head_dim ? o->head_dim : o->heads ? o->width / o->heads : 0;
}

void vp_forward_options_init(vp_forward_options *o)
{
    *o = (vp_forward_options){
        .width = 512,
        .heads = VP_FORWARD_DEFAULT_HEADS,
        .ffn_mult = 4,
        .vocab = 512,
        .batch = 2,
        .tokens = 64,
        .threads = 1,
        .norm = VP_NORM_LAYERNORM,
        .eps = 1e-5,
        .init = VP_INIT_GAIN,
        .bias = VP_BIAS_ALL,
        .seed = 1,
        .positions = VP_POSITIONS_NONE,
        .rope_theta = 10000.0,
        .embed_scale = 1.0,
    };
}

static const char *const mlp_names[VP_MLP_COUNT] = {"gelu",   "gelu-tanh", "relu",
                                                    "swiglu", "geglu",     "geglu-tanh"};

const char *vp_mlp_name(vp_mlp mlp)
{
    return (unsigned)mlp < VP_MLP_COUNT ? mlp_names[mlp] : NULL;
}

vp_status vp_mlp_parse(const char *name, vp_mlp *out, vp_error *err)
{
    for (int i = 0; i < VP_MLP_COUNT; i++)
        if (strcmp(name, mlp_names[i]) == 0) {
            *out = (vp_mlp)i;
            return VP_OK;
        }
    return vp_fail(err, VP_EINVAL,
                   "MLP '%s' is not one of: gelu, gelu-tanh, relu, swiglu, geglu, geglu-tanh",
                   name);
}

int vp_mlp_gated(vp_mlp mlp)
{
    return mlp == VP_MLP_SWIGLU || mlp == VP_MLP_GEGLU || mlp == VP_MLP_GEGLU_TANH;
}

size_t vp_forward_ffn_width(const vp_forward_options *o)
{
    return o->ffn_width ? o->ffn_width : o->ffn_mult * o->width;
}

static const char *const loss_names[VP_LOSS_COUNT] = {"copy", "next", "random"};

const char *vp_loss_name(vp_loss loss)
{
    return (unsigned)loss < VP_LOSS_COUNT ? loss_names[loss] : NULL;
}

vp_status vp_loss_parse(const char *name, vp_loss *out, vp_error *err)
{
    for (int i = 0; i < VP_LOSS_COUNT; i++)
        if (strcmp(name, loss_names[i]) == 0) {
            *out = (vp_loss)i;
            return VP_OK;
        }
    return vp_fail(err, VP_EINVAL, "loss '%s' is not one of: copy, next, random", name);
}

static vp_sampling_method init_method(vp_init init)
{
    return init == VP_INIT_TORCH ? VP_SAMPLING_TORCH_INIT : VP_SAMPLING_GAIN_INIT;
}

const char *vp_init_name(vp_init init)
{
    return vp_sampling_method_name(init_method(init));
}

static size_t physical_memory(void);

/* The bytes a run of a model shaped with recompute as given would take, in
   double, and of those the weights'; HUGE_VAL when what the backward keeps
   would not even fit in an address (it grows with depth times batch, so it
   is sized in double first, before any size_t product can wrap). */
static double run_bytes_as(const vp_config *cfg, const vp_forward_options *o, int recompute,
                           double *weights)
{
    /* every size was range-checked, so the other products stay far below 2^64 */
    const kern_table *kern = kern_current();
    fw_model shape = {0};
    fw_model_shape_as(&shape, cfg, o, recompute);
    shape.kernels = kern;
    *weights = (double)fw_model_shape_floats(&shape, kern) * sizeof(float);
    const double kept = (double)fw_saved_row_floats(&shape) * (double)(o->batch * o->tokens);
    if (shape.backward && kept * sizeof(float) > 9e18)
        return HUGE_VAL;
    return *weights + (double)fw_run_bytes(&shape, o->batch * o->tokens, o->threads, o->tokens);
}

int fw_recomputes(const vp_config *cfg, const vp_forward_options *o)
{
    if (!cfg->grad || o->activations == VP_ACTIVATIONS_KEEP)
        return 0;
    if (o->activations == VP_ACTIVATIONS_RECOMPUTE)
        return 1;
    const double half = (double)physical_memory() / 2.0;
    double weights;
    return run_bytes_as(cfg, o, 0, &weights) > half && run_bytes_as(cfg, o, 1, &weights) <= half;
}

vp_status fw_memory_needed(const vp_config *cfg, const vp_forward_options *o, size_t *bytes,
                           size_t *weight_bytes, vp_error *err)
{
    double weights;
    const double total = run_bytes_as(cfg, o, fw_recomputes(cfg, o), &weights);
    if (total == HUGE_VAL)
        return vp_fail(err, VP_EOVERFLOW, "the backward's activations do not fit in an address");
    if (total > 9e18)
        return vp_fail(err, VP_EOVERFLOW, "the network's memory does not fit in an address");
    *bytes = (size_t)total;
    *weight_bytes = (size_t)weights;
    return VP_OK;
}

static size_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)-1;
}

/* The backward's own demands: a loss it has, tokens for next, and in a
   weights file a head of the vocabulary's shape and a final norm as asked. */
static vp_status check_grad(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    if ((unsigned)o->loss >= VP_LOSS_COUNT)
        return vp_fail(err, VP_EINVAL, "loss %d is not one of: copy, next, random", (int)o->loss);
    if (o->loss == VP_LOSS_NEXT && o->tokens < 2)
        return vp_fail(err, VP_EINVAL,
                       "loss next with 1 token per sequence: no token has a next one to "
                       "predict; use at least 2 tokens, or loss copy");
    if (!o->weights)
        return VP_OK;
    const vp_tensor_info *head = vp_safetensors_find(o->weights, "head.weight");
    if (!head && o->loss != VP_LOSS_RANDOM && !o->tie_embeddings)
        return vp_fail(err, VP_EINVAL,
                       "tensor 'head.weight' is missing: loss %s needs the output head "
                       "(head.weight [%zu, %zu], head.bias [%zu]); add it to the file, tie "
                       "the head to the embedding, or use loss random",
                       vp_loss_name(o->loss), o->vocab, o->width, o->vocab);
    if (head && (head->rank != 2 || head->shape[0] != o->vocab || head->shape[1] != o->width))
        return vp_fail(err, VP_EINVAL,
                       "tensor 'head.weight' is not [%zu, %zu]: the head must map the width "
                       "%zu to the vocabulary of %zu (embed.weight's)",
                       o->vocab, o->width, o->width, o->vocab);
    const int in_file = vp_safetensors_find(o->weights, "final_norm.weight") != NULL;
    if (cfg->final_norm != VP_FINAL_NORM_DEFAULT &&
        in_file != (cfg->final_norm == VP_FINAL_NORM_YES))
        return vp_fail(err, VP_EINVAL,
                       "final norm %s asked, but the weights file %s final_norm.weight; the "
                       "file decides: drop the final-norm option",
                       in_file ? "no" : "yes", in_file ? "has" : "has no");
    return VP_OK;
}

vp_status vp_forward_check(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    vp_status status = vp_config_check(cfg, err);
    if (status != VP_OK)
        return status;
    const struct {
        const char *name;
        size_t value, min, max;
    } sizes[] = {
        {"width", o->width, 1, VP_FORWARD_MAX_WIDTH},
        {"heads", o->heads, 1, VP_FORWARD_MAX_WIDTH},
        {"kv-heads", o->kv_heads ? o->kv_heads : 1, 1, o->heads},
        {"head-dim", o->head_dim ? o->head_dim : 1, 1, VP_FORWARD_MAX_WIDTH},
        {"ffn-mult", o->ffn_mult, 1, VP_FORWARD_MAX_FFN_MULT},
        /* an exact width when given; ffn-mult's stays bounded by its own range */
        {"ffn-width", o->ffn_width ? o->ffn_width : 1, 1, VP_FORWARD_MAX_FFN_WIDTH},
        {"vocab", o->vocab, 1, VP_FORWARD_MAX_VOCAB},
        {"batch", o->batch, 1, VP_FORWARD_MAX_BATCH},
        {"tokens", o->tokens, 1, VP_FORWARD_MAX_TOKENS},
        {"threads", o->threads, 1, 1024},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (sizes[i].value < sizes[i].min || sizes[i].value > sizes[i].max)
            return vp_fail(err, VP_EINVAL, "%s is %zu; it must be from %zu to %zu", sizes[i].name,
                           sizes[i].value, sizes[i].min, sizes[i].max);
    if (o->norm == VP_NORM_LAYERNORM && o->width < 2)
        return vp_fail(err, VP_EINVAL,
                       "width 1 with LayerNorm: centring leaves every coordinate "
                       "0; use a width from 2, or RMSNorm");
    if (!o->head_dim && o->width % o->heads != 0)
        return vp_fail(err, VP_EINVAL,
                       "%zu heads do not divide the width %zu: each head needs "
                       "width / heads coordinates, or a head-dim of its own",
                       o->heads, o->width);
    if (o->kv_heads && o->heads % o->kv_heads != 0)
        return vp_fail(err, VP_EINVAL,
                       "kv-heads %zu does not divide the %zu heads: each key and value head "
                       "serves heads / kv-heads query heads; use a divisor of %zu",
                       o->kv_heads, o->heads, o->heads);
    if (o->heads * vp_forward_head_dim(o) > VP_FORWARD_MAX_WIDTH)
        return vp_fail(err, VP_EINVAL,
                       "heads x head-dim is %zu x %zu = %zu; the queries may be at most %u "
                       "wide",
                       o->heads, vp_forward_head_dim(o), o->heads * vp_forward_head_dim(o),
                       VP_FORWARD_MAX_WIDTH);
    if (o->batch * o->tokens > 16u * 1024 * 1024)
        return vp_fail(err, VP_EINVAL, "batch x tokens is %zu; at most %u tokens in all",
                       o->batch * o->tokens, 16u * 1024 * 1024);
    if (o->norm != VP_NORM_LAYERNORM && o->norm != VP_NORM_RMSNORM)
        return vp_fail(err, VP_EINVAL, "the norm must be LayerNorm or RMSNorm");
    if ((unsigned)o->mlp >= VP_MLP_COUNT)
        return vp_fail(
            err, VP_EINVAL,
            "MLP kind %d is not one of: gelu, gelu-tanh, relu, swiglu, geglu, geglu-tanh",
            (int)o->mlp);
    if ((unsigned)o->bias >= VP_BIAS_COUNT)
        return vp_fail(err, VP_EINVAL, "bias setting %d is not one of yes, no, qkv", (int)o->bias);
    for (size_t i = 0; o->token_ids && i < o->batch * o->tokens; i++)
        if (o->token_ids[i] >= o->vocab)
            return vp_fail(err, VP_EINVAL,
                           "token id %u at row %zu, column %zu is not below the "
                           "vocab size %zu",
                           o->token_ids[i], i / o->tokens + 1, i % o->tokens + 1, o->vocab);
    if (!(o->eps > 0.0 && o->eps < 1.0))
        return vp_fail(err, VP_EINVAL, "eps is %g; it must be > 0 and < 1", o->eps);
    if (o->tie_embeddings && o->weights && vp_safetensors_find(o->weights, "head.weight"))
        return vp_fail(err, VP_EINVAL,
                       "tied embeddings asked, but the weights file has its own head.weight; "
                       "the head is then embed.weight: drop the option or the tensor");
    if ((unsigned)o->qk_norm > VP_QK_NORM_FULL)
        return vp_fail(err, VP_EINVAL, "QK-norm setting %d is not none, per head or full width",
                       o->qk_norm);
    /* Gemma-2's factors: floats' range, 0 where 0 means off */
    const struct {
        const char *name;
        double value;
        int zero_is_off;
    } factors[] = {{"embedding scale", o->embed_scale, 1},
                   {"attention scale", o->attn_scale, 1},
                   {"attention soft cap", o->attn_softcap, 1},
                   {"logit soft cap", o->logit_softcap, 1}};
    for (size_t i = 0; i < sizeof factors / sizeof *factors; i++)
        if (!(factors[i].zero_is_off && factors[i].value == 0.0) &&
            !(factors[i].value >= 1e-30 && factors[i].value <= 1e30))
            return vp_fail(err, VP_EINVAL, "the %s is %g; it must be %sfrom 1e-30 to 1e30",
                           factors[i].name, factors[i].value,
                           factors[i].zero_is_off ? "0 (none) or " : "");
    /* the network runs in float: its scales must be floats' */
    if (!o->weights && !(cfg->embedding_var >= 1e-30 && cfg->embedding_var <= 1e30))
        return vp_fail(err, VP_EINVAL,
                       "embedding variance %g is beyond what the forward pass's "
                       "float weights hold; it must be from 1e-30 to 1e30",
                       cfg->embedding_var);
    for (size_t k = 1; o->init == VP_INIT_GAIN && !o->weights && k <= vp_config_sub_blocks(cfg);
         k++) {
        const double g = vp_config_gain(cfg, k);
        if (g != 0.0 && !(g >= 1e-15 && g <= 1e15))
            return vp_fail(err, VP_EINVAL,
                           "gain %g (sub-block %zu) is beyond what the forward "
                           "pass's float weights hold; it must be 0 or from 1e-15 to 1e15",
                           g, k);
    }
    if ((status = fw_positions_check(cfg, o, err)) != VP_OK)
        return status;
    if (cfg->grad && (status = check_grad(cfg, o, err)) != VP_OK)
        return status;
    size_t bytes, weight_bytes;
    if ((status = fw_memory_needed(cfg, o, &bytes, &weight_bytes, err)) != VP_OK)
        return status;
    const size_t have = physical_memory();
    const double gib = 1073741824.0;
    /* drawn weights are made as they are used: then the activations and
       the few stored tensors (norms, biases) are all there is */
    const int drawable = !o->weights && o->stored_weights && weight_bytes > bytes / 2;
    double weights;
    const int recomputable = cfg->grad && o->activations == VP_ACTIVATIONS_KEEP &&
                             run_bytes_as(cfg, o, 1, &weights) <= (double)have / 2.0;
    if (bytes > have / 2)
        return vp_fail(err, VP_ENOMEM,
                       "the network would need %.3g GiB, %.3g of stored weights and %.3g of "
                       "activations and workspace, more than half of this machine's %.3g "
                       "GiB; %s",
                       (double)bytes / gib, (double)weight_bytes / gib,
                       (double)(bytes - weight_bytes) / gib, (double)have / gib,
                       drawable       ? "--weight-storage drawn stores no weight matrix"
                       : recomputable ? "--activations recompute keeps each sub-block's input alone"
                                      : "make it narrower, shallower or the batch smaller");
    return VP_OK;
}

void fw_set_header(vp_profile *profile, const vp_config *cfg, const vp_forward_options *o)
{
    const vp_sampling sampling = {
        .width = o->width,
        .trials = o->batch * o->tokens,
        .seed = o->seed,
        .generator = "philox4x32-10",
        .method = o->weights ? VP_SAMPLING_LOADED : init_method(o->init),
        .eps = o->eps,
        .heads = cfg->mlp_only ? 0 : o->heads,
        .kv_heads =
            cfg->mlp_only || vp_forward_kv_heads(o) == o->heads ? 0 : vp_forward_kv_heads(o),
        .head_dim = cfg->mlp_only || o->heads * vp_forward_head_dim(o) == o->width
                        ? 0
                        : vp_forward_head_dim(o),
        .ffn_mult =
            vp_forward_ffn_width(o) % o->width == 0 ? vp_forward_ffn_width(o) / o->width : 0,
        .ffn_width = vp_forward_ffn_width(o),
        .mlp = vp_mlp_name(o->mlp),
        .bias = vp_bias_name(o->bias),
        .vocab = o->vocab,
        .batch = o->batch,
        .tokens = o->tokens,
        .qk_norm = o->qk_norm,
        .embed_scale = o->embed_scale,
        .attn_scale = o->attn_scale,
        .attn_softcap = o->attn_softcap,
        .logit_softcap = o->logit_softcap,
        .tokens_drawn = o->token_ids == NULL};
    profile_set_header(profile, VP_ENGINE_FORWARD, o->norm, cfg,
                       VP_HAS_MEASURED | VP_HAS_STREAM_NORM, &sampling);
    /* a weights file decides the final norm: the profile says what ran, and
       so does the prediction made from its config */
    if (o->weights)
        profile->config.final_norm = vp_safetensors_find(o->weights, "final_norm.weight")
                                         ? VP_FINAL_NORM_YES
                                         : VP_FINAL_NORM_NO;
    fw_model shape = {0};
    fw_model_shape(&shape, cfg, o);
    profile->sampling.weights_drawn = shape.drawn;
    profile->sampling.recomputed = shape.recompute;
    if (cfg->grad)
        profile->sampling.kept_bytes =
            (double)fw_saved_floats(&shape, o->batch * o->tokens) * sizeof(float);
    if (o->positions != VP_POSITIONS_NONE) {
        profile->sampling.positions = vp_positions_name(o->positions);
        profile->sampling.rope_theta = o->positions == VP_POSITIONS_ROPE ? o->rope_theta : 0.0;
        if (o->positions == VP_POSITIONS_ROPE && o->rope_scaling.factor > 0.0) {
            profile->sampling.rope_factor = o->rope_scaling.factor;
            profile->sampling.rope_low = o->rope_scaling.low_freq_factor;
            profile->sampling.rope_high = o->rope_scaling.high_freq_factor;
            profile->sampling.rope_context = o->rope_scaling.original_context;
        }
    }
}

vp_status vp_forward_profile(const vp_config *cfg, const vp_forward_options *o, vp_profile **out,
                             vp_error *err)
{
    *out = NULL;
    vp_status status = vp_forward_check(cfg, o, err);
    if (status != VP_OK)
        return status;
    const kern_table *kern = kern_current();
    fw_model *m = fw_model_alloc(cfg, o, kern);
    uint32_t *ids = calloc(o->batch * o->tokens, sizeof *ids);
    vp_profile *profile = vp_profile_alloc(vp_config_sub_blocks(cfg));
    if (!m || !ids || !profile)
        status = vp_fail(err, VP_ENOMEM, "no memory for the network");
    if (status == VP_OK)
        status = o->weights ? fw_model_load(m, o->weights, err) : fw_model_init(m, cfg, o, err);
    if (status == VP_OK) {
        if (o->token_ids)
            memcpy(ids, o->token_ids, o->batch * o->tokens * sizeof *ids);
        else
            draw_tokens(ids, o->batch, o->tokens, o->vocab, o->seed);
        fw_set_header(profile, cfg, o);
        status = fw_run_network(m, cfg, o, ids, profile, NULL, err);
    }
    /* loaded weights set no embedding variance: the stream is measured
       against the embedding they give, v_0 as measured (0 where the rows
       looked up are zero, and then no size is finite) */
    if (status == VP_OK && o->weights)
        profile->config.embedding_var = profile->rows[0].stream_var;
    fw_model_free(m);
    free(ids);
    if (status != VP_OK) {
        vp_profile_free(profile);
        return status;
    }
    *out = profile;
    return VP_OK;
}
