/* How far a normalising placement's sampled embedding share sits above the
 * closed form at a finite width, to first order in 1/d: what the Monte
 * Carlo verdict's "why" line says (varprof-maths(7), Finite width). */
#ifndef VARPROF_MC_FINITE_WIDTH_H
#define VARPROF_MC_FINITE_WIDTH_H

#include <stddef.h>

#include "varprof/profile.h"

typedef struct {
    double jensen;   /* relative excess of e_k from each token's own RMS: the sum over
                        sub-blocks j <= k of u_j^2 (2 + u_j^2) / (d (1 + u_j^2)^2) */
    double centring; /* LayerNorm's more: the sum over 2 <= j <= k of
                        u_j^2 / (2 d (1 + u_j^2)); 0 for RMSNorm */
    double gain;     /* u, when every sub-block to k has the same, else NaN */
} finite_width_excess;

/* The excess at sub-block k (1 <= k < closed->n_rows) of a profile at
 * width d >= 1 with this norm. u_j is the effective gain: the row's gain,
 * times beta^2 / alpha for DeepNorm (whose branch is drawn to beta^2 g and
 * added to alpha x). */
finite_width_excess finite_width_share_excess(const vp_profile *closed, size_t k, size_t width,
                                              vp_norm norm);

#endif
