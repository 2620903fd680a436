/* The backward half side by side: the Monte Carlo's gradients against the
 * closed form's, and the forward pass's against its prediction. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "varprof/compare.h"
#include "varprof/text.h"
#include "core/compare_internal.h"
#include "io/text_internal.h"

/* Where the gradient starts: the loss's, at the head's input, and whether a
 * final norm passes it to the stack. */
static const char *gradient_source(const vp_profile *p)
{
    return vp_config_has_final_norm(&p->config) ? "through a final norm" : "with no final norm";
}

static void write_grad_side_by_side_title(FILE *out, const void *arg)
{
    const vp_profile *sampled = arg;
    fprintf(out,
            "%s: the backward half, a random loss's gradient at the head's input %s; "
            "(SE): the difference from the closed form in standard errors\n",
            vp_placement_name(sampled->config.placement), gradient_source(sampled));
}

/* One figure of the sampled profile and its distance from the closed form's,
 * or both figures with --wide; "-" where the figure is not the row's. */
static void write_grad_figure(FILE *out, const vp_profile *closed, const vp_profile *sampled,
                              size_t k, vp_quantity q, vp_text_width width)
{
    const int narrow = width == VP_TEXT_FIT_80;
    if (!vp_quantity_applies(q, k)) {
        fprintf(out, narrow ? "  %11s %7s" : "  %11s %11s %6s", "-", narrow ? "" : "-", "");
        return;
    }
    double c, s, se;
    char units[16];
    compare_quantity_values(closed, sampled, k, q, &c, &s, &se);
    text_se_units(units, sizeof units, compare_se_units(c, s, se), width);
    if (narrow)
        fprintf(out, "  %11.5g %7s", s, units);
    else
        fprintf(out, "  %11.5g %11.5g %6s", c, s, units);
}

vp_status vp_text_write_grad_side_by_side(FILE *out, const vp_profile *closed,
                                          const vp_profile *sampled, size_t every,
                                          vp_text_width width)
{
    if (!(closed->fields & sampled->fields & VP_HAS_GRAD))
        return VP_OK;
    const int narrow = width == VP_TEXT_FIT_80;
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_grad_side_by_side_title,
                              sampled);
    if (narrow)
        fprintf(out, "%9s  %-9s  %11s %7s  %11s %7s  %11s\n", "sub-block", "part", "grad var",
                "(SE)", "weight grad", "(SE)", "grad size");
    else
        fprintf(out, "%9s  %-9s  %11s %11s %6s  %11s %11s %6s  %11s %11s\n", "sub-block", "part",
                "G closed", "sampled", "(SE)", "wgrad cl.", "sampled", "(SE)", "size closed",
                "sampled");
    const size_t rows = closed->n_rows < sampled->n_rows ? closed->n_rows : sampled->n_rows;
    for (size_t k = 0; k < rows; k++) {
        if (!(k % every == 0 || k + 1 == rows))
            continue;
        fprintf(out, "%9zu  %-9s", k, vp_part_name(vp_config_part_of(&closed->config, k)));
        write_grad_figure(out, closed, sampled, k, VP_Q_GRAD_VAR, width);
        write_grad_figure(out, closed, sampled, k, VP_Q_WEIGHT_GRAD, width);
        if (narrow)
            fprintf(out, "  %11.5g\n", vp_profile_grad_size(sampled, k));
        else
            fprintf(out, "  %11.5g %11.5g\n", vp_profile_grad_size(closed, k),
                    vp_profile_grad_size(sampled, k));
    }
    return ferror(out) ? VP_EIO : VP_OK;
}

static void write_grad_forward_title(FILE *out, const void *arg)
{
    const vp_profile *forward = arg;
    fprintf(out,
            "%s: the forward pass's backward half (loss %s = %.5g on the batch, %s) against "
            "its prediction; the gradient's size is relative to the top, so it compares "
            "whatever the loss\n",
            vp_placement_name(forward->config.placement),
            forward->sampling.loss ? forward->sampling.loss : "?", forward->loss,
            gradient_source(forward));
}

vp_status vp_text_write_grad_forward_comparison(FILE *out, const vp_profile *predicted,
                                                const vp_profile *forward, size_t every,
                                                vp_text_width width)
{
    if (!(predicted->fields & forward->fields & VP_HAS_GRAD))
        return VP_OK;
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_grad_forward_title, forward);
    fprintf(out, "%9s  %-9s  %10s %10s  %10s %10s  %11s\n", "sub-block", "part", "size pred.",
            "measured", "G pred.", "measured", "weight grad");
    const int random_loss = forward->sampling.loss && strcmp(forward->sampling.loss, "random") == 0;
    const size_t rows = predicted->n_rows < forward->n_rows ? predicted->n_rows : forward->n_rows;
    for (size_t k = 0; k < rows; k++) {
        if (!(k % every == 0 || k + 1 == rows))
            continue;
        const vp_row *f = &forward->rows[k];
        fprintf(out, "%9zu  %-9s  %10.5g %10.5g", k,
                vp_part_name(vp_config_part_of(&forward->config, k)),
                vp_profile_grad_size(predicted, k), vp_profile_grad_size(forward, k));
        /* the prediction's G is a unit gradient's at the head: the random loss's */
        if (random_loss)
            fprintf(out, "  %10.5g %10.5g", predicted->rows[k].grad_var, f->grad_var);
        else
            fprintf(out, "  %10s %10.5g", "-", f->grad_var);
        if (k > 0)
            fprintf(out, "  %11.5g\n", f->weight_grad);
        else
            fprintf(out, "  %11s\n", "-");
    }
    return ferror(out) ? VP_EIO : VP_OK;
}

double text_grad_size_gap(const vp_profile *predicted, const vp_profile *forward, size_t *at)
{
    const size_t rows = predicted->n_rows < forward->n_rows ? predicted->n_rows : forward->n_rows;
    double widest = 0.0;
    *at = 0;
    for (size_t k = 0; k < rows; k++) {
        const double want = vp_profile_grad_size(predicted, k);
        const double gap = want != 0.0 ? vp_profile_grad_size(forward, k) / want - 1.0 : 0.0;
        if (fabs(gap) > fabs(widest)) {
            widest = gap;
            *at = k;
        }
    }
    return widest;
}
