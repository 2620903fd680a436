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
    VP_POST_LN,     /* x <- N(x + f(x)) */
    VP_PRE_NORM,    /* x <- x + f(N(x)) */
    VP_SANDWICH,    /* x <- x + gamma N2(f(N1(x))) */
    VP_OUTPUT_NORM, /* x <- x + gamma N(f(x)) */
    VP_DEEPNORM,    /* x <- N(alpha x + f(x)) */
    VP_PARALLEL,    /* x <- x + f_attn(N(x)) + f_mlp(N(x)) */
    VP_NO_NORM,     /* x <- x + f(x) */
    VP_PLACEMENT_COUNT
} vp_placement;

typedef enum { VP_PART_EMBEDDING, VP_PART_ATTN, VP_PART_MLP, VP_PART_BLOCK } vp_part;

/* A placement's structure: the library keeps one row of these per placement.
 * Every engine and writer reads these facts instead of testing for named
 * placements, so a new placement is a new row plus the engines' arithmetic.
 *
 * A sub-block is x <- N_stream(alpha x + sum of its branches' outputs), each
 * output gamma N_out(f(N_in(x))), every part present only where its flag
 * says so (alpha is 1 without residual_alpha).
 *
 * A measured gain (the forward pass's |f| / |h| per sub-block) maps to the
 * closed form's per-branch gain g by dividing by beta^2 where branch_beta is
 * set, and by sqrt(branches_per_sub_block) where the branches are summed
 * (not in MLP-only layers, which have one branch per sub-block). */
typedef struct {
    const char *name;         /* canonical, "pre-norm" */
    const char *display_name; /* for a reader, in figures: "Pre-norm", "Post-LN" */
    const char *formula;      /* one sub-block, "x <- x + f(N(x))" */
    int norm_in;              /* a norm on each branch's input: f(N(x)) */
    int norm_out;             /* a norm on each branch's output, its weight gamma: gamma N(f) */
    int norm_stream;          /* a norm on the stream after the residual add: N(x + f) */
    int residual_alpha;       /* the stream is scaled by alpha before the add (DeepNorm) */
    int branch_beta;          /* DeepNet's init scales both of a branch's matrices by beta,
                             so a branch's gain is beta^2 g */
    int final_norm;           /* by default the stack ends with a norm before
                                 its head (pre-norm's family; not Post-LN's,
                                 whose last sub-block ends with one) */
    size_t branches_per_sub_block; /* 2 for parallel: attention and MLP summed */
    size_t sub_blocks_per_layer;   /* 1 for parallel, 2 (attention, MLP) otherwise */
} vp_placement_traits;

/* The row of the placement table for placement; a pointer to static storage,
 * never to be freed. NULL for a value out of range. */
const vp_placement_traits *vp_placement_traits_of(vp_placement placement);

/* The most layers any engine accepts, and the default. */
#define VP_MAX_LAYERS 1000000u
#define VP_DEFAULT_LAYERS 32u

/* The canonical name ("pre-norm"); NULL for a value out of range. */
const char *vp_placement_name(vp_placement placement);

/* The name a reader sees in a figure ("Pre-norm", "Output norm"); NULL for a
 * value out of range. */
const char *vp_placement_display_name(vp_placement placement);

/* One sub-block as a formula ("x <- x + f(N(x))"); NULL for a value out of range. */
const char *vp_placement_formula(vp_placement placement);

/* Finds a placement by name, accepting the aliases pre-ln (pre-norm) and
 * peri-norm (sandwich). Fails with VP_EINVAL and a message in err for an
 * unknown name (listing the valid ones) and for "post-norm", which means
 * post-ln in some sources and output-norm in others. */
vp_status vp_placement_parse(const char *name, vp_placement *out, vp_error *err);

/* Sub-blocks per layer: 1 for parallel, 2 otherwise (2 too for a value out of
 * range, so that no caller divides by zero). */
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
