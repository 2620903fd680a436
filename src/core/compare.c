/* The comparison of two engines' profiles, field by field. */
#include "varprof/compare.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

#include "core/row_fields.h"
#include "core/compare_internal.h"

/* vp_quantity q is the table's q-th compared field: the comparison reads
 * the rows through the same entries the writers do. */
static const row_field *quantity_field(vp_quantity q)
{
    return row_field_compared((size_t)q);
}

const char *vp_quantity_name(vp_quantity q)
{
    const row_field *field = (unsigned)q < VP_Q_COUNT ? quantity_field(q) : NULL;
    return field ? field->compared_as : "";
}

int vp_quantity_is_grad(vp_quantity q)
{
    return q == VP_Q_GRAD_VAR || q == VP_Q_WEIGHT_GRAD;
}

/* Whether both profiles have q at row k as a figure to compare. */
static int compared_at(const vp_profile *closed, const vp_profile *sampled, vp_quantity q, size_t k)
{
    if (!vp_quantity_applies(q, k))
        return 0;
    if (!vp_quantity_is_grad(q))
        return 1;
    if (!(closed->fields & sampled->fields & VP_HAS_GRAD))
        return 0;
    double c, s, se;
    compare_quantity_values(closed, sampled, k, q, &c, &s, &se);
    return isfinite(c) && isfinite(s);
}

int vp_quantity_applies(vp_quantity q, size_t k)
{
    return row_field_applies(quantity_field(q), k);
}

void compare_quantity_values(const vp_profile *closed, const vp_profile *sampled, size_t k,
                             vp_quantity q, double *closed_value, double *sampled_value, double *se)
{
    const row_field *field = quantity_field(q);
    *closed_value = row_field_double(field, closed, k);
    *sampled_value = row_field_double(field, sampled, k);
    *se = row_field_se(field, sampled, k);
}

double compare_se_units(double closed_value, double sampled_value, double se)
{
    const double diff = sampled_value - closed_value;
    if (diff == 0.0)
        return 0.0;
    if (se > 0.0)
        return diff / se;
    return diff > 0.0 ? HUGE_VAL : -HUGE_VAL;
}

/* A norm on the stream divides each token by its own statistics: where the
 * worst disagreement is such a placement's share, the closed form at the
 * sampled width says how far above the limit it should sit. */
static void set_share_excess(const vp_profile *closed, vp_comparison *out)
{
    if (out->disagree == 0 || !vp_placement_traits_of(closed->config.placement)->norm_stream ||
        out->worst_quantity != VP_Q_EMBEDDING_SHARE)
        return;
    out->has_share_excess = vp_closed_share_excess(&out->share_excess, closed, out->worst_k,
                                                   out->width, out->norm) == VP_OK;
}

vp_status vp_compare(const vp_profile *closed, const vp_profile *sampled, double n_se,
                     double rel_floor, vp_comparison *out)
{
    if (closed->config.placement != sampled->config.placement ||
        closed->sub_blocks != sampled->sub_blocks || !(sampled->fields & VP_HAS_BOUNDS))
        return VP_EINVAL;
    *out = (vp_comparison){.n_se = n_se,
                           .rel_floor = rel_floor,
                           .width = sampled->sampling.width,
                           .norm = sampled->norm};
    const size_t rows = closed->n_rows < sampled->n_rows ? closed->n_rows : sampled->n_rows;
    /* each quantity at every row, but a branch's not at sub-block 0; 1 for no rows */
    size_t figures = 0;
    for (size_t k = 0; k < rows; k++)
        for (int q = 0; q < VP_Q_COUNT; q++)
            figures += (size_t)compared_at(closed, sampled, (vp_quantity)q, k);
    out->rows = rows;
    out->family_se = fmax(n_se, gsl_cdf_ugaussian_Qinv(0.025 / (double)(figures ? figures : 1)));
    for (size_t k = 0; k < rows; k++) {
        for (int q = 0; q < VP_Q_COUNT; q++) {
            if (!compared_at(closed, sampled, (vp_quantity)q, k))
                continue;
            double c, s, se;
            compare_quantity_values(closed, sampled, k, (vp_quantity)q, &c, &s, &se);
            const double units = compare_se_units(c, s, se);
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
    set_share_excess(closed, out);
    return VP_OK;
}
