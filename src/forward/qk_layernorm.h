/* Cohere's QK-norm (VP_QK_NORM_HEAD_LAYERNORM): a LayerNorm without bias over
 * each head's hd coordinates of q and of k, with a weight of its own for each
 * head, after the projections and before RoPE (CohereLayerNorm over the
 * heads' view). Private to src/forward. */
#ifndef VARPROF_FORWARD_QK_LAYERNORM_H
#define VARPROF_FORWARD_QK_LAYERNORM_H

#include "forward/backward.h"

/* The shape of layer i's q_norm (keys 0) or k_norm (keys 1) weight as a
 * tensor: [H, hd] or [H_kv, hd] (*cols hd) for a LayerNorm per head, else
 * [fw_q_norm_width] (*cols 0). */
void fw_q_norm_shape(const fw_model *m, int keys, size_t *rows, size_t *cols);

/* out = the per-head LayerNorm of in, rows of [r->rows][heads hd], head h
 * scaled by weight [h][hd]; token rows split over the pool, each head's bits
 * its own whatever the split. out is not in. */
void fw_qk_layernorm(fw_run *r, float *out, const float *in, const float *weight, size_t heads);

/* Its backward: dx from dy (both [rows][heads hd], dx neither dy nor x),
 * the statistics of x summed again into b->stats; the weight's gradient
 * [heads, hd] to on_param_grad as prefix.weight, made in its slot of the
 * run's arena when it has one, else in b->dw, one head a task, each column
 * summed over the rows in one order whatever the threads. b->stats holds
 * 4 rows heads floats. */
void fw_bw_qk_layernorm(fw_bw *b, const char *prefix, float *dx, const float *dy, const float *x,
                        const float *weight, size_t heads);

#endif
