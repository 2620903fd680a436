/* The parts of a sub-block that run.c's sub_block puts together: the
 * branches (branches.c) and the residual update with its sums (residual_update.c).
 * Private to src/forward. */
#ifndef VARPROF_FORWARD_SUB_BLOCK_H
#define VARPROF_FORWARD_SUB_BLOCK_H

#include "forward/run.h"

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

/* The residual update of sub_block: x += o, or the stream normalised, with
   the measurements' sums of each group of rows (residual_update.c);
   fw_update_task takes task's rows, for fw_parallel. */
typedef struct {
    fw_run *run;
    const float *h, *f, *o;
    const fw_norm *stream_norm; /* NULL: the stream is not normalised */
    double alpha;
} fw_update_job;
void fw_update_task(void *ctx, size_t task, size_t thread);

/* The branches (branches.c): attention and the MLP on the branch input h,
   their output to out [rows][d], their intermediate values in the run's
   buffers. */
void fw_attention_branch(fw_run *r, const fw_layer *layer, const float *h, float *out);
void fw_mlp_branch(fw_run *r, const fw_layer *layer, const float *h, float *out);

#endif
