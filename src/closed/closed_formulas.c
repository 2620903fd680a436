/* The constant-gain formulas of the maths table, evaluated directly at the
 * top of the stack (v_0 = 1). Kept apart from the recursion so that each
 * checks the other. */
#include <math.h>

#include "varprof/closed.h"

/* e = (1 + x^2)^(-n/2), through its log2 so that 2^-1000000 stays finite */
static void shrinking_share(vp_closed_top *top, double x, double n)
{
    double log2_base = x < 0x1p500 ? log2(1.0 + x * x) : 2.0 * log2(x);
    top->log2_share = -0.5 * n * log2_base;
    top->embedding_share = exp2(top->log2_share);
}

/* v = 1 + n c^2, e = v^(-1/2), u = sqrt(c^2 / (1 + (n-1) c^2)) */
static void growing_stream(vp_closed_top *top, double c_squared, double n)
{
    top->stream_var = 1.0 + n * c_squared;
    top->update_ratio = sqrt(c_squared) / sqrt(1.0 + (n - 1.0) * c_squared);
    top->embedding_share = 1.0 / sqrt(top->stream_var);
    top->log2_share = -0.5 * log2(top->stream_var);
}

vp_status vp_closed_form_top(const vp_config *cfg, vp_closed_top *out, vp_error *err)
{
    vp_config plain = *cfg;
    plain.gains = NULL;
    vp_status status = vp_config_check(&plain, err);
    if (status != VP_OK)
        return status;
    const double g = cfg->gain;
    const size_t k_total = vp_config_sub_blocks(cfg);
    const double n = (double)k_total;
    vp_closed_top top = {.sub_blocks = k_total};
    /* which formula is where the table puts the norms, as in the recursion */
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    if (t->norm_stream) {
        double ratio = t->branch_beta ? cfg->beta * cfg->beta * g : g;
        if (t->residual_alpha)
            ratio /= cfg->alpha;
        top.stream_var = 1.0;
        top.update_ratio = ratio;
        shrinking_share(&top, ratio, n);
    } else if (t->norm_out) {
        growing_stream(&top, cfg->gamma * cfg->gamma, n);
    } else if (t->norm_in) {
        growing_stream(&top, (double)vp_config_branches(cfg) * g * g, n);
    } else {
        top.stream_var = pow(1.0 + g * g, n);
        top.update_ratio = g;
        shrinking_share(&top, g, n);
    }
    *out = top;
    return VP_OK;
}
