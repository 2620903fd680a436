/* The residual update of a sub-block and its measurements' sums, in double, by groups of rows. */
#include <math.h>
#include <string.h>

#include "forward/run.h"
#include "forward/sub_block.h"

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
static void normalise_rows(const fw_update_job *j, size_t first, size_t n, double *s)
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
void fw_update_task(void *ctx, size_t task, size_t thread)
{
    (void)thread;
    fw_update_job *j = ctx;
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
