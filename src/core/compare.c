#include "varprof/compare.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

const char *vp_quantity_name(vp_quantity q)
{
    switch (q) {
    case VP_Q_STREAM_VAR: return "stream variance";
    case VP_Q_UPDATE_RATIO: return "update ratio";
    case VP_Q_EMBEDDING_SHARE: return "embedding share";
    case VP_Q_COUNT: break;
    }
    return "";
}

void vp_quantity_values(const vp_profile *closed, const vp_profile *sampled, size_t k,
                        vp_quantity q, double *closed_value, double *sampled_value, double *se)
{
    const vp_row *c = &closed->rows[k], *s = &sampled->rows[k];
    switch (q) {
    case VP_Q_STREAM_VAR:
        *closed_value = c->stream_var;
        *sampled_value = s->stream_var;
        *se = s->stream_var_se;
        return;
    case VP_Q_UPDATE_RATIO:
        *closed_value = c->update_ratio;
        *sampled_value = s->update_ratio;
        *se = s->update_ratio_se;
        return;
    default:
        *closed_value = c->embedding_share;
        *sampled_value = s->embedding_share;
        *se = s->embedding_share_se;
        return;
    }
}

double vp_se_units(double closed_value, double sampled_value, double se)
{
    const double diff = sampled_value - closed_value;
    if (diff == 0.0)
        return 0.0;
    if (se > 0.0)
        return diff / se;
    return diff > 0.0 ? HUGE_VAL : -HUGE_VAL;
}

vp_status vp_compare(const vp_profile *closed, const vp_profile *sampled, double n_se,
                     double rel_floor, vp_comparison *out)
{
    if (closed->config.placement != sampled->config.placement ||
        closed->sub_blocks != sampled->sub_blocks || !(sampled->fields & VP_HAS_BOUNDS))
        return VP_EINVAL;
    *out = (vp_comparison){.n_se = n_se, .rel_floor = rel_floor};
    const size_t rows = closed->n_rows < sampled->n_rows ? closed->n_rows : sampled->n_rows;
    const size_t figures = rows > 0 ? 3 * rows - 1 : 1;
    out->rows = rows;
    out->family_se = fmax(n_se, gsl_cdf_ugaussian_Qinv(0.025 / (double)figures));
    for (size_t k = 0; k < rows; k++) {
        for (int q = 0; q < VP_Q_COUNT; q++) {
            if (k == 0 && q == VP_Q_UPDATE_RATIO)
                continue;
            double c, s, se;
            vp_quantity_values(closed, sampled, k, (vp_quantity)q, &c, &s, &se);
            const double units = vp_se_units(c, s, se);
            const double relative = c != 0.0 ? (s - c) / fabs(c) : (s == 0.0 ? 0.0 : HUGE_VAL);
            out->checked++;
            if (fabs(units) <= n_se || fabs(relative) <= rel_floor)
                continue;
            if (out->beyond++ == 0)
                out->first_k = k;
            if (fabs(units) > out->family_se && out->disagree++ == 0)
                out->first_disagree = k;
            if (out->beyond == 1 || fabs(units) > fabs(out->worst_se_units)) {
                out->worst_quantity = (vp_quantity)q;
                out->worst_k = k;
                out->worst_closed = c;
                out->worst_sampled = s;
                out->worst_se_units = units;
                out->worst_relative = relative;
            }
        }
    }
    return VP_OK;
}
