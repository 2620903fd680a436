/* From per-token samples to estimates: ratios of means over tokens, their
 * 95 % bounds by the delta method, and percentiles of the stream size. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mc/mc_internal.h"
#include "mc/mc_estimate.h"
#include "mc/quantile.h"

static int finite3(double a, double b, double c)
{
    return isfinite(a) && isfinite(b) && isfinite(c);
}

vp_status mc_fill_rows(const mc_job *job, vp_profile *profile)
{
    const size_t n = job->options->trials;
    const double z = gsl_cdf_ugaussian_Pinv(0.975);
    const double v0 = job->cfg->embedding_var;
    /* the update against the scaled stream it joins; alpha is 1 without a residual scale */
    const double alpha2 = job->params.alpha * job->params.alpha;
    double *scratch = malloc(5 * n * sizeof *scratch);
    if (!scratch)
        return VP_ENOMEM;
    double *sizes = scratch, *xx = scratch + n, *cc = scratch + 2 * n, *oo = scratch + 3 * n,
           *xx_before = scratch + 4 * n;
    for (size_t k = 0; k <= job->sub_blocks; k++) {
        /* this sub-block's column, and the one before it, gathered per token */
        mc_gather(job, job->samples.xx, k, xx);
        mc_gather(job, job->samples.cc, k, cc);
        if (k > 0) {
            mc_gather(job, job->samples.oo, k, oo);
            mc_gather(job, job->samples.xx, k - 1, xx_before);
        }
        vp_row *row = &profile->rows[k];
        row->gain = k > 0 ? vp_config_gain(job->cfg, k) : 0.0;
        mc_estimate v = mc_mean_of(xx, n);
        mc_estimate e = mc_root_of_ratio(cc, xx, 1.0, n);
        mc_estimate u = {0.0, 0.0};
        if (k > 0)
            u = mc_root_of_ratio(oo, xx_before, alpha2, n);
        if (!finite3(v.estimate, u.estimate, e.estimate) || !finite3(v.se, u.se, e.se)) {
            profile->overflow_at = k;
            profile->overflowed = !isfinite(v.estimate) || !isfinite(v.se) ? VP_OVERFLOW_STREAM_VAR
                                  : !isfinite(u.estimate) || !isfinite(u.se)
                                      ? VP_OVERFLOW_UPDATE_RATIO
                                      : VP_OVERFLOW_EMBEDDING_SHARE;
            profile->n_rows = k;
            break;
        }
        row->stream_var = v.estimate;
        row->stream_var_se = v.se;
        mc_bounds(v, z, &row->stream_var_lo, &row->stream_var_hi);
        row->update_ratio = u.estimate;
        row->update_ratio_se = u.se;
        mc_bounds(u, z, &row->update_ratio_lo, &row->update_ratio_hi);
        row->embedding_share = e.estimate;
        row->embedding_share_se = e.se;
        row->log2_share = log2(e.estimate);
        mc_bounds(e, z, &row->embedding_share_lo, &row->embedding_share_hi);
        /* percentiles of |x|^2 / d, then the root: sqrt(./v0) is increasing, so
           it maps order statistics to order statistics (interpolation aside,
           which is done on the sizes below) */
        memcpy(sizes, xx, n * sizeof *sizes);
        static const double percentiles[3] = {0.05, 0.50, 0.95};
        size_t lhs[3];
        double delta[3], spread[3];
        quantile_indices(n, percentiles, 3, lhs, delta);
        select_order_statistics(sizes, n, lhs, delta, 3);
        for (int q = 0; q < 3; q++) {
            double low = sqrt(sizes[lhs[q]] / v0);
            spread[q] = delta[q] > 0.0
                            ? (1.0 - delta[q]) * low + delta[q] * sqrt(sizes[lhs[q] + 1] / v0)
                            : low;
        }
        row->stream_size_p05 = spread[0];
        row->stream_size_p50 = spread[1];
        row->stream_size_p95 = spread[2];
    }
    free(scratch);
    return VP_OK;
}
