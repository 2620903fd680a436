/* The backward half of the closed form, varprof-maths(7), GRADIENTS: the
 * loss's gradient carried down the stack, one sub-block at a time, from the
 * profile's own forward rows. */
#include "varprof/closed.h"

#include <math.h>

#include "closed/closed_grad_width.h"

/* What one sub-block's backward step gives: G_{k-1} and weight_grad_k. */
typedef struct {
    double grad_var_below;
    double weight_grad;
} grad_step;

/* One sub-block x_k = N_stream(alpha x + sum of n branches gamma N_out(A N_in(x))),
 * each part present where the placement's traits say, read backward. A is the
 * branch's one linear map, gain b (beta^2 g under DeepNet's init), independent
 * of everything, so A^T multiplies a mean square by b^2 and every cross term
 * has mean zero; a norm's Jacobian divides a mean square by its input's
 * (infinite width: the directions it projects out are none of the whole).
 * v = v_{k-1}, G = G_k. */
static grad_step backward_step(const vp_config *cfg, const vp_placement_traits *t, double v,
                               double g, double G)
{
    const double n = (double)vp_config_branches(cfg);
    const double b = t->branch_beta ? cfg->beta * (cfg->beta * g) : g;
    const double alpha = t->residual_alpha ? cfg->alpha : 1.0;
    const double gamma2 = cfg->gamma * cfg->gamma;
    const double h_ms = t->norm_in ? 1.0 : v; /* the map's input h */
    /* the branch's output: gamma N(o), or o = A h itself */
    const double branch_ms = t->norm_out ? gamma2 : b * b * h_ms;

    /* the gradient at the sum y = alpha x + branches */
    double y_grad = G;
    if (t->norm_stream)
        y_grad = G / (alpha * alpha * v + n * branch_ms);
    /* at o, and at h = through A^T: where an output norm divides by |o|,
       b^2 cancels, so h's gradient stays finite when the branch is silent */
    double h_grad = b * b * y_grad, reaching = 0.0;
    if (t->norm_out) {
        reaching = gamma2 * y_grad; /* |o|^2 times o's gradient */
        h_grad = reaching / h_ms;
    }
    const double x_grad_by_branch = t->norm_in ? h_grad / v : h_grad;

    grad_step step;
    step.grad_var_below = alpha * alpha * y_grad + n * x_grad_by_branch;
    /* weight_grad^2 = o's gradient times h's mean square, each written with
       what cancels cancelled, so that a tiny v_0 (1e-310) overflows no
       figure that is finite; every branch of the sub-block has the same, so
       their RMS is one's */
    if (t->norm_out)
        /* a silent branch (g = 0) under a norm: the idealisation divides by
           a zero |o|, and the map's gradient is infinite unless nothing
           reaches it (gamma = 0) */
        step.weight_grad = reaching == 0.0 ? 0.0 : b == 0.0 ? HUGE_VAL : sqrt(reaching) / b;
    else if (t->norm_stream) /* G h_ms / (alpha^2 v + n b^2 h_ms) */
        step.weight_grad = sqrt(G / (alpha * alpha * (v / h_ms) + n * b * b));
    else
        step.weight_grad = sqrt(y_grad) * sqrt(h_ms);
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

static vp_status check_width(const vp_config *cfg, size_t width, vp_norm norm, vp_error *err)
{
    if ((unsigned)norm > VP_NORM_RMSNORM)
        return vp_fail(err, VP_EINVAL, "norm is %d; it must be any, layernorm or rmsnorm",
                       (int)norm);
    if (width == 0 || norm == VP_NORM_ANY)
        return VP_OK;
    /* below it an inverse moment the derivation takes is infinite, or the
       first order in 1/d is no guide */
    const size_t least = closed_grad_min_width(vp_placement_traits_of(cfg->placement), norm);
    if (width < least)
        return vp_fail(err, VP_EINVAL,
                       "width %zu with %s under %s; the closed form's finite-width gradient "
                       "needs width 0 (infinite) or %zu up",
                       width, vp_norm_name(norm), vp_placement_name(cfg->placement), least);
    return VP_OK;
}

/* The finite width changes nothing without a norm anywhere: the gradient
 * never meets the forward's values (varprof-maths(7), Finite width). */
static int width_matters(const vp_config *cfg, size_t width, vp_norm norm)
{
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    if (width == 0 || norm == VP_NORM_ANY)
        return 0;
    return t->norm_in || t->norm_out || t->norm_stream || vp_config_has_final_norm(cfg);
}

vp_status vp_closed_grad(vp_profile *profile, size_t width, vp_norm norm, vp_error *err)
{
    if (!profile)
        return vp_fail(err, VP_EINVAL, "no profile given for the backward half");
    vp_status status = vp_config_check(&profile->config, err);
    if (status == VP_OK)
        status = check_width(&profile->config, width, norm, err);
    if (status == VP_OK && profile->n_rows == 0)
        status = vp_fail(err, VP_EINVAL, "the profile has no rows");
    if (status == VP_OK)
        status = check_rows(profile, err);
    if (status != VP_OK)
        return status;

    const vp_config *cfg = &profile->config;
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    const size_t top = profile->n_rows - 1;
    profile->rows[0].weight_grad = 0.0;
    if (width_matters(cfg, width, norm)) {
        status = closed_grad_width(profile, top, width, norm, err);
        if (status != VP_OK)
            return status;
    } else {
        /* the head's input has a gradient of mean square 1; a final norm
           passes it down divided by the top's mean square */
        profile->rows[top].grad_var =
            vp_config_has_final_norm(cfg) ? 1.0 / profile->rows[top].stream_var : 1.0;
        for (size_t k = top; k >= 1; k--) {
            vp_row *row = &profile->rows[k], *below = &profile->rows[k - 1];
            const grad_step s = backward_step(cfg, t, below->stream_var, row->gain, row->grad_var);
            below->grad_var = s.grad_var_below;
            row->weight_grad = s.weight_grad;
        }
    }
    /* from the top down: what is computed from a gradient beyond double is
       beyond it too, written as no value in CSV and JSON */
    int overflowed = 0;
    for (size_t k = top + 1; k-- > 0;) {
        vp_row *row = &profile->rows[k];
        if (overflowed || !isfinite(row->grad_var)) {
            row->grad_var = HUGE_VAL;
            if (k > 0)
                row->weight_grad = HUGE_VAL;
            overflowed = 1;
        }
    }
    profile->fields |= VP_HAS_GRAD;
    /* the forward rows stay whole (overflow_at is the forward's) */
    if (overflowed && profile->overflowed == VP_OVERFLOW_NONE)
        profile->overflowed = VP_OVERFLOW_GRAD_VAR;
    return VP_OK;
}
