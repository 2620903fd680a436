/* The closed form fed with a measured profile's own gains: what the
 * idealisation predicts for the very network that was measured. */
#include <math.h>
#include <stdlib.h>

#include "varprof/closed.h"

/* A sub-block's measured gain, |f| / |h| of what the network adds, as the
 * closed form's per-branch g: the placement table says whether DeepNet's
 * init put beta^2 into the branch and how many branches were summed. */
static double closed_gain_of_measured(const vp_config *cfg, double measured)
{
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    const size_t branches = vp_config_branches(cfg);
    double g = measured;
    if (t->branch_beta)
        g /= cfg->beta * cfg->beta;
    if (branches > 1)
        g /= sqrt((double)branches);
    return g;
}

vp_status vp_closed_predict(const vp_profile *measured, vp_profile **out, vp_error *err)
{
    if (!out)
        return vp_fail(err, VP_EINVAL, "no place given for the prediction");
    *out = NULL;
    if (!measured)
        return vp_fail(err, VP_EINVAL, "no measured profile given");
    if (!(measured->fields & VP_HAS_MEASURED))
        return vp_fail(err, VP_EINVAL, "the %s profile has no measured gains to predict from",
                       vp_engine_name(measured->engine));
    vp_config cfg = measured->config;
    cfg.gains = NULL;
    vp_status status = vp_config_check(&cfg, err);
    if (status != VP_OK)
        return status;
    if (measured->n_rows < 2)
        return vp_fail(err, VP_EINVAL,
                       "the measured profile overflowed at once: no gain to "
                       "predict from");
    const size_t k_measured = measured->n_rows - 1, k_total = vp_config_sub_blocks(&cfg);
    double *gains = malloc(k_total * sizeof *gains);
    if (!gains)
        return vp_fail(err, VP_ENOMEM, "no memory for %zu measured gains", k_total);
    /* past an overflow nothing was measured: those sub-blocks add nothing */
    for (size_t k = 1; k <= k_total; k++)
        gains[k - 1] =
            k <= k_measured ? closed_gain_of_measured(&cfg, measured->rows[k].measured_gain) : 0.0;
    cfg.gains = gains;
    cfg.n_gains = k_total;
    cfg.embedding_var = measured->rows[0].stream_var;
    status = vp_closed_profile(&cfg, out, err);
    free(gains);
    return status;
}
