/* How far a normalising placement's share sits above the closed form at a finite width. */
#include "mc/finite_width.h"

#include <math.h>

finite_width_excess finite_width_share_excess(const vp_profile *closed, size_t k, size_t width,
                                              vp_norm norm)
{
    const vp_config *cfg = &closed->config;
    const double scale = cfg->placement == VP_DEEPNORM ? cfg->beta * cfg->beta / cfg->alpha : 1.0;
    const double d = (double)width;
    finite_width_excess out = {0.0, 0.0, scale * closed->rows[1].gain};
    for (size_t j = 1; j <= k; j++) {
        const double u = scale * closed->rows[j].gain, u2 = u * u;
        out.jensen += u2 * (2.0 + u2) / (d * (1.0 + u2) * (1.0 + u2));
        /* from the second sub-block on: (k - 1) u^2 / (2 d (1 + u^2)) at one gain */
        if (norm == VP_NORM_LAYERNORM && j >= 2)
            out.centring += u2 / (2.0 * d * (1.0 + u2));
        if (u != out.gain)
            out.gain = NAN;
    }
    return out;
}
