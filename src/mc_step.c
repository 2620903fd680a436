#include "mc_step.h"

#include <math.h>

static int normalises_branch_input(vp_placement placement)
{
    return placement == VP_PRE_NORM || placement == VP_SANDWICH || placement == VP_PARALLEL;
}

/* The mean square of N(v) for a vector with these sums: var/(var+eps) for
 * LayerNorm, ms/(ms+eps) for RMSNorm. */
static double normalised_mean_square(const mc_params *p, double vv, double v1)
{
    double ms = vv / p->d;
    if (p->norm == VP_NORM_LAYERNORM) {
        double mean = v1 / p->d;
        double var = fmax(ms - mean * mean, 0.0);
        return var / (var + p->eps);
    }
    return ms / (ms + p->eps);
}

double mc_input_rms(const mc_params *p, const mc_state *s)
{
    if (normalises_branch_input(p->placement))
        return sqrt(normalised_mean_square(p, s->xx, s->x1));
    return sqrt(s->xx / p->d);
}

void mc_make_plan(const mc_params *p, double g, const mc_state *s, const mc_noise *n,
                  mc_plan *plan)
{
    const double d = p->d;
    const double r = mc_input_rms(p, s);
    *plan = (mc_plan){.alpha = 1.0, .scale = 1.0};
    switch (p->placement) {
    case VP_PARALLEL:
        plan->a = p->parallel_factor * g * r;
        break;
    case VP_SANDWICH:
    case VP_OUTPUT_NORM: {
        /* the branch output f = g r xi, normalised, times gamma */
        const double f = g * r;
        if (p->norm == VP_NORM_LAYERNORM) {
            double mean = n->s1 / d;
            double var = f * f * fmax(n->ss / d - mean * mean, 0.0);
            plan->a = p->gamma * f / sqrt(var + p->eps);
            plan->b = -plan->a * mean;
        } else {
            plan->a = p->gamma * f / sqrt(f * f * n->ss / d + p->eps);
        }
        break;
    }
    case VP_DEEPNORM:
        /* DeepNet multiplies both of a branch's weight matrices by beta */
        plan->alpha = p->alpha;
        plan->a = p->beta * p->beta * g * r;
        plan->normalise = 1;
        break;
    case VP_POST_LN:
        plan->a = g * r;
        plan->normalise = 1;
        break;
    default: /* pre-norm and none: o = g r xi */
        plan->a = g * r;
        break;
    }
    const double a = plan->a, b = plan->b, alpha = plan->alpha;
    plan->oo = a * a * n->ss + 2.0 * a * b * n->s1 + b * b * d;
    if (!plan->normalise)
        return;
    const double yy = alpha * alpha * s->xx + 2.0 * alpha * (a * n->sx + b * s->x1) + plan->oo;
    const double y1 = alpha * s->x1 + a * n->s1 + b * d;
    if (p->norm == VP_NORM_LAYERNORM) {
        plan->shift = y1 / d;
        double var = fmax(yy / d - plan->shift * plan->shift, 0.0);
        plan->scale = 1.0 / sqrt(var + p->eps);
        plan->c_shift = alpha * s->c1 / d;
    } else {
        plan->scale = 1.0 / sqrt(yy / d + p->eps);
    }
}

void mc_apply_plan(const mc_params *p, const mc_plan *plan, const mc_noise *n, mc_state *s)
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
        s->xx = fmax(yy - y1 * y1 / d, 0.0) * k2;
        s->x1 = 0.0;
        s->cc = alpha * alpha * fmax(s->cc - s->c1 * s->c1 / d, 0.0) * k2;
        s->c1 = 0.0;
    } else {
        s->xx = yy * k2;
        s->x1 = y1 * plan->scale;
        s->cc = alpha * alpha * s->cc * k2;
        s->c1 = alpha * s->c1 * plan->scale;
    }
}
