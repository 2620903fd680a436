/* The backward half of the closed form, varprof-maths(7), GRADIENTS: the
 * loss's gradient carried down the stack, one sub-block at a time, from the
 * profile's own forward rows. */
#include "varprof/closed.h"

#include <math.h>

/* What one sub-block's backward step gives: G_{k-1} and weight_grad_k. */
typedef struct {
    double grad_var_below;
    double weight_grad;
} grad_step;

/* The share of a gradient's mean square that a norm's Jacobian keeps at
 * width d: it projects out p directions (the mean and the input itself for
 * LayerNorm, the input alone for RMSNorm). 1 at infinite width. */
static double norm_keep(size_t width, vp_norm norm)
{
    if (width == 0 || norm == VP_NORM_ANY)
        return 1.0;
    const double p = norm == VP_NORM_LAYERNORM ? 2.0 : 1.0;
    return 1.0 - p / (double)width;
}

/* One sub-block x_k = N_stream(alpha x + sum of n branches gamma N_out(A N_in(x))),
 * each part present where the placement's traits say, read backward. A is the
 * branch's one linear map, gain b (beta^2 g under DeepNet's init), independent
 * of everything, so A^T multiplies a mean square by b^2 and every cross term
 * has mean zero; a norm's Jacobian divides a mean square by its input's and
 * keeps `keep` of it. v = v_{k-1}, G = G_k. */
static grad_step backward_step(const vp_config *cfg, const vp_placement_traits *t, double keep,
                               double v, double g, double G)
{
    const double n = (double)vp_config_branches(cfg);
    const double b = t->branch_beta ? cfg->beta * (cfg->beta * g) : g;
    const double alpha = t->residual_alpha ? cfg->alpha : 1.0;
    const double gamma2 = cfg->gamma * cfg->gamma;
    const double h_ms = t->norm_in ? 1.0 : v; /* the map's input h */
    const double o_ms = b * b * h_ms;         /* its output o = A h */
    const double branch_ms = t->norm_out ? gamma2 : o_ms;

    /* the gradient at the sum y = alpha x + branches */
    double y_grad = G;
    if (t->norm_stream)
        y_grad = keep * G / (alpha * alpha * v + n * branch_ms);
    /* at o, and at h = through A^T: where an output norm divides by |o|,
       b^2 cancels, so h's gradient stays finite when the branch is silent */
    double o_grad = y_grad, h_grad = b * b * y_grad;
    if (t->norm_out) {
        /* a silent branch (g = 0) under a norm: the idealisation divides by
           a zero |o|, and the map's gradient is infinite unless nothing
           reaches it (gamma = 0, or a Jacobian that keeps nothing) */
        const double reaching = gamma2 * keep * y_grad;
        o_grad = reaching == 0.0 ? 0.0 : o_ms == 0.0 ? HUGE_VAL : reaching / o_ms;
        h_grad = reaching / h_ms;
    }
    const double x_grad_by_branch = t->norm_in ? keep * h_grad / v : h_grad;

    grad_step step;
    step.grad_var_below = alpha * alpha * y_grad + n * x_grad_by_branch;
    /* every branch of the sub-block has the same figures: their RMS is one's */
    step.weight_grad = sqrt(o_grad) * sqrt(h_ms);
    return step;
}

static vp_status check_rows(const vp_profile *profile, vp_error *err)
{
    for (size_t k = 0; k < profile->n_rows; k++) {
        const vp_row *row = &profile->rows[k];
        if (!(isfinite(row->stream_var) && row->stream_var > 0.0))
            return vp_fail(err, VP_EINVAL,
                           "stream variance %g at sub-block %zu; the backward half needs a "
                           "finite stream variance > 0",
                           row->stream_var, k);
        if (k > 0 && !(isfinite(row->gain) && row->gain >= 0.0))
            return vp_fail(err, VP_EINVAL,
                           "gain %g at sub-block %zu; the backward half needs a finite gain "
                           ">= 0",
                           row->gain, k);
    }
    return VP_OK;
}

static vp_status check_width(size_t width, vp_norm norm, vp_error *err)
{
    if ((unsigned)norm > VP_NORM_RMSNORM)
        return vp_fail(err, VP_EINVAL, "norm is %d; it must be any, layernorm or rmsnorm",
                       (int)norm);
    /* LayerNorm of one coordinate is 0 whatever its input: no Jacobian */
    if (norm == VP_NORM_LAYERNORM && width == 1)
        return vp_fail(err, VP_EINVAL,
                       "width 1 with layernorm; the closed form's gradient needs width 0 "
                       "(infinite) or 2 up with layernorm");
    return VP_OK;
}

vp_status vp_closed_grad(vp_profile *profile, size_t width, vp_norm norm, vp_error *err)
{
    if (!profile)
        return vp_fail(err, VP_EINVAL, "no profile given for the backward half");
    vp_status status = check_width(width, norm, err);
    if (status == VP_OK)
        status = vp_config_check(&profile->config, err);
    if (status == VP_OK && profile->n_rows == 0)
        status = vp_fail(err, VP_EINVAL, "the profile has no rows");
    if (status == VP_OK)
        status = check_rows(profile, err);
    if (status != VP_OK)
        return status;

    const vp_config *cfg = &profile->config;
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    const double keep = norm_keep(width, norm);
    const size_t top = profile->n_rows - 1;
    /* the head's input has a gradient of mean square 1; a final norm passes
       it down divided by the top's mean square */
    profile->rows[top].grad_var =
        vp_config_has_final_norm(cfg) ? keep / profile->rows[top].stream_var : 1.0;
    profile->rows[0].weight_grad = 0.0;
    int overflowed = 0;
    for (size_t k = top; k >= 1; k--) {
        vp_row *row = &profile->rows[k], *below = &profile->rows[k - 1];
        if (overflowed) {
            /* what is computed from a gradient beyond double is beyond it too */
            below->grad_var = row->weight_grad = HUGE_VAL;
            continue;
        }
        const grad_step s = backward_step(cfg, t, keep, below->stream_var, row->gain, row->grad_var);
        below->grad_var = s.grad_var_below;
        row->weight_grad = s.weight_grad;
        if (!isfinite(s.grad_var_below)) {
            below->grad_var = HUGE_VAL;
            overflowed = 1;
        }
    }
    profile->fields |= VP_HAS_GRAD;
    /* the forward rows stay whole (overflow_at is the forward's): only the
       gradient figures below the overflow are out of range, written as no
       value in CSV and JSON */
    if (overflowed && profile->overflowed == VP_OVERFLOW_NONE)
        profile->overflowed = VP_OVERFLOW_GRAD_VAR;
    return VP_OK;
}
