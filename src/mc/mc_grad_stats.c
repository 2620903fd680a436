/* The backward half's figures from its per-token samples (mc_fill_grad_rows):
 * grad_var a mean over tokens, weight_grad the root of a product of two
 * means, grad_size's bounds a root of a ratio of two correlated means, each
 * with its standard error by the delta method over tokens. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

#include "mc/mc_estimate.h"
#include "mc/mc_internal.h"

static int finite2(mc_estimate e)
{
    return isfinite(e.estimate) && isfinite(e.se);
}

vp_status mc_fill_grad_rows(const mc_job *job, vp_profile *profile, vp_error *err)
{
    const size_t n = job->options->trials, k_total = job->sub_blocks;
    if (profile->n_rows != k_total + 1)
        return vp_fail(err, VP_EOVERFLOW,
                       "the forward's %s overflowed double at sub-block %zu, so the backward "
                       "half has no top to start from: use a smaller gain or fewer layers",
                       vp_overflow_name(profile->overflowed), profile->overflow_at);
    const double z = gsl_cdf_ugaussian_Pinv(0.975);
    double *scratch = malloc(4 * n * sizeof *scratch);
    if (!scratch)
        return vp_fail(err, VP_ENOMEM, "no memory for the gradients' statistics");
    double *gg = scratch, *top = scratch + n, *ff = scratch + 2 * n, *hh = scratch + 3 * n;
    mc_gather(job, job->samples.gg, k_total, top);
    /* from the top down: a gradient beyond double at sub-block k is beyond it
       below k too, and those rows' figures are HUGE_VAL (no value in CSV and
       JSON), as in the closed form; the forward rows stay whole */
    int overflowed = 0;
    for (size_t k = k_total + 1; k-- > 0;) {
        vp_row *row = &profile->rows[k];
        mc_gather(job, job->samples.gg, k, gg);
        const mc_estimate g = mc_mean_of(gg, n);
        /* G_k / G_K: both means over the same tokens, correlated */
        const mc_estimate size = mc_root_of_ratio(gg, top, 1.0, n);
        mc_estimate w = {0.0, 0.0};
        if (k > 0) {
            mc_gather(job, job->samples.ff, k, ff);
            mc_gather(job, job->samples.hh, k, hh);
            w = mc_root_of_product(ff, hh, n);
        }
        if (overflowed || !finite2(g) || !finite2(size) || !finite2(w)) {
            overflowed = 1;
            row->grad_var = row->grad_var_lo = row->grad_var_hi = row->grad_var_se = HUGE_VAL;
            row->grad_size_lo = row->grad_size_hi = HUGE_VAL;
            if (k > 0)
                row->weight_grad = row->weight_grad_lo = row->weight_grad_hi = row->weight_grad_se =
                    HUGE_VAL;
            continue;
        }
        row->grad_var = g.estimate;
        row->grad_var_se = g.se;
        mc_bounds(g, z, &row->grad_var_lo, &row->grad_var_hi);
        mc_bounds(size, z, &row->grad_size_lo, &row->grad_size_hi);
        row->weight_grad = w.estimate;
        row->weight_grad_se = w.se;
        if (k > 0)
            mc_bounds(w, z, &row->weight_grad_lo, &row->weight_grad_hi);
    }
    if (overflowed)
        profile->overflowed = VP_OVERFLOW_GRAD_VAR;
    free(scratch);
    return VP_OK;
}
