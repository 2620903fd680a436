/* What an engine is asked to compute: the stack, its gains and its scales. */
#ifndef VARPROF_CONFIG_H
#define VARPROF_CONFIG_H

#include <stddef.h>

#include "varprof/placement.h"
#include "varprof/status.h"

/* Whether the stack ends with a norm before the head (the loss's input). */
typedef enum {
    VP_FINAL_NORM_DEFAULT, /* the placement's: vp_placement_traits.final_norm */
    VP_FINAL_NORM_YES,
    VP_FINAL_NORM_NO,
} vp_final_norm;

typedef struct {
    vp_placement placement;
    size_t layers;            /* 1 .. VP_MAX_LAYERS */
    double gain;              /* g, every branch's gain when gains is NULL; >= 0 */
    const double *gains;      /* optional: g_k for k = 1..K at gains[k-1]; not owned */
    size_t n_gains;           /* must equal K when gains is not NULL */
    double gamma;             /* the scale of a normalised branch output; >= 0 */
    double alpha, beta;       /* DeepNet's residual scale (> 0) and init scale (>= 0) */
    double embedding_var;     /* v_0 > 0 */
    int mlp_only;             /* layers of one MLP sub-block each (--block mlp), as in the
                             seed's stack; not with parallel, whose one-branch layer
                             would be pre-norm's */
    int grad;                 /* also the backward half: grad_var, grad_size, weight_grad */
    vp_final_norm final_norm; /* a norm between the last sub-block and the head */
    size_t width;             /* the closed form's width d for its finite-width
                             corrections to the backward half; 0: infinite */
} vp_config;

/* Fills cfg with the defaults for a stack: gain 1, gamma 1, v_0 = 1, no gains
 * array, and DeepNet's decoder-only alpha and beta for M = layers. */
void vp_config_init(vp_config *cfg, vp_placement placement, size_t layers);

/* DeepNet's decoder-only defaults (arXiv 2203.00555) for M layers:
 * alpha = (2M)^(1/4), beta = (8M)^(-1/4). M must be >= 1. */
double vp_deepnet_alpha(size_t layers);
double vp_deepnet_beta(size_t layers);

/* K, the stack's sub-blocks: one per layer for parallel or MLP-only layers,
 * two (attention, MLP) otherwise. */
size_t vp_config_sub_blocks(const vp_config *cfg);

/* The branches summed in each sub-block: the placement's (2 for parallel),
 * or 1 in MLP-only layers, which have nothing to sum. cfg->placement must be
 * in range, as vp_config_check makes sure. */
size_t vp_config_branches(const vp_config *cfg);

/* The layer (from 0) of sub-block k >= 1, and what sub-block k is
 * (VP_PART_EMBEDDING for k = 0). */
size_t vp_config_layer_of(const vp_config *cfg, size_t k);
vp_part vp_config_part_of(const vp_config *cfg, size_t k);

/* The gain of sub-block k >= 1: gains[k-1] when given, else gain. */
double vp_config_gain(const vp_config *cfg, size_t k);

/* 1 when the stack ends with a final norm: final_norm, or the placement's
 * default where it is VP_FINAL_NORM_DEFAULT. */
int vp_config_has_final_norm(const vp_config *cfg);

/* Checks every field against its range; VP_EINVAL with a message naming the
 * field, its value and what is allowed. */
vp_status vp_config_check(const vp_config *cfg, vp_error *err);

#endif
