/* The backward pass's buffers and its row-parallel steps (backward_steps.c),
 * shared by the sweep through the sub-blocks (network_backward.c) and the
 * head with its loss (head_loss.c). Private to src/forward. */
#ifndef VARPROF_FORWARD_BACKWARD_H
#define VARPROF_FORWARD_BACKWARD_H

#include "forward/run.h"

typedef struct {
    fw_run *r;
    const vp_forward_options *o;
    /* [rows][d] each: gradients in flight and scratch */
    float *dx, *dz, *df, *dh, *dsum, *dpre, *datt, *dq, *dk, *dv, *z;
    /* datt, dq [rows][H hd]; dk, dv [rows][H_kv hd]; dpre the wider of d, H hd */
    float *k_exp, *v_exp, *dk_exp, *dv_exp; /* [rows][H hd], with H_kv < H; else unused */
    float *dhid, *dhid_pre;                 /* [rows][m d] */
    float *dhid_up;                         /* [rows][m d], a gated MLP's; else unused */
    float *logits;                          /* [rows][V], with a head */
    float *logit_tanh;                      /* [rows][V], with a logit soft cap: its tanh */
    float *head_dw;   /* [V][d], a tied head's dW until the embedding's is added */
    float *stats;     /* [norm rows][2], a norm's row statistics (fw_bw_norm) */
    double *row_loss; /* [rows] */
    /* with o->on_param_grad: one parameter's gradient at a time, where the
       run has no arena (r->grads) */
    float *dw, *db;
    float **thread_ws; /* per thread: the dW matmul's workspace, then 2 T floats */
    char name[96];
} fw_bw;

/* dx [rows][in] = dy [rows][out] W, rows split over the pool. */
void fw_bw_linear_dx(fw_bw *b, float *dx, const float *dy, const fw_linear *lin);

/* dW into b->dw and db into b->db from dy [rows][out] and x [rows][in],
 * W's rows split over the pool, each summed over the rows in one fixed
 * order; handed to no one. With the run's arena, db is made in the bias's
 * slot too. */
void fw_bw_linear_grads(fw_bw *b, const fw_linear *lin, const float *dy, const float *x);

/* The gradients of W and b of `prefix` (".weight", ".bias" appended) from
 * dy [rows][out] and the layer's input x [rows][in], to o->on_param_grad;
 * nothing without one. Each is made in its slot of the run's arena (r->grads),
 * else where o->param_grad_dest says, else in b->dw and b->db. W's rows
 * split over the pool, each summed over the rows in one fixed order. */
void fw_bw_linear_params(fw_bw *b, const char *prefix, const fw_linear *lin, const float *dy,
                         const float *x);

/* A norm's backward, the norm of x (rows of width, RMSNorm or LayerNorm as
 * rms says): dx from dy, rows split over the pool (dx is not dy or x), and
 * the weight's (and with has_bias the bias's) gradients to on_param_grad
 * as prefix.weight and prefix.bias, columns split, made in their slots of
 * the run's arena when it has weight's, else in b->dw and b->db. Each row's statistics
 * are the forward's, kept ([rows][2], kern_table.h's norm_stats layout),
 * or when kept is NULL summed once (into b->stats), for both. */
void fw_bw_norm(fw_bw *b, const char *prefix, float *dx, const float *dy, const float *x,
                const float *kept, const float *weight, size_t rows, size_t width, int rms,
                int has_bias);

/* Where the gradient of the tensor at param is made: its slot in the run's
 * arena, else b->dw. */
float *fw_bw_grad_at(fw_bw *b, const float *param);

/* Hands one gradient to on_param_grad, named name (rank 1 when cols is 0). */
void fw_bw_emit(fw_bw *b, const char *name, const float *grad, size_t rows, size_t cols);

/* sum of v^2 over n floats, in double, in one order whatever the threads. */
double fw_bw_square_sum(const fw_bw *b, const float *v, size_t n);

/* The loss of o->loss at the head's input y [rows][d]: into *loss, and
 * dL/dy into dy; the head's gradients to on_param_grad. */
void fw_head_loss(fw_bw *b, const float *y, float *dy, double *loss);

#endif
