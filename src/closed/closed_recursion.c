/* The recursion of varprof-maths(7), PLACEMENTS, one sub-block at a time. */
#include "varprof/closed.h"

#include <math.h>

#include "core/scaled.h"
#include "core/profile_header.h"

/* One step: from v = v_{k-1} and E = E_{k-1} (the squared embedding
 * component, kept scaled because Post-LN shrinks it geometrically) to
 * v_k, u_k and E_k. */
typedef struct {
    double v;
    scaled_double embedding;
} stream_state;

/* The branch output against the stream it joins, where a norm follows the
 * add: b_k / alpha, with DeepNet's beta on both of the branch's matrices. */
static double branch_to_stream(const vp_config *cfg, const vp_placement_traits *t, double g)
{
    double ratio = t->branch_beta ? cfg->beta * (cfg->beta * g) : g;
    if (t->residual_alpha)
        ratio /= cfg->alpha;
    return ratio;
}

/* The arithmetic follows where the table puts the norms: a norm after the
 * add first (it decides v_k whatever the branch), then a norm on the branch
 * output (it decides the branch's size), then one on its input. */
static double step(const vp_config *cfg, double g, stream_state *s)
{
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    const double v = s->v;
    if (t->norm_stream) {
        const double ratio = branch_to_stream(cfg, t, g);
        s->v = 1.0;
        /* alpha^2 E / (v (alpha^2 + b^2)) = E / (v (1 + (b/alpha)^2)) */
        s->embedding =
            scaled_div(s->embedding, scaled_mul(scaled_from(v), scaled_one_plus_square(ratio)));
        return ratio;
    }
    if (t->norm_out) {
        s->v = v + cfg->gamma * cfg->gamma;
        return cfg->gamma / sqrt(v);
    }
    if (t->norm_in) {
        /* n branches of unit input, each adding g^2 */
        const double n = (double)vp_config_branches(cfg);
        s->v = v + n * g * g;
        return sqrt(n) * g / sqrt(v);
    }
    /* no norm: the branch reads the stream itself */
    s->v = v * (1.0 + g * g);
    return g;
}

static void set_share(vp_row *row, scaled_double embedding, double v)
{
    scaled_double share = scaled_sqrt(scaled_div(embedding, scaled_from(v)));
    row->embedding_share = scaled_to_double(share);
    row->log2_share = scaled_log2(share);
}

vp_status vp_closed_profile(const vp_config *cfg, vp_profile **out, vp_error *err)
{
    *out = NULL;
    vp_status status = vp_config_check(cfg, err);
    if (status != VP_OK)
        return status;
    size_t k_total = vp_config_sub_blocks(cfg);
    vp_profile *profile = vp_profile_alloc(k_total);
    if (!profile)
        return vp_fail(err, VP_ENOMEM, "no memory for %zu sub-blocks", k_total);
    profile_set_header(profile, VP_ENGINE_CLOSED, VP_NORM_ANY, cfg, 0, NULL);

    stream_state s = {cfg->embedding_var, scaled_from(cfg->embedding_var)};
    profile->rows[0] = (vp_row){.stream_var = s.v, .embedding_share = 1.0, .log2_share = 0.0};
    for (size_t k = 1; k <= k_total; k++) {
        vp_row *row = &profile->rows[k];
        row->gain = vp_config_gain(cfg, k);
        row->update_ratio = step(cfg, row->gain, &s);
        row->stream_var = s.v;
        const vp_overflow overflowed = !isfinite(s.v)                 ? VP_OVERFLOW_STREAM_VAR
                                       : !isfinite(row->update_ratio) ? VP_OVERFLOW_UPDATE_RATIO
                                                                      : VP_OVERFLOW_NONE;
        if (overflowed != VP_OVERFLOW_NONE) {
            profile->overflow_at = k;
            profile->overflowed = overflowed;
            profile->n_rows = k;
            break;
        }
        set_share(row, s.embedding, s.v);
    }
    if (cfg->grad) {
        status = vp_closed_grad(profile, 0, VP_NORM_ANY, err);
        if (status != VP_OK) {
            vp_profile_free(profile);
            return status;
        }
    }
    *out = profile;
    return VP_OK;
}
