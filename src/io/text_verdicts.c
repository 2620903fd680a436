/* The verdicts: whether a sampled profile agrees with the closed form and
 * why a normalising one sits above it, and how far the forward pass parts
 * from its prediction. */
#include <math.h>
#include <stdio.h>

#include "varprof/compare.h"
#include "varprof/text.h"
#include "io/text_internal.h"

/* The "why" of a normalising placement's higher share: the first-order
 * excess for this width, sub-block, norm and gain (DeepNorm's effective
 * beta^2 g / alpha), as varprof-maths(7) derives it. */
static void write_finite_width_why(FILE *out, const vp_profile *closed, const vp_comparison *cmp)
{
    const size_t k = cmp->worst_k;
    const vp_share_excess e = cmp->share_excess;
    const int one_gain = !isnan(e.gain);
    const int deepnorm = closed->config.placement == VP_DEEPNORM;
    fprintf(out,
            "  why: the closed form is the infinite-width limit; at width %zu each token's norm "
            "divides by its own statistics, which raises the mean share at sub-block %zu "
            "(Jensen) by about %s = %+.3g %%",
            cmp->width, k,
            one_gain ? "k g^2 (2 + g^2) / (d (1 + g^2)^2)"
                     : "the sum over its sub-blocks of g^2 (2 + g^2) / (d (1 + g^2)^2)",
            100.0 * e.jensen);
    if (one_gain && deepnorm)
        fprintf(out, " with g = beta^2 g / alpha = %.3g, DeepNorm's effective gain", e.gain);
    else if (one_gain)
        fprintf(out, " with g = %g", e.gain);
    else
        fprintf(out, " (g each sub-block's gain%s)", deepnorm ? " times beta^2 / alpha" : "");
    if (cmp->norm == VP_NORM_LAYERNORM)
        fprintf(out, ", and LayerNorm's centring by about %s = %+.3g %% more: %+.3g %% in all",
                one_gain ? "(k - 1) g^2 / (2 d (1 + g^2))"
                         : "the sum from sub-block 2 of g^2 / (2 d (1 + g^2))",
                100.0 * e.centring, 100.0 * (e.jensen + e.centring));
    fputc('\n', out);
}

/* What a verdict is written from, handed through a void pointer (so
 * cppcheck sees the members never read). */
typedef struct {
    const vp_profile *closed; // cppcheck-suppress unusedStructMember ; read via void *
    const vp_comparison *cmp; // cppcheck-suppress unusedStructMember ; read via void *
} verdict_of;

static void write_verdict_lines(FILE *out, const void *arg)
{
    const vp_profile *closed = ((const verdict_of *)arg)->closed;
    const vp_comparison *cmp = ((const verdict_of *)arg)->cmp;
    const char *name = vp_placement_name(closed->config.placement);
    char units[16];
    text_se_units(units, sizeof units, cmp->worst_se_units, VP_TEXT_WIDE);
    if (cmp->beyond == 0) {
        fprintf(out,
                "%s: agrees within %g standard errors (or %.2g relative) at all %zu "
                "sub-blocks\n",
                name, cmp->n_se, cmp->rel_floor, cmp->rows - 1);
    } else if (cmp->disagree == 0) {
        fprintf(out,
                "%s: agrees: %zu of %zu figures lie beyond %g standard errors, the most "
                "%s at sub-block %zu (%s), within the %.2f that chance allows the largest "
                "of %zu (5 %%, Bonferroni)\n",
                name, cmp->beyond, cmp->checked, cmp->n_se, vp_quantity_name(cmp->worst_quantity),
                cmp->worst_k, units, cmp->family_se, cmp->checked);
    } else {
        fprintf(out,
                "%s: differs at %zu of %zu figures (beyond %.2f standard errors, what "
                "chance allows), from sub-block %zu; most at sub-block %zu, %s %.5g "
                "against %.5g closed (%+.3g %%, %s standard errors)\n",
                name, cmp->disagree, cmp->checked, cmp->family_se, cmp->first_disagree,
                cmp->worst_k, vp_quantity_name(cmp->worst_quantity), cmp->worst_sampled,
                cmp->worst_closed, 100.0 * cmp->worst_relative, units);
        if (cmp->has_share_excess) /* a norm on the stream: why the share sits higher */
            write_finite_width_why(out, closed, cmp);
    }
}

vp_status vp_text_write_verdict(FILE *out, const vp_profile *closed, const vp_comparison *cmp,
                                vp_text_width width)
{
    const verdict_of verdict = {closed, cmp};
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_verdict_lines, &verdict);
    return ferror(out) ? VP_EIO : VP_OK;
}

/* The largest relative gap between predicted and measured, and where. */
static double widest_gap(const vp_profile *predicted, const vp_profile *forward, vp_quantity q,
                         size_t *at)
{
    const size_t rows = predicted->n_rows < forward->n_rows ? predicted->n_rows : forward->n_rows;
    double widest = 0.0;
    *at = 0;
    for (size_t k = q == VP_Q_UPDATE_RATIO ? 1 : 0; k < rows; k++) {
        const vp_row *p = &predicted->rows[k], *f = &forward->rows[k];
        const double want = q == VP_Q_STREAM_VAR     ? p->stream_var
                            : q == VP_Q_UPDATE_RATIO ? p->update_ratio
                                                     : p->embedding_share;
        const double got = q == VP_Q_STREAM_VAR     ? f->stream_var
                           : q == VP_Q_UPDATE_RATIO ? f->update_ratio
                                                    : f->embedding_share;
        const double gap = want != 0.0 ? (got - want) / want : 0.0;
        if (fabs(gap) > fabs(widest)) {
            widest = gap;
            *at = k;
        }
    }
    return widest;
}

static void write_forward_verdict_lines(FILE *out, const void *profiles)
{
    const vp_profile *predicted = ((const vp_profile *const *)profiles)[0];
    const vp_profile *forward = ((const vp_profile *const *)profiles)[1];
    size_t at_v, at_u, at_e;
    const double v = widest_gap(predicted, forward, VP_Q_STREAM_VAR, &at_v);
    const double u = widest_gap(predicted, forward, VP_Q_UPDATE_RATIO, &at_u);
    const double e = widest_gap(predicted, forward, VP_Q_EMBEDDING_SHARE, &at_e);
    double cosine = 0.0;
    for (size_t k = 1; k < forward->n_rows; k++)
        cosine += forward->rows[k].update_cosine;
    cosine /= forward->n_rows > 1 ? (double)(forward->n_rows - 1) : 1.0;
    char gaps[3][64];
    const double gap[3] = {v, u, e};
    const size_t at[3] = {at_v, at_u, at_e};
    for (int q = 0; q < 3; q++)
        if (gap[q] == 0.0)
            snprintf(gaps[q], sizeof gaps[q], "0 %% (exactly)");
        else
            snprintf(gaps[q], sizeof gaps[q], "%+.3g %% (sub-block %zu)", 100.0 * gap[q], at[q]);
    fprintf(out,
            "%s: parts from its prediction by at most %s in stream variance, %s in update "
            "ratio, %s in embedding share; mean update-stream cosine %+.3f (the idealisation "
            "assumes 0)",
            vp_placement_name(forward->config.placement), gaps[0], gaps[1], gaps[2], cosine);
    if (predicted->fields & forward->fields & VP_HAS_GRAD) {
        size_t at_g;
        const double g = text_grad_size_gap(predicted, forward, &at_g);
        fprintf(out, "; its gradient's size, by at most %+.3g %% (sub-block %zu)", 100.0 * g, at_g);
    }
    fputc('\n', out);
}

vp_status vp_text_write_forward_verdict(FILE *out, const vp_profile *predicted,
                                        const vp_profile *forward, vp_text_width width)
{
    const vp_profile *both[] = {predicted, forward};
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_forward_verdict_lines, both);
    return ferror(out) ? VP_EIO : VP_OK;
}
