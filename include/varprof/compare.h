/* Holding a sampled profile against the closed form, sub-block by sub-block. */
#ifndef VARPROF_COMPARE_H
#define VARPROF_COMPARE_H

#include "varprof/closed.h"
#include "varprof/profile.h"

/* The forward half's three, then the backward half's two, compared only
 * where both profiles carry the backward half (VP_HAS_GRAD). */
typedef enum {
    VP_Q_STREAM_VAR,
    VP_Q_UPDATE_RATIO,
    VP_Q_EMBEDDING_SHARE,
    VP_Q_GRAD_VAR,
    VP_Q_WEIGHT_GRAD,
    VP_Q_COUNT
} vp_quantity;

/* "stream variance", "update ratio", "embedding share", "gradient
 * variance", "weight gradient"; "" for a value out of range. */
const char *vp_quantity_name(vp_quantity q);

/* 1 for the backward half's quantities (VP_Q_GRAD_VAR, VP_Q_WEIGHT_GRAD). */
int vp_quantity_is_grad(vp_quantity q);

/* Whether q is a figure of sub-block k: the update ratio is not one of
 * sub-block 0, the embedding, which no branch updates. */
int vp_quantity_applies(vp_quantity q, size_t k);

typedef struct {
    double n_se;                /* agreement: within this many standard errors ... */
    double rel_floor;           /* ... or this relative difference (the norms' eps moves the
                         sampled values by about eps, below any standard error) */
    double family_se;           /* the bound chance allows the largest of `checked` figures:
                         two-sided 5 % with Bonferroni's correction, and >= n_se */
    size_t checked;             /* figures compared: 3 per sub-block (2 for sub-block 0),
                                   5 (3) with the backward half */
    size_t beyond;              /* figures beyond n_se (and rel_floor) */
    size_t disagree;            /* figures beyond family_se (and rel_floor): a real difference */
    size_t rows;                /* rows compared (sub-block 0 included) */
    size_t first_k;             /* the first sub-block with a figure beyond n_se */
    size_t first_disagree;      /* the first with one beyond family_se */
    vp_quantity worst_quantity; /* the largest disagreement, in standard errors */
    size_t worst_k;
    double worst_closed, worst_sampled, worst_se_units, worst_relative;
    size_t width; /* the sampled profile's width d and norm, which set how far */
    vp_norm norm; /* a normalising placement's share may sit above the closed form */
    /* Where the two differ most in a normalising placement's (norm_stream)
       embedding share at a branch sub-block and a finite width: 1, and in
       share_excess how far the closed form at that width would put it above
       the infinite-width one at worst_k (vp_closed_share_excess), which says
       why they differ; else 0 and zeros. */
    int has_share_excess;
    vp_share_excess share_excess;
} vp_comparison;

/* Compares every row both profiles have (same placement and layers, the
 * sampled one with VP_HAS_BOUNDS), the gradients too where both have
 * VP_HAS_GRAD (a gradient figure out of range in either is not compared).
 * VP_EINVAL when they do not match. The
 * difference in standard errors is (sampled - closed) / se; a zero se with a
 * difference counts as infinitely many. With hundreds of figures a few lie
 * beyond 3 standard errors by chance alone, so the two agree unless one lies
 * beyond family_se. Where they differ most in a normalising placement's
 * embedding share, it fills share_excess from the closed profile's gains. */
vp_status vp_compare(const vp_profile *closed, const vp_profile *sampled, double n_se,
                     double rel_floor, vp_comparison *out);

#endif
