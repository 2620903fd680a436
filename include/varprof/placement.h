/* Where a transformer puts its norms, and how its sub-blocks are laid out.
 *
 * A layer has two sub-blocks, attention then MLP, except a parallel layer,
 * which is one sub-block. Sub-block 0 is the embedding; sub-blocks 1..K are
 * the branches, K = vp_sub_block_count(). Layers are numbered from 0, as in
 * PyTorch's `layers.i`.
 */
#ifndef VARPROF_PLACEMENT_H
#define VARPROF_PLACEMENT_H

#include <stddef.h>

#include "varprof/status.h"

typedef enum {
    VP_POST_LN,      /* x <- N(x + f(x)) */
    VP_PRE_NORM,     /* x <- x + f(N(x)) */
    VP_SANDWICH,     /* x <- x + gamma N2(f(N1(x))) */
    VP_OUTPUT_NORM,  /* x <- x + gamma N(f(x)) */
    VP_DEEPNORM,     /* x <- N(alpha x + f(x)) */
    VP_PARALLEL,     /* x <- x + f_attn(N(x)) + f_mlp(N(x)) */
    VP_NO_NORM,      /* x <- x + f(x) */
    VP_PLACEMENT_COUNT
} vp_placement;

typedef enum { VP_PART_EMBEDDING, VP_PART_ATTN, VP_PART_MLP, VP_PART_BLOCK } vp_part;

/* The most layers any engine accepts, and the default. */
#define VP_MAX_LAYERS 1000000u
#define VP_DEFAULT_LAYERS 32u

/* The canonical name ("pre-norm"); NULL for a value out of range. */
const char *vp_placement_name(vp_placement placement);

/* One sub-block as a formula ("x <- x + f(N(x))"); NULL for a value out of range. */
const char *vp_placement_formula(vp_placement placement);

/* Finds a placement by name, accepting the aliases pre-ln (pre-norm) and
 * peri-norm (sandwich). Fails with VP_EINVAL and a message in err for an
 * unknown name (listing the valid ones) and for "post-norm", which means
 * post-ln in some sources and output-norm in others. */
vp_status vp_placement_parse(const char *name, vp_placement *out, vp_error *err);

/* Sub-blocks per layer: 1 for parallel, 2 otherwise. */
size_t vp_sub_blocks_per_layer(vp_placement placement);

/* K for a stack of the given layers (layers <= VP_MAX_LAYERS, so no overflow). */
size_t vp_sub_block_count(vp_placement placement, size_t layers);

/* The layer (from 0) holding sub-block k >= 1. */
size_t vp_sub_block_layer(vp_placement placement, size_t k);

/* What sub-block k is: the embedding for k = 0, then attn and mlp in turn,
 * or block for a parallel layer. */
vp_part vp_sub_block_part(vp_placement placement, size_t k);

/* "embedding", "attn", "mlp", "block"; NULL for a value out of range. */
const char *vp_part_name(vp_part part);

#endif
