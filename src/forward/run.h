/* One run of the network on a batch: its buffers, its thread pool and the
 * row-parallel steps the forward and the backward pass share. Private to
 * src/forward. */
#ifndef VARPROF_FORWARD_RUN_H
#define VARPROF_FORWARD_RUN_H

#include <stdint.h>

#include "forward/network.h"
#include "forward/workspace.h"
#include "sys/progress_meter.h"
#include "sys/thread_pool.h"

/* What the backward pass needs of one sub-block, kept by the forward pass
 * (fw_saved_lay_out). Entries a sub-block has no use for are NULL. */
typedef struct {
    float *x_in;            /* the stream before the sub-block [rows][d] */
    float *h;               /* the branch input where it is a norm's output; else NULL (x_in) */
    float *f;               /* the branches' output (their sum), before any output norm */
    float *hid_pre, *hid;   /* fc1's output and its activation (gated: times up's) [rows][m d] */
    float *hid_up;          /* a gated MLP's up projection [rows][m d]; else NULL */
    float *hid_cdf;         /* the erf GELU's Phi(hid_pre), for its backward; else NULL */
    float *in_stats;        /* the branch input norm's statistics [rows][2]
                                (kern_table.h's norm_stats layout) where h is kept */
    float *stream_stats;    /* Post-LN's and DeepNorm's: the stream norm's, the
                                mean and reciprocal root it normalised with */
    float *q_pre, *k_pre;   /* the projections before QK-norm (q, k without it) */
    float *q, *k, *v, *att; /* att: the heads' output, the o projection's input;
                                q, q_pre, att [rows][H hd], k, k_pre, v [rows][H_kv hd] */
} fw_saved;

typedef struct {
    const fw_model *m;
    const vp_config *cfg;
    thread_pool *pool;
    size_t threads; /* the pool's */
    size_t rows, batch, tokens, rows_per_task, n_tasks;
    float *x, *c, *h, *f, *f2, *o, *q, *k, *v, *att, *hid;
    float *q_pre, *k_pre, *hid_pre; /* q, k and hid themselves when nothing is kept */
    /* k and v repeated to the H query heads (repeat_kv) for the attention
       kernel: [rows][H hd]; k and v themselves when H_kv = H */
    float *k_exp, *v_exp;
    float *hid_up;                    /* a gated MLP's up projection */
    float *hid_cdf;                   /* where the erf GELU keeps Phi (saved); else NULL */
    float *in_stats;                  /* where the branch input's norm keeps its statistics
                                       (saved); else NULL */
    float *stream_stats;              /* where the stream's norm keeps them (saved); else NULL */
    float **matmul_ws, **att_scratch; /* per thread */
    double *stats;                    /* [groups][N_STATS] */
    uint32_t *token_ids;
    progress_meter *meter;            /* a sub-block done, forward or backward */
    fw_saved *saved;                  /* with a backward: [K + 2], sub-blocks 1..K, then the top
                        (x_in the stream x_K, h the head's input) */
    float *backward_block;            /* with a backward: fw_backward_floats */
    float **backward_thread_ws;       /* per thread: fw_backward_thread_floats of one */
    int no_weight_grad;               /* the workspace's: the backward skips weight_grad (NaN) */
    int unmeasured;                   /* the workspace's: no profile row, no overflow check */
    const float *rope_cos, *rope_sin; /* with rope: the workspace's [tokens][hd / 2] */
    const float *alibi_slopes;        /* with ALiBi: the workspace's [heads]; else NULL */
    size_t layer;                     /* the layer running: its window and RoPE table */
    const fw_grads *grads;            /* the workspace's: where the backward makes each
                                         parameter's gradient; NULL: its own buffers */
} fw_run;

/* fn on tasks 0 .. n - 1: on the pool, or on the calling thread, in order,
   when the run keeps to one (r->threads 1: one thread asked, or a stack so
   small that waking threads costs more than its work). The same results
   either way: every task's work is its own. */
static inline void fw_parallel(const fw_run *r, size_t n, thread_pool_task fn, void *ctx)
{
    if (r->threads > 1) {
        thread_pool_run(r->pool, n, fn, ctx);
        return;
    }
    for (size_t i = 0; i < n; i++)
        fn(ctx, i, 0);
}

/* What fw_workspace_create makes; fw_run_network points a run at it. */
struct fw_workspace {
    const fw_model *m;
    size_t batch, tokens, threads, rows, sub_blocks;
    thread_pool *pool;
    float *activations;               /* fw_activation_floats */
    double *stats;                    /* fw_stats_doubles */
    float **matmul_ws, **att_scratch; /* per thread */
    /* with m->backward, else NULL */
    float *kept;     /* fw_saved_floats, laid out as saved says */
    fw_saved *saved; /* [sub_blocks + 2] */
    float *backward_block, *backward_thread_block;
    float **backward_thread_ws; /* [threads] into backward_thread_block */
    int no_weight_grad;         /* fw_workspace_skip_weight_grad */
    int unmeasured;             /* fw_workspace_set_measured(ws, 0) */
    float *rope_cos, *rope_sin; /* with rope: fw_rope_fill's angles, once */
    float *alibi_slopes;        /* with ALiBi: vp_alibi_slopes of the heads, once */
    const fw_grads *grads;      /* fw_workspace_set_grads; NULL: none */
};

/* Floats of the forward's activations at `rows` rows; of each thread's
   matmul workspace at rows_per_task rows (the forward's projections, the
   head's and the backward's dX); doubles of the measurements' sums. */
size_t fw_activation_floats(const fw_model *m, size_t rows);
size_t fw_matmul_ws_floats(const fw_model *m, size_t rows_per_task);

/* Rows one thread's matmul takes at once: all of them on several threads
   or with drawn weights (fw_project splits columns), a task's on one. */
size_t fw_matmul_rows(const fw_model *m, size_t rows, size_t threads);
size_t fw_stats_doubles(size_t rows);

/* Sub-blocks of the model's stack, K. */
size_t fw_sub_blocks(const fw_model *m);

/* out[rows][linear->out] = in[rows][linear->in] W^T + b: on more than one
 * thread each takes a range of the columns over every row, so that each
 * reads its share of W once (split by rows, every thread would stream all
 * of W for a few rows); the same bits either way (kern_table.h). */
void fw_project(fw_run *r, float *out, const float *in, const fw_linear *linear);

/* out[rows][m] = in[rows][k] wt, wt [k][m] read where it lies (the
 * backward's dX = dY W from W itself): fw_project's split and bits, for a
 * wt the kernels' matmul_wt_fits(k, m, m). */
void fw_project_wt(fw_run *r, float *out, const float *in, const float *wt, size_t k, size_t m);

/* The model's norm (LayerNorm or RMSNorm) of every row of d; with stats
   (not NULL), each row's statistics kept there as well ([rows][2]). */
void fw_normalise(fw_run *r, float *out, const float *in, const fw_norm *norm);

/* The embedding's LayerNorm (m->embed_norm) over the run's rows of x, in
 * place: a LayerNorm whatever the blocks' norm (vp_embedding_norm). */
void fw_embed_normalise(fw_run *r, float *x);
void fw_normalise_keep(fw_run *r, float *out, float *stats, const float *in, const fw_norm *norm);

/* Rows per task: about four tasks a thread (one on one thread), in whole
   groups of rows; one group when there are no rows. */
size_t fw_rows_per_task(size_t rows, size_t threads);

/* Floats the kept activations of the model's K sub-blocks and the top take, at
 * `rows` rows; fw_saved_lay_out cuts them from one block of that size. */
size_t fw_saved_floats(const fw_model *m, size_t rows);
/* The same per row, in all sub-blocks; fw_saved_floats is at most this times
   rows plus alignment. */
size_t fw_saved_row_floats(const fw_model *m);
void fw_saved_lay_out(fw_saved *saved, float *block, const fw_model *m, size_t rows);

/* Floats of the backward pass's own buffers at `rows` rows, and per thread. */
size_t fw_backward_floats(const fw_model *m, size_t rows);
size_t fw_backward_thread_floats(const fw_model *m, size_t rows, size_t threads);

/* Positions (positions.c): the options' checks for vp_forward_check; the
 * floats of rope's table of angles for runs of `tokens` (0 without rope),
 * filled once per workspace by fw_rope_fill (cos_t, sin_t [tokens][hd / 2],
 * each followed by the sliding layers' table where they have a base of
 * their own; sin_t is half of the floats on);
 * and q [rows][H hd] and k [rows][H_kv hd] rotated in place, sequence by sequence over the
 * pool, or rotated back (inverse: dq and dk in the backward). */
vp_status fw_positions_check(const vp_config *cfg, const vp_forward_options *o, vp_error *err);
size_t fw_rope_floats(const fw_model *m, size_t tokens);
void fw_rope_fill(float *cos_t, float *sin_t, const fw_model *m, size_t tokens);
void fw_rope(fw_run *r, float *q, float *k, int inverse);

/* Grouped-query attention's repeat_kv (branches.c): for n rows, dst
 * [n][H hd] head h = src [n][H_kv hd] head h / (H / H_kv); and its
 * transpose, dst [n][H_kv hd] kv head j = the sum over its group's heads of
 * src [n][H hd], in double, in head order. */
void fw_repeat_kv(const fw_model *m, float *dst, const float *src, size_t n);
void fw_sum_kv(const fw_model *m, float *dst, const float *src, size_t n);

/* The backward pass of o->loss after a forward pass that kept r->saved: fills
 * grad_var and weight_grad of the profile's rows, profile->loss, and hands
 * each parameter's gradient to o->on_param_grad. Its buffers are the run's
 * (backward_block, backward_thread_ws): it allocates nothing. A float
 * gradient out of range stops it, recorded in the profile
 * (VP_OVERFLOW_FLOAT_GRAD). */
void fw_backward(fw_run *r, const vp_forward_options *o, vp_profile *profile);

/* A recomputing model's (m->recompute) sub-block k run again from its kept
   input, x_in, into r->saved[k]'s intermediate values (one region every
   sub-block shares), right before its backward: the same bits the forward
   made, since every kernel's are the same for the same input. */
void fw_recompute_sub_block(fw_run *r, size_t k);

#endif
