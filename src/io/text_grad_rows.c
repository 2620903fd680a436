/* The backward half in the rows of a sampled or a measured profile: the
 * gradient's size and the branch's weight gradient beside the stream's size
 * in 80 columns (the update ratio and the share left to the rows without
 * --grad and to --wide), every figure with --wide. */
#include <math.h>
#include <stdio.h>

#include "varprof/format.h"
#include "io/text_internal.h"

/* "0.1234 +- 0.002", or "-" where the figure is not the row's. */
static void estimate(char *buf, size_t size, double value, double lo, double hi, int applies)
{
    if (applies)
        snprintf(buf, size, "%.4g +- %.2g", value, (hi - lo) / 2.0);
    else
        snprintf(buf, size, "-");
}

/* A figure with %.4g, or "-" where the backward half could not carry it
 * (NaN: the gradient left float's range above it). */
static void figure(char *buf, size_t size, double value)
{
    if (isnan(value))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.4g", value);
}

static void layer_of(char *buf, size_t size, const vp_profile *p, size_t k)
{
    if (k > 0)
        snprintf(buf, size, "%zu", vp_config_layer_of(&p->config, k));
    else
        snprintf(buf, size, "-");
}

void text_write_grad_sampled_head(FILE *out, vp_text_width width)
{
    if (width == VP_TEXT_FIT_80)
        fprintf(out, "%9s  %5s  %-9s  %11s  %9s  %20s\n", "sub-block", "layer", "part",
                "stream size", "grad size", "weight grad +- 95%");
    else
        fprintf(out, "%9s  %5s  %-9s  %11s  %20s  %20s  %22s  %9s  %20s\n", "sub-block", "layer",
                "part", "stream size", "update +- 95%", "share +- 95%", "grad var +- 95%",
                "grad size", "weight grad +- 95%");
}

void text_write_grad_sampled_row(FILE *out, const vp_profile *p, size_t k, vp_text_width width)
{
    const vp_row *row = &p->rows[k];
    char layer[32], weight[48], update[48], share[48], grad[48];
    layer_of(layer, sizeof layer, p, k);
    estimate(weight, sizeof weight, row->weight_grad, row->weight_grad_lo, row->weight_grad_hi,
             k > 0);
    const char *part = vp_part_name(vp_config_part_of(&p->config, k));
    if (width == VP_TEXT_FIT_80) {
        fprintf(out, "%9zu  %5s  %-9s  %11.4g  %9.4g  %20s\n", k, layer, part,
                vp_profile_stream_size(p, k), vp_profile_grad_size(p, k), weight);
        return;
    }
    estimate(update, sizeof update, row->update_ratio, row->update_ratio_lo, row->update_ratio_hi,
             k > 0);
    estimate(share, sizeof share, row->embedding_share, row->embedding_share_lo,
             row->embedding_share_hi, 1);
    estimate(grad, sizeof grad, row->grad_var, row->grad_var_lo, row->grad_var_hi, 1);
    fprintf(out, "%9zu  %5s  %-9s  %11.4g  %20s  %20s  %22s  %9.4g  %20s\n", k, layer, part,
            vp_profile_stream_size(p, k), update, share, grad, vp_profile_grad_size(p, k), weight);
}

void text_write_grad_measured_head(FILE *out, vp_text_width width)
{
    if (width == VP_TEXT_FIT_80)
        fprintf(out, "%9s  %5s  %-9s  %11s  %11s  %11s  %6s\n", "sub-block", "layer", "part",
                "stream size", "grad size", "weight grad", "gain");
    else
        fprintf(out, "%9s  %5s  %-9s  %11s  %12s  %15s  %11s  %12s  %11s  %11s\n", "sub-block",
                "layer", "part", "stream size", "update ratio", "embedding share", "meas. gain",
                "grad var", "grad size", "weight grad");
}

void text_write_grad_measured_row(FILE *out, const vp_profile *p, size_t k, vp_text_width width)
{
    const vp_row *row = &p->rows[k];
    char layer[32], weight[32] = "-", gain[32] = "-", update[32] = "-", share[64], size[32],
                    var[32];
    layer_of(layer, sizeof layer, p, k);
    figure(size, sizeof size, vp_profile_grad_size(p, k));
    figure(var, sizeof var, row->grad_var);
    if (k > 0) {
        figure(weight, sizeof weight, row->weight_grad);
        snprintf(gain, sizeof gain, "%.4g", row->measured_gain);
        vp_format_percent(update, sizeof update, row->update_ratio);
    }
    const char *part = vp_part_name(vp_config_part_of(&p->config, k));
    if (width == VP_TEXT_FIT_80) {
        fprintf(out, "%9zu  %5s  %-9s  %11.4g  %11s  %11s  %6s\n", k, layer, part,
                vp_profile_stream_size(p, k), size, weight, gain);
        return;
    }
    vp_format_share(share, sizeof share, row->embedding_share, row->log2_share);
    fprintf(out, "%9zu  %5s  %-9s  %11.4g  %12s  %15s  %11s  %12s  %11s  %11s\n", k, layer, part,
            vp_profile_stream_size(p, k), update, share, gain, var, size, weight);
}
