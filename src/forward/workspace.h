/* A run's buffers and its thread pool, made once for a model and a batch
 * shape and reused by every fw_run_network on them, so that a training loop
 * allocates nothing per step: the forward's activations and measurements,
 * what it keeps for the backward, the backward's own buffers, and each
 * thread's matmul and attention scratch. Private to src/forward. */
#ifndef VARPROF_FORWARD_WORKSPACE_H
#define VARPROF_FORWARD_WORKSPACE_H

#include <stddef.h>

#include "forward/grads.h"
#include "forward/network.h"

/* A workspace for runs of m on batch sequences of tokens tokens on threads
 * threads; with m->backward, the backward's buffers too. Its size is
 * fw_run_bytes(m, batch * tokens, threads, tokens), less the token ids. The
 * model's shape must stay; its weights may change between runs. NULL in
 * *out and VP_EINVAL when batch, tokens or threads is 0, VP_ENOMEM or
 * VP_ETHREAD when memory or a thread cannot be had. */
vp_status fw_workspace_create(const fw_model *m, size_t batch, size_t tokens, size_t threads,
                              fw_workspace **out, vp_error *err);

/* Runs on ws skip the backward's weight_grad figure (two square sums per
 * sub-block over the branch's output gradient and its last projection's
 * input), for a caller that reads only the loss and the gradients (a
 * trainer): each row's weight_grad is NaN, the overflow checks rest on
 * grad_var and the loss alone. Everything else is unchanged. */
void fw_workspace_skip_weight_grad(fw_workspace *ws);

/* Runs on ws measure (measured 1, the default) or not (0). Unmeasured, for
 * a caller that reads only the loss and the gradients (a trainer), a run
 * fills no row of the profile (neither the forward's figures nor
 * grad_var) and skips what only they need: the residual sums, Post-LN's
 * identity-path part, the backward's square sums. So no overflow is looked
 * for either: a stream or a gradient that left float's range shows only
 * as a loss or gradients that are not finite, and a measured run of the
 * same step says where. The loss and every gradient are the same bits. */
void fw_workspace_set_measured(fw_workspace *ws, int measured);

/* Runs on ws make each parameter's gradient in its slot of grads (an arena
 * of ws's model, outliving the runs) instead of the backward's own buffer
 * or o->param_grad_dest's, and hand that slot to o->on_param_grad, which
 * must be set for the backward to make any; NULL: no arena, the default.
 * The gradients are the same bits either way. */
void fw_workspace_set_grads(fw_workspace *ws, const fw_grads *grads);

/* Stops the pool's threads and frees every buffer; NULL is allowed. */
void fw_workspace_free(fw_workspace *ws);

#endif
