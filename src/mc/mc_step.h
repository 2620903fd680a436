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

#include <math.h>

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
    const vp_placement_traits *traits; /* where the norms sit */
    vp_norm norm;
    double d, eps, gamma;
    double alpha; /* the residual scale: the config's where the table says, else 1 */
    /* the branch noise's scale beyond g rms(h): DeepNet's beta^2 where the
       table says, times sqrt(n) where a block's n branches are drawn as one */
    double branch_scale;
} mc_params;

/* max(x, 0) without a call: fmax is a library call where NaNs must be kept */
static inline double mc_max0(double x)
{
    return x > 0.0 ? x : 0.0;
}

/* The mean square of N(v) for a vector with these sums: var/(var+eps) for
 * LayerNorm, ms/(ms+eps) for RMSNorm. */
static inline double mc_normalised_mean_square(const mc_params *p, double vv, double v1)
{
    double ms = vv / p->d;
    if (p->norm == VP_NORM_LAYERNORM) {
        double mean = v1 / p->d;
        double var = mc_max0(ms - mean * mean);
        return var / (var + p->eps);
    }
    return ms / (ms + p->eps);
}

static inline double mc_input_rms(const mc_params *p, const mc_state *s)
{
    if (p->traits->norm_in)
        return sqrt(mc_normalised_mean_square(p, s->xx, s->x1));
    return sqrt(s->xx / p->d);
}

static inline void mc_make_plan(const mc_params *p, double g, const mc_state *s, const mc_noise *n,
                                mc_plan *plan)
{
    const double d = p->d;
    const double r = mc_input_rms(p, s);
    *plan = (mc_plan){.alpha = p->alpha, .scale = 1.0, .normalise = p->traits->norm_stream};
    if (p->traits->norm_out) {
        /* the branch output f = g r xi, normalised, times gamma */
        const double f = p->branch_scale * g * r;
        if (p->norm == VP_NORM_LAYERNORM) {
            double mean = n->s1 / d;
            double var = f * f * mc_max0(n->ss / d - mean * mean);
            plan->a = p->gamma * f / sqrt(var + p->eps);
            plan->b = -plan->a * mean;
        } else {
            plan->a = p->gamma * f / sqrt(f * f * n->ss / d + p->eps);
        }
    } else {
        plan->a = p->branch_scale * g * r; /* o = g r xi, scaled as the params say */
    }
    const double a = plan->a, b = plan->b, alpha = plan->alpha;
    plan->oo = a * a * n->ss + 2.0 * a * b * n->s1 + b * b * d;
    if (!plan->normalise)
        return;
    const double yy = alpha * alpha * s->xx + 2.0 * alpha * (a * n->sx + b * s->x1) + plan->oo;
    const double y1 = alpha * s->x1 + a * n->s1 + b * d;
    if (p->norm == VP_NORM_LAYERNORM) {
        plan->shift = y1 / d;
        double var = mc_max0(yy / d - plan->shift * plan->shift);
        plan->scale = 1.0 / sqrt(var + p->eps);
        plan->c_shift = alpha * s->c1 / d;
    } else {
        plan->scale = 1.0 / sqrt(yy / d + p->eps);
    }
}

static inline void mc_apply_plan(const mc_params *p, const mc_plan *plan, const mc_noise *n,
                                 mc_state *s)
{
    const double d = p->d, a = plan->a, b = plan->b, alpha = plan->alpha;
    const double yy = alpha * alpha * s->xx + 2.0 * alpha * (a * n->sx + b * s->x1) + plan->oo;
    const double y1 = alpha * s->x1 + a * n->s1 + b * d;
    if (!plan->normalise) {
        s->xx = yy;
        s->x1 = y1;
        return;
    }
    const double k2 = plan->scale * plan->scale;
    if (p->norm == VP_NORM_LAYERNORM) {
        /* |y - m 1|^2 = |y|^2 - <1,y>^2 / d; likewise for alpha c */
        s->xx = mc_max0(yy - y1 * y1 / d) * k2;
        s->x1 = 0.0;
        s->cc = alpha * alpha * mc_max0(s->cc - s->c1 * s->c1 / d) * k2;
        s->c1 = 0.0;
    } else {
        s->xx = yy * k2;
        s->x1 = y1 * plan->scale;
        s->cc = alpha * alpha * s->cc * k2;
        s->c1 = alpha * s->c1 * plan->scale;
    }
}

#endif
