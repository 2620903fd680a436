/* Training the forward pass's network (varprof-maths(7), TRAINING): the
 * seed's copy-task experiment and its variations, step by step as PyTorch
 * runs them.
 *
 * Each step t = 0 .. steps - 1: the batch's tokens (a given stream, or drawn
 * from Philox keyed by the seed and t), the forward and backward pass of the
 * task's loss (vp_forward_profile's network and kernels), the global
 * gradient norm, optional clipping, then one Adam (or AdamW) update at the
 * scheduled learning rate:
 *
 *   lr_t   = lr x min(1, (t + 1) / warmup) x c_t, warm-up 0 meaning 1, and
 *            c_t = (1 + cos(pi t / steps)) / 2 for the cosine schedule, 1 for
 *            the constant one (PyTorch's LambdaLR with that product)
 *   clip   : with C > 0, every gradient times min(1, C / (norm + 1e-6)), as
 *            torch.nn.utils.clip_grad_norm_
 *   AdamW  : p <- p (1 - lr_t wd)       (no-op at wd 0: torch.optim.Adam)
 *            m <- b1 m + (1 - b1) g,  v <- b2 v + (1 - b2) g^2
 *            p <- p - (lr_t / (1 - b1^s)) m / (sqrt(v) / sqrt(1 - b2^s) + eps)
 *            s = t + 1; in float, in the order of torch.optim.Adam's
 *            single-tensor loop
 *
 * A step whose loss or gradient norm is not finite ends the run as diverged
 * at that step (a result, not a failure); no update is made from it. The
 * result does not depend on the thread count.
 */
#ifndef VARPROF_TRAIN_H
#define VARPROF_TRAIN_H

#include <stddef.h>

#include "varprof/config.h"
#include "varprof/forward.h"
#include "varprof/safetensors.h"
#include "varprof/status.h"

#define VP_TRAIN_MAX_STEPS 10000000u
/* The most layers a trained stack may have. */
#define VP_TRAIN_MAX_LAYERS 1000u
/* vp_train_options_init's steps and learning rate: the seed's. */
#define VP_TRAIN_DEFAULT_STEPS 301u
#define VP_TRAIN_DEFAULT_LR 1e-3
/* The seed's network, varprof train's defaults: 24 MLP layers of width 48,
   the MLP twice as wide, a vocabulary of 24, batches of 16 x 12 tokens. */
#define VP_TRAIN_SEED_LAYERS 24u
#define VP_TRAIN_SEED_WIDTH 48u
#define VP_TRAIN_SEED_FFN_MULT 2u
#define VP_TRAIN_SEED_VOCAB 24u
#define VP_TRAIN_SEED_BATCH 16u
#define VP_TRAIN_SEED_TOKENS 12u

typedef enum {
    VP_TASK_COPY, /* predict token t at position t (the seed's): loss copy */
    VP_TASK_NEXT, /* predict token t + 1: each sequence follows a fixed random
                     successor of each token (a permutation drawn from the
                     seed), from a random first token; loss next */
    VP_TASK_COUNT
} vp_task;

typedef enum { VP_SCHEDULE_CONSTANT, VP_SCHEDULE_COSINE, VP_SCHEDULE_COUNT } vp_schedule;

/* One step's record: the rate it used, the loss before its update and the
 * global L2 norm of every parameter's gradient (before clipping). */
typedef struct {
    size_t step;
    double lr, loss, grad_norm;
} vp_train_step;

/* One tensor at one step, for per-layer statistics: the L2 norms of its
 * gradient (before clipping), of its values before the update, and of the
 * update the step made (after - before). */
typedef struct {
    size_t step;
    const char *name; /* the weights' name, "layers.3.mlp.fc2.weight" */
    double grad_norm, weight_norm, update_norm;
} vp_train_tensor;

typedef struct {
    vp_task task;
    double lr;     /* > 0 and finite */
    size_t steps;  /* 1 .. VP_TRAIN_MAX_STEPS */
    size_t warmup; /* 0 (none) .. steps */
    vp_schedule schedule;
    double beta1, beta2; /* in [0, 1) */
    double adam_eps;     /* > 0 */
    double weight_decay; /* >= 0, AdamW's decoupled decay */
    double clip_norm;    /* 0: no clipping; else > 0 */
    /* optional, not owned: steps x batch x tokens ids in [0, vocab),
       step-major, instead of drawing them; at least `steps` steps of it */
    const unsigned *token_stream;
    size_t token_stream_steps;
    /* optional: called after each step, on the calling thread, in step order */
    void (*on_step)(void *ctx, const vp_train_step *step);
    void *step_ctx;
    /* optional: called for every tensor after each step's update */
    void (*on_tensor)(void *ctx, const vp_train_tensor *tensor);
    void *tensor_ctx;
    int keep_weights; /* the result holds every tensor's values at the end */
} vp_train_options;

typedef struct {
    size_t steps_run;       /* rows of steps: all of them, or to the divergence */
    vp_train_step *steps;   /* [steps_run] */
    int diverged;           /* the loss or the gradient norm was not finite ... */
    size_t diverged_at;     /* ... at this step (the last row) */
    vp_overflow overflowed; /* where float overflowed in that step's network, as a
                               profile says it (the loss NaN after a forward
                               overflow, the gradient norm infinite after a
                               backward one); VP_OVERFLOW_NONE else */
    size_t overflow_at;     /* the sub-block */
    /* with keep_weights: every tensor after the last update, by the names
       of vp_forward_options' weights (vp_safetensors_write writes them) */
    vp_tensor_out *weights;
    size_t n_weights;
    char *weight_names; /* the storage of weights[].name */
    float *weight_data; /* and of weights[].data */
} vp_train_result;

/* Task copy, lr 1e-3, 301 steps, no warm-up, constant schedule, Adam's
 * defaults (0.9, 0.999, 1e-8), no weight decay, no clipping, no stream, no
 * callbacks: the seed's experiment. */
void vp_train_options_init(vp_train_options *options);

/* The learning rate of step t (formula above). */
double vp_train_lr(const vp_train_options *options, size_t step);

/* Names: "copy", "next"; "constant", "cosine". The parsers fail with
 * VP_EINVAL naming the values there are. */
const char *vp_task_name(vp_task task);
vp_status vp_task_parse(const char *name, vp_task *out, vp_error *err);
const char *vp_schedule_name(vp_schedule schedule);
vp_status vp_schedule_parse(const char *name, vp_schedule *out, vp_error *err);

/* VP_EINVAL (and err, naming the value and its allowed range) for options
 * out of range: a learning rate that is not positive and finite, zero
 * steps, a warm-up longer than the run, Adam's constants out of range, a
 * negative or NaN decay or clip norm, a token stream of fewer steps than the
 * run or with an id not below the vocabulary (naming its step, row and
 * column); and whatever vp_forward_check refuses in the network's options. */
vp_status vp_train_check(const vp_config *cfg, const vp_forward_options *network,
                         const vp_train_options *options, vp_error *err);

/* Trains the network of cfg and `network` (weights drawn as network->init
 * says, or loaded from network->weights; its loss and gradient callback are
 * the trainer's own) and fills *out. Fails as vp_train_check does, with
 * VP_ENOMEM or VP_ETHREAD; a divergence is not a failure. */
vp_status vp_train(const vp_config *cfg, const vp_forward_options *network,
                   const vp_train_options *options, vp_train_result **out, vp_error *err);

void vp_train_result_free(vp_train_result *result);

/* One configuration of a sweep: what vp_train takes, and what it gave. */
typedef struct {
    vp_config config;
    vp_forward_options network; /* its threads are vp_train_many's to set */
    vp_train_options train;     /* its on_step is called from the job's thread */
    vp_train_result *result;    /* set by vp_train_many; the caller frees it */
} vp_train_job;

/* Trains every job on `threads` threads: the jobs side by side, one thread
 * each, when there are at least as many jobs as threads; else one after
 * another, each on all of them (the result is the same either way).
 * Reports the steps done over all jobs to progress (optional). Fails with
 * the first job's failure in job order (its index in err's message), the
 * other jobs' results freed; a divergence is not a failure. */
vp_status vp_train_many(vp_train_job *jobs, size_t n, size_t threads, const vp_progress *progress,
                        vp_error *err);

#endif
