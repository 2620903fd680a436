/* The text writer: a profile as aligned columns in 80 columns. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "varprof/compare.h"
#include "varprof/format.h"
#include "varprof/text.h"
#include "varprof/version.h"
#include "core/compare_internal.h"
#include "core/profile_header.h"
#include "forward/network.h"
#include "io/text_internal.h"
#include "mc/mc_internal.h"
#include "mc/finite_width.h"

/* Writes each line of text, those longer than 80 columns broken after
 * their last ", " that fits, or at their last space that does where no
 * comma lies from column comma_from on (a comma early in the line leaves
 * it ragged; 0: commas alone, a line without one left whole), the rest
 * indented by two spaces more than the line. */
static void write_fitted(FILE *out, const char *text, size_t comma_from)
{
    while (*text) {
        size_t length = strcspn(text, "\n");
        const char *line = text;
        const int indent = 2 + (int)strspn(line, " ");
        size_t column = 0;
        while (column + length > 80) {
            size_t cut = 0, space = 0;
            for (size_t i = 0; i + 1 < length && column + i + 1 <= 80; i++) {
                if (line[i] == ',' && line[i + 1] == ' ')
                    cut = i + 1;
                if (line[i + 1] == ' ')
                    space = i + 1;
            }
            if (column + cut < comma_from)
                cut = space > cut ? space : cut;
            if (cut == 0)
                break;
            fprintf(out, "%.*s\n%*s", (int)cut, line, indent, "");
            line += cut + 1;
            length -= cut + 1;
            column = (size_t)indent;
        }
        fprintf(out, "%.*s\n", (int)length, line);
        text = line + length + (line[length] == '\n');
    }
}

void text_write_lines_in_width(FILE *out, vp_text_width width, size_t comma_from, text_lines lines,
                               const void *arg)
{
    char *text = NULL;
    size_t size = 0;
    FILE *memory = width == VP_TEXT_FIT_80 ? open_memstream(&text, &size) : NULL;
    if (!memory) {
        lines(out, arg);
        return;
    }
    lines(memory, arg);
    if (fclose(memory) == 0)
        write_fitted(out, text, comma_from);
    else /* no memory for the text: unbroken lines rather than none */
        lines(out, arg);
    free(text);
}

static void write_heading_text(FILE *out, const void *profile)
{
    text_write_heading_lines(out, profile);
}

static void write_heading(FILE *out, const vp_profile *p, vp_text_width width)
{
    text_write_lines_in_width(out, width, 0, write_heading_text, p); /* at commas only */
}

/* A closed-form row with the backward half: in 80 columns the stream's size
 * beside the gradient's and the branch's weight gradient, the update ratio
 * and the share left to --wide; wide, every figure. */
static void write_grad_row(FILE *out, const vp_profile *p, size_t k, vp_text_width width)
{
    const vp_row *row = &p->rows[k];
    char layer[32] = "-", gain[32] = "-", update[32] = "-", weight[32] = "-", share[64];
    if (k > 0) {
        snprintf(layer, sizeof layer, "%zu", vp_config_layer_of(&p->config, k));
        snprintf(gain, sizeof gain, "%.4g", row->gain);
        vp_format_percent(update, sizeof update, row->update_ratio);
        snprintf(weight, sizeof weight, "%.4g", row->weight_grad);
    }
    const char *part = vp_part_name(vp_config_part_of(&p->config, k));
    if (width == VP_TEXT_FIT_80) {
        fprintf(out, "%9zu  %5s  %-9s  %6s  %11.4g  %11.4g  %11s\n", k, layer, part, gain,
                vp_profile_stream_size(p, k), vp_profile_grad_size(p, k), weight);
        return;
    }
    vp_format_share(share, sizeof share, row->embedding_share, row->log2_share);
    fprintf(out, "%9zu  %7s  %-9s  %9s  %12.6g  %11.4g  %12s  %18s  %12.6g  %11.4g  %11s\n", k,
            layer, part, gain, row->stream_var, vp_profile_stream_size(p, k), update, share,
            row->grad_var, vp_profile_grad_size(p, k), weight);
}

static void write_row(FILE *out, const vp_profile *p, size_t k, vp_text_width width)
{
    const vp_row *row = &p->rows[k];
    char layer[32] = "-", gain[32] = "-", update[32] = "-", share[64];
    if (k > 0) {
        snprintf(layer, sizeof layer, "%zu", vp_config_layer_of(&p->config, k));
        snprintf(gain, sizeof gain, "%.6g", row->gain);
        vp_format_percent(update, sizeof update, row->update_ratio);
    }
    vp_format_share(share, sizeof share, row->embedding_share, row->log2_share);
    const char *part = vp_part_name(vp_config_part_of(&p->config, k));
    if (width == VP_TEXT_FIT_80) { /* the stream variance is the size squared times v_0 */
        if (strlen(share) > 15 && row->embedding_share > 0.0) /* the power of two aside */
            vp_format_percent(share, sizeof share, row->embedding_share);
        if (k > 0)
            snprintf(gain, sizeof gain, "%.4g", row->gain);
        fprintf(out, "%9zu  %5s  %-9s  %6s  %11.4g  %12s  %15s\n", k, layer, part, gain,
                vp_profile_stream_size(p, k), update, share);
        return;
    }
    fprintf(out, "%9zu  %7s  %-9s  %9s  %12.6g  %11.4g  %12s  %18s\n", k, layer, part, gain,
            row->stream_var, vp_profile_stream_size(p, k), update, share);
}

/* An estimate and its 95 % half-width: 4 and 2 significant digits, or in 80
 * columns 3 and 1, so that the longest, "2.63e-10 +- 3e-12", fits its 18. */
static void write_estimate(char *buf, size_t size, double value, double half, vp_text_width width)
{
    if (width == VP_TEXT_FIT_80)
        snprintf(buf, size, "%.3g +- %.1g", value, half);
    else
        snprintf(buf, size, "%.4g +- %.2g", value, half);
}

/* A sampled row: each estimate with its 95 % half-width, and the spread of
 * the per-token stream size. */
static void write_sampled_row(FILE *out, const vp_profile *p, size_t k, vp_text_width width)
{
    const vp_row *row = &p->rows[k];
    char layer[32] = "-", update[48] = "-", share[48], var[48], spread[64];
    if (k > 0) {
        snprintf(layer, sizeof layer, "%zu", vp_config_layer_of(&p->config, k));
        write_estimate(update, sizeof update, row->update_ratio,
                       (row->update_ratio_hi - row->update_ratio_lo) / 2.0, width);
    }
    snprintf(var, sizeof var, "%.5g +- %.2g", row->stream_var,
             (row->stream_var_hi - row->stream_var_lo) / 2.0);
    write_estimate(share, sizeof share, row->embedding_share,
                   (row->embedding_share_hi - row->embedding_share_lo) / 2.0, width);
    snprintf(spread, sizeof spread, "%.4g %.4g %.4g", row->stream_size_p05, row->stream_size_p50,
             row->stream_size_p95);
    const char *part = vp_part_name(vp_config_part_of(&p->config, k));
    if (width == VP_TEXT_FIT_80)
        fprintf(out, "%9zu  %5s  %-9s  %11.4g  %18s  %18s\n", k, layer, part,
                vp_profile_stream_size(p, k), update, share);
    else
        fprintf(out, "%9zu  %5s  %-9s  %20s  %11.4g  %22s  %20s  %20s\n", k, layer, part, var,
                vp_profile_stream_size(p, k), spread, update, share);
}

/* A measured row: the three quantities, the branch's gain, the cosine of the
 * update with the stream, and the batch's stream norm. */
static void write_measured_row(FILE *out, const vp_profile *p, size_t k, vp_text_width width)
{
    const vp_row *row = &p->rows[k];
    char layer[32] = "-", update[32] = "-", share[64], gain[32] = "-", cosine[32] = "-";
    if (k > 0) {
        snprintf(layer, sizeof layer, "%zu", vp_config_layer_of(&p->config, k));
        vp_format_percent(update, sizeof update, row->update_ratio);
        snprintf(gain, sizeof gain, "%.4g", row->measured_gain);
        snprintf(cosine, sizeof cosine, "%+.3f", row->update_cosine);
    }
    vp_format_share(share, sizeof share, row->embedding_share, row->log2_share);
    const char *part = vp_part_name(vp_config_part_of(&p->config, k));
    if (width == VP_TEXT_FIT_80)
        fprintf(out, "%9zu  %5s  %-9s  %11.4g  %12s  %15s  %6s\n", k, layer, part,
                vp_profile_stream_size(p, k), update, share, gain);
    else
        fprintf(out, "%9zu  %5s  %-9s  %12.6g  %11.4g  %12s  %15s  %11s  %8s  %12.6g\n", k, layer,
                part, row->stream_var, vp_profile_stream_size(p, k), update, share, gain, cosine,
                row->stream_norm);
}

static void write_overflow(FILE *out, const vp_profile *p)
{
    if (p->overflowed == VP_OVERFLOW_FLOAT_GRAD) { /* the forward rows are whole */
        fprintf(out,
                "\nThe gradient goes out of range at sub-block %zu (layer %zu, %s): beyond "
                "%.3g, the largest float, so the backward half stops there: no gradient "
                "figures from sub-block %zu down.\n",
                p->overflow_at, vp_config_layer_of(&p->config, p->overflow_at),
                vp_part_name(vp_config_part_of(&p->config, p->overflow_at)), (double)FLT_MAX,
                p->overflow_at);
        return;
    }
    /* the forward pass runs in float: its limit is float's */
    const int forward = p->engine == VP_ENGINE_FORWARD;
    fprintf(out,
            "\nThe %s goes out of range at sub-block %zu (layer %zu, %s): beyond %.3g, the "
            "largest %s, so the rows stop at sub-block %zu.\n",
            vp_overflow_name(p->overflowed), p->overflow_at,
            vp_config_layer_of(&p->config, p->overflow_at),
            vp_part_name(vp_config_part_of(&p->config, p->overflow_at)),
            forward ? (double)FLT_MAX : DBL_MAX, forward ? "float" : "double", p->n_rows - 1);
}

/* The backward half's summary: the gradient at the embedding against the
 * top's, and the weight gradients of the first and last branches. */
static void write_grad_top(FILE *out, const vp_profile *p)
{
    if (!(p->fields & VP_HAS_GRAD) || p->n_rows < 2)
        return;
    const size_t top = p->n_rows - 1;
    if (p->overflowed == VP_OVERFLOW_FLOAT_GRAD) { /* no figure at the embedding */
        fprintf(out, "  gradient          beyond float from sub-block %zu down\n", p->overflow_at);
        if (p->sampling.loss)
            fprintf(out, "  loss              %s, %.6g on the batch\n", p->sampling.loss, p->loss);
        return;
    }
    fprintf(out,
            "  gradient size     %.4g x the top's at the embedding (variance "
            "%.6g)\n",
            vp_profile_grad_size(p, 0), p->rows[0].grad_var);
    fprintf(out, "  weight gradient   %.4g at sub-block 1, %.4g at sub-block %zu\n",
            p->rows[1].weight_grad, p->rows[top].weight_grad, top);
    if (p->overflowed == VP_OVERFLOW_GRAD_VAR)
        fprintf(out,
                "  (the gradient variance goes beyond %.3g below the top; those figures "
                "are inf)\n",
                DBL_MAX);
    if (p->sampling.loss) /* the forward pass's: a loss on its batch */
        fprintf(out, "  loss              %s, %.6g on the batch\n", p->sampling.loss, p->loss);
    /* what the backward held: every activation, and the weights or not */
    if (p->sampling.loss && p->sampling.kept_bytes > 0.0)
        fprintf(out, "  backward held     %s (%.3g GiB)%s; %s\n",
                p->sampling.recomputed ? "inputs" : "every activation",
                p->sampling.kept_bytes / 1073741824.0,
                p->sampling.recomputed ? ", rest recomputed" : "",
                p->sampling.weights_drawn ? "weights drawn again" : "weights stored");
}

static void write_top(FILE *out, const vp_profile_top *top)
{
    char update[32] = "-", share[64];
    if (top->sub_block > 0)
        vp_format_percent(update, sizeof update, top->update_ratio);
    vp_format_share(share, sizeof share, top->embedding_share, top->log2_share);
    fprintf(out, "\n%s of the stack, after sub-block %zu:\n",
            top->overflow_at && top->overflowed != VP_OVERFLOW_FLOAT_GRAD ? "Last finite row"
                                                                          : "Top",
            top->sub_block);
    fprintf(out, "  stream size       %.4g x the embedding's (stream variance %.6g)\n",
            top->stream_size, top->stream_var);
    fprintf(out, "  last update ratio %s of the stream it is added to\n", update);
    /* a ratio of RMS, not of variance: 12.4 % here is 1.5 % of the variance */
    fprintf(out, "  embedding share   %s of the stream (RMS)\n", share);
}

vp_status vp_text_write_heading(FILE *out, vp_engine engine, const vp_config *cfg,
                                const vp_mc_options *mc, const vp_forward_options *forward,
                                vp_text_width width)
{
    vp_profile header = {0}; /* what the engine will say of its profile, without rows */
    if (engine == VP_ENGINE_MC && mc)
        mc_set_header(&header, cfg, mc);
    else if (engine == VP_ENGINE_FORWARD && forward)
        fw_set_header(&header, cfg, forward);
    else if (engine == VP_ENGINE_CLOSED)
        profile_set_header(&header, VP_ENGINE_CLOSED, VP_NORM_ANY, cfg, 0, NULL);
    else
        return VP_EINVAL;
    header.sub_blocks = vp_config_sub_blocks(cfg);
    write_heading(out, &header, width);
    return ferror(out) ? VP_EIO : VP_OK;
}

vp_status vp_text_write_profile(FILE *out, const vp_profile *profile, size_t every)
{
    write_heading(out, profile, VP_TEXT_WIDE);
    return vp_text_write_rows(out, profile, every, VP_TEXT_WIDE);
}

vp_status vp_text_write_rows(FILE *out, const vp_profile *profile, size_t every,
                             vp_text_width width)
{
    const int narrow = width == VP_TEXT_FIT_80;
    const int sampled = (profile->fields & VP_HAS_BOUNDS) != 0;
    const int measured = (profile->fields & VP_HAS_MEASURED) != 0;
    const int grad = (profile->fields & VP_HAS_GRAD) != 0;
    if (measured) {
        if (grad)
            text_write_grad_measured_head(out, width);
        else if (narrow) /* gain: the measured one, as no other is in this profile */
            fprintf(out, "%9s  %5s  %-9s  %11s  %12s  %15s  %6s\n", "sub-block", "layer", "part",
                    "stream size", "update ratio", "embedding share", "gain");
        else
            fprintf(out, "%9s  %5s  %-9s  %12s  %11s  %12s  %15s  %11s  %8s  %12s\n", "sub-block",
                    "layer", "part", "stream var", "stream size", "update ratio", "embedding share",
                    "meas. gain", "cosine", "stream norm");
        for (size_t k = 0; k < profile->n_rows; k++)
            if (vp_profile_shows_row(profile, k, every)) {
                if (grad)
                    text_write_grad_measured_row(out, profile, k, width);
                else
                    write_measured_row(out, profile, k, width);
            }
        if (profile->overflow_at)
            write_overflow(out, profile);
        const vp_profile_top top = vp_profile_get_top(profile);
        write_top(out, &top);
        write_grad_top(out, profile);
        return ferror(out) ? VP_EIO : VP_OK;
    }
    if (sampled && grad)
        text_write_grad_sampled_head(out, width);
    else if (sampled && narrow)
        fprintf(out, "%9s  %5s  %-9s  %11s  %18s  %18s\n", "sub-block", "layer", "part",
                "stream size", "update +- 95%", "share +- 95%");
    else if (sampled)
        fprintf(out, "%9s  %5s  %-9s  %20s  %11s  %22s  %20s  %20s\n", "sub-block", "layer", "part",
                "stream var +- 95%", "stream size", "size p5 p50 p95", "update ratio",
                "embedding share");
    else if (grad && narrow)
        fprintf(out, "%9s  %5s  %-9s  %6s  %11s  %11s  %11s\n", "sub-block", "layer", "part",
                "gain", "stream size", "grad size", "weight grad");
    else if (grad)
        fprintf(out, "%9s  %7s  %-9s  %9s  %12s  %11s  %12s  %18s  %12s  %11s  %11s\n", "sub-block",
                "layer", "part", "gain", "stream var", "stream size", "update ratio",
                "embedding share", "grad var", "grad size", "weight grad");
    else if (narrow)
        fprintf(out, "%9s  %5s  %-9s  %6s  %11s  %12s  %15s\n", "sub-block", "layer", "part",
                "gain", "stream size", "update ratio", "embedding share");
    else
        fprintf(out, "%9s  %7s  %-9s  %9s  %12s  %11s  %12s  %18s\n", "sub-block", "layer", "part",
                "gain", "stream var", "stream size", "update ratio", "embedding share");
    for (size_t k = 0; k < profile->n_rows; k++)
        if (vp_profile_shows_row(profile, k, every)) {
            if (sampled && grad)
                text_write_grad_sampled_row(out, profile, k, width);
            else if (sampled)
                write_sampled_row(out, profile, k, width);
            else if (grad)
                write_grad_row(out, profile, k, width);
            else
                write_row(out, profile, k, width);
        }
    if (profile->overflow_at)
        write_overflow(out, profile);
    const vp_profile_top top = vp_profile_get_top(profile);
    write_top(out, &top);
    write_grad_top(out, profile);
    return ferror(out) ? VP_EIO : VP_OK;
}

vp_status vp_text_write_comparison(FILE *out, const vp_profile_top *tops, size_t count)
{
    fprintf(out, "\nThe top of each stack:\n");
    fprintf(out, "%-12s  %-7s  %10s  %11s  %12s  %18s\n", "placement", "engine", "sub-blocks",
            "stream size", "last update", "embedding share");
    for (size_t i = 0; i < count; i++) {
        const vp_profile_top *t = &tops[i];
        char update[32] = "-", share[64];
        if (t->sub_block > 0)
            vp_format_percent(update, sizeof update, t->update_ratio);
        vp_format_share(share, sizeof share, t->embedding_share, t->log2_share);
        fprintf(out, "%-12s  %-7s  %10zu  %11.4g  %12s  %18s", vp_placement_name(t->placement),
                vp_engine_name(t->engine), t->sub_blocks, t->stream_size, update, share);
        if (t->overflow_at)
            fprintf(out, "  (%s overflows at sub-block %zu)", vp_overflow_name(t->overflowed),
                    t->overflow_at);
        fputc('\n', out);
    }
    return ferror(out) ? VP_EIO : VP_OK;
}

void text_se_units(char *buf, size_t size, double units, vp_text_width width)
{
    if (isinf(units))
        snprintf(buf, size, "%s", units > 0 ? "+inf" : "-inf");
    else if (width == VP_TEXT_FIT_80 && fabs(units) >= 1000.0)
        snprintf(buf, size, "%+.0f", units);
    else
        snprintf(buf, size, "%+.1f", units);
}

/* What a comparison's title is written from: the profile held against the
 * closed form, and the layout its rows take. */
typedef struct {
    const vp_profile *profile;
    vp_text_width width;
} comparison_title;

/* The side-by-side's title: the sampled engine and how it sampled. */
static void write_side_by_side_title(FILE *out, const void *arg)
{
    const comparison_title *title = arg;
    const vp_profile *sampled = title->profile;
    const vp_sampling *s = &sampled->sampling;
    const char *placement = vp_placement_name(sampled->config.placement);
    if (title->width == VP_TEXT_FIT_80) /* the sampled figures alone */
        fprintf(out,
                "%s: %s (%s method, width %zu, %zu tokens, seed %llu)\n(SE): the difference "
                "from the closed form in standard errors (--wide: both)\n",
                placement, vp_engine_title(sampled->engine), vp_sampling_method_name(s->method),
                s->width, s->trials, s->seed);
    else
        fprintf(out,
                "%s: closed form against %s (%s method, width %zu, %zu tokens, seed %llu); "
                "(SE): the difference in standard errors\n",
                placement, vp_engine_title(sampled->engine), vp_sampling_method_name(s->method),
                s->width, s->trials, s->seed);
}

vp_status vp_text_write_side_by_side(FILE *out, const vp_profile *closed, const vp_profile *sampled,
                                     size_t every, vp_text_width width)
{
    const int narrow = width == VP_TEXT_FIT_80;
    const comparison_title title = {sampled, width};
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_side_by_side_title, &title);
    if (narrow) /* 80 columns: the sampled figure and its distance from the closed form's */
        fprintf(out, "%9s  %-9s  %10s %7s  %10s %7s  %10s %7s\n", "sub-block", "part", "stream var",
                "(SE)", "update", "(SE)", "emb. share", "(SE)");
    else
        fprintf(out, "%9s  %-9s  %11s %11s %6s  %11s %11s %6s  %11s %11s %6s\n", "sub-block",
                "part", "var closed", "sampled", "(SE)", "upd closed", "sampled", "(SE)",
                "emb closed", "sampled", "(SE)");
    const size_t rows = closed->n_rows < sampled->n_rows ? closed->n_rows : sampled->n_rows;
    for (size_t k = 0; k < rows; k++) {
        if (!(k % every == 0 || k + 1 == rows))
            continue;
        fprintf(out, "%9zu  %-9s", k, vp_part_name(vp_config_part_of(&closed->config, k)));
        for (int q = 0; q < VP_Q_GRAD_VAR; q++) {
            if (!vp_quantity_applies((vp_quantity)q, k)) {
                if (narrow)
                    fprintf(out, "  %10s %7s", "-", "");
                else
                    fprintf(out, "  %11s %11s %6s", "-", "-", "");
                continue;
            }
            double c, s, se;
            char units[16];
            compare_quantity_values(closed, sampled, k, (vp_quantity)q, &c, &s, &se);
            text_se_units(units, sizeof units, compare_se_units(c, s, se), width);
            if (narrow)
                fprintf(out, "  %10.5g %7s", s, units);
            else
                fprintf(out, "  %11.5g %11.5g %6s", c, s, units);
        }
        fputc('\n', out);
    }
    return ferror(out) ? VP_EIO : VP_OK;
}

/* The "why" of a normalising placement's higher share: the first-order
 * excess for this width, sub-block, norm and gain (DeepNorm's effective
 * beta^2 g / alpha), as varprof-maths(7) derives it. */
static void write_finite_width_why(FILE *out, const vp_profile *closed, const vp_comparison *cmp)
{
    const size_t k = cmp->worst_k;
    const finite_width_excess e = finite_width_share_excess(closed, k, cmp->width, cmp->norm);
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
        /* a norm on the stream divides each token by its own statistics */
        if (vp_placement_traits_of(closed->config.placement)->norm_stream &&
            cmp->worst_quantity == VP_Q_EMBEDDING_SHARE && cmp->worst_k >= 1 && cmp->width)
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

/* The forward comparison's title and the network it ran. */
static void write_forward_title(FILE *out, const void *arg)
{
    const comparison_title *title = arg;
    const vp_profile *forward = title->profile;
    /* loaded weights configure no gain: that closed form is the default's */
    const char *configured = forward->sampling.method == VP_SAMPLING_LOADED
                                 ? "the defaults (gain 1, v_0 = 1)"
                                 : "the configured gain";
    if (title->width == VP_TEXT_FIT_80) /* no closed form at the configured gain */
        fprintf(out,
                "%s: the forward pass against the closed form at its measured gains\n(its "
                "prediction); --wide adds the gains, the cosines and the closed form at %s\n",
                vp_placement_name(forward->config.placement), configured);
    else
        fprintf(out,
                "%s: the forward pass measured, against the closed form at %s and at the "
                "measured gains (its prediction)\n",
                vp_placement_name(forward->config.placement), configured);
    text_write_network(out, forward);
}

vp_status vp_text_write_forward_comparison(FILE *out, const vp_profile *closed,
                                           const vp_profile *predicted, const vp_profile *forward,
                                           size_t every, vp_text_width width)
{
    const int narrow = width == VP_TEXT_FIT_80;
    const comparison_title title = {forward, width};
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_forward_title, &title);
    if (narrow) { /* 80 columns: the prediction and the measurement */
        fprintf(out, "%9s  %-9s  %9s %9s  %8s %8s  %8s %8s\n", "sub-block", "part", "var pred.",
                "measured", "upd pred", "meas.", "emb pred", "meas.");
        for (size_t k = 0; k < forward->n_rows; k++) {
            if (!(k % every == 0 || k + 1 == forward->n_rows))
                continue;
            const vp_row *p = k < predicted->n_rows ? &predicted->rows[k] : NULL;
            const vp_row *f = &forward->rows[k];
            fprintf(out, "%9zu  %-9s  %9.5g %9.5g", k,
                    vp_part_name(vp_config_part_of(&forward->config, k)), p ? p->stream_var : NAN,
                    f->stream_var);
            if (k > 0)
                fprintf(out, "  %8.4g %8.4g", p ? p->update_ratio : NAN, f->update_ratio);
            else
                fprintf(out, "  %8s %8s", "-", "-");
            fprintf(out, "  %8.4g %8.4g\n", p ? p->embedding_share : NAN, f->embedding_share);
        }
        return ferror(out) ? VP_EIO : VP_OK;
    }
    fprintf(out, "%9s  %-6s %8s %7s  %10s %10s %10s  %8s %8s %8s  %9s %9s %9s\n", "sub-block",
            "part", "gain", "cosine", "var closed", "predicted", "measured", "upd cl.", "pred.",
            "meas.", "emb cl.", "pred.", "meas.");
    const size_t rows = forward->n_rows;
    for (size_t k = 0; k < rows; k++) {
        if (!(k % every == 0 || k + 1 == rows))
            continue;
        const vp_row *c = k < closed->n_rows ? &closed->rows[k] : NULL;
        const vp_row *p = k < predicted->n_rows ? &predicted->rows[k] : NULL;
        const vp_row *f = &forward->rows[k];
        fprintf(out, "%9zu  %-6s", k, vp_part_name(vp_config_part_of(&forward->config, k)));
        if (k > 0)
            fprintf(out, " %8.4g %+7.3f", f->measured_gain, f->update_cosine);
        else
            fprintf(out, " %8s %7s", "-", "-");
        fprintf(out, "  %10.5g %10.5g %10.5g", c ? c->stream_var : NAN, p ? p->stream_var : NAN,
                f->stream_var);
        if (k > 0)
            fprintf(out, "  %8.4g %8.4g %8.4g", c ? c->update_ratio : NAN,
                    p ? p->update_ratio : NAN, f->update_ratio);
        else
            fprintf(out, "  %8s %8s %8s", "-", "-", "-");
        fprintf(out, "  %9.4g %9.4g %9.4g\n", c ? c->embedding_share : NAN,
                p ? p->embedding_share : NAN, f->embedding_share);
    }
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
