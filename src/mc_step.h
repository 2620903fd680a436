/* One sub-block of the Monte Carlo, in terms of the few sums it needs.
 *
 * Both methods describe a token by sums over its d coordinates: of the
 * stream x and of the embedding component c, and of the fresh noise xi. The
 * reduced method samples those sums directly; the full method sums real
 * vectors. Either way the same plan says what the sub-block does:
 *
 *     y = alpha x + a xi + b 1            (o = a xi + b 1, the branch output)
 *     x <- y, or, where the placement normalises the stream,
 *     x <- (y - shift 1) scale,   c <- (alpha c - c_shift 1) scale
 */
#ifndef VARPROF_MC_STEP_H
#define VARPROF_MC_STEP_H

#include "varprof/config.h"
#include "varprof/profile.h"

/* Sums over the d coordinates of a token. */
typedef struct {
    double xx, x1; /* |x|^2, <1, x> */
    double cc, c1; /* |c|^2, <1, c> */
} mc_state;

/* Sums of the fresh noise: <1, xi>, <x, xi>, |xi|^2. */
typedef struct {
    double s1, sx, ss;
} mc_noise;

typedef struct {
    double alpha, a, b;
    int normalise;
    double shift, scale, c_shift;
    double oo; /* |o|^2 */
} mc_plan;

typedef struct {
    vp_placement placement;
    vp_norm norm;
    double d, eps, gamma, alpha, beta;
    /* the branch noise's scale beyond g rms(h): sqrt(2) for a parallel
       block's two branches drawn as one, else 1 */
    double parallel_factor;
} mc_params;

/* The RMS of the branch's input h_k: of N(x) where the placement normalises
 * the branch input, of x otherwise. */
double mc_input_rms(const mc_params *p, const mc_state *s);

/* Plans sub-block k with gain g, from the token's sums and its noise's. */
void mc_make_plan(const mc_params *p, double g, const mc_state *s, const mc_noise *n,
                  mc_plan *plan);

/* The token's sums after the plan, computed from the sums alone (the
 * reduced method). */
void mc_apply_plan(const mc_params *p, const mc_plan *plan, const mc_noise *n, mc_state *s);

#endif
