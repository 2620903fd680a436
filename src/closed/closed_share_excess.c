/* How far a normalising placement's share sits above the closed form at a finite width. */
#include <math.h>

#include "varprof/closed.h"

/* What a branch's gain becomes on the stream: the placement table says
 * whether DeepNet's init drew it to beta^2 g and whether it is added to
 * alpha x. */
static double effective_scale(const vp_config *cfg)
{
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    const double beta2 = t->branch_beta ? cfg->beta * cfg->beta : 1.0;
    return beta2 / (t->residual_alpha ? cfg->alpha : 1.0);
}

vp_status vp_closed_share_excess(vp_share_excess *out, const vp_profile *closed, size_t k,
                                 size_t width, vp_norm norm)
{
    if (!out || !closed || k == 0 || k >= closed->n_rows || width == 0)
        return VP_EINVAL;
    const double scale = effective_scale(&closed->config);
    const double d = (double)width;
    vp_share_excess e = {0.0, 0.0, scale * closed->rows[1].gain};
    for (size_t j = 1; j <= k; j++) {
        const double u = scale * closed->rows[j].gain, u2 = u * u;
        e.jensen += u2 * (2.0 + u2) / (d * (1.0 + u2) * (1.0 + u2));
        /* from the second sub-block on: (k - 1) u^2 / (2 d (1 + u^2)) at one gain */
        if (norm == VP_NORM_LAYERNORM && j >= 2)
            e.centring += u2 / (2.0 * d * (1.0 + u2));
        if (u != e.gain)
            e.gain = NAN;
    }
    *out = e;
    return VP_OK;
}
