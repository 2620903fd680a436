/* A profile's rows as text tables, one layout per kind of profile and width,
 * and the summaries under them: where the rows stop, and the stack's top. */
#include <float.h>
#include <stdio.h>

#include "varprof/format.h"
#include "varprof/text.h"
#include "io/text_columns.h"
#include "io/text_internal.h"

/* Every column the profile tables show, each defined once: its row field
 * (and those it reads WITH it), head, width, cell and format. A figure
 * shows fewer digits in 80 columns. */
#define COLUMN(k, h, w, c, f)                                                                      \
    {                                                                                              \
        .key = (k), .head = (h), .width = (w), .cell = (c), .format = (f)                          \
    }
#define WITH(k, a, b, h, w, c, f)                                                                  \
    {                                                                                              \
        .key = (k), .also = {(a), (b)}, .head = (h), .width = (w), .cell = (c), .format = (f)      \
    }
static const text_column col_layer = COLUMN("layer", "layer", 5, TEXT_CELL_SIZE, NULL);
static const text_column col_layer_7 = COLUMN("layer", "layer", 7, TEXT_CELL_SIZE, NULL);
static const text_column col_gain_80 = COLUMN("gain", "gain", 6, TEXT_CELL_NUMBER, "%.4g");
static const text_column col_gain = COLUMN("gain", "gain", 9, TEXT_CELL_NUMBER, "%.6g");
static const text_column col_gain_4 = COLUMN("gain", "gain", 9, TEXT_CELL_NUMBER, "%.4g");
static const text_column col_stream_var =
    COLUMN("stream_var", "stream var", 12, TEXT_CELL_NUMBER, "%.6g");
static const text_column col_stream_size =
    COLUMN("stream_size", "stream size", 11, TEXT_CELL_NUMBER, "%.4g");
static const text_column col_update =
    COLUMN("update_ratio", "update ratio", 12, TEXT_CELL_PERCENT, NULL);
/* the share with its power of two; in 80 columns, that left off where long */
static const text_column col_share_80 = WITH("embedding_share", "log2_embedding_share", NULL,
                                             "embedding share", 15, TEXT_CELL_SHARE_80, NULL);
static const text_column col_share = WITH("embedding_share", "log2_embedding_share", NULL,
                                          "embedding share", 18, TEXT_CELL_SHARE, NULL);
static const text_column col_share_15 = WITH("embedding_share", "log2_embedding_share", NULL,
                                             "embedding share", 15, TEXT_CELL_SHARE, NULL);
static const text_column col_grad_var =
    COLUMN("grad_var", "grad var", 12, TEXT_CELL_NUMBER, "%.6g");
static const text_column col_grad_size =
    COLUMN("grad_size", "grad size", 11, TEXT_CELL_NUMBER, "%.4g");
static const text_column col_weight_grad =
    COLUMN("weight_grad", "weight grad", 11, TEXT_CELL_NUMBER, "%.4g");

/* The Monte Carlo's: each estimate with its 95 % half-width, in 80 columns
 * to 3 and 1 significant digits so that the longest, "2.63e-10 +- 3e-12",
 * fits its 18; and the spread of the per-token stream size. */
static const text_column col_stream_var_95 =
    WITH("stream_var", "stream_var_lo", "stream_var_hi", "stream var +- 95%", 20,
         TEXT_CELL_ESTIMATE, "%.5g +- %.2g");
static const text_column col_spread =
    WITH("stream_size_p50", "stream_size_p05", "stream_size_p95", "size p5 p50 p95", 22,
         TEXT_CELL_SPREAD, "%.4g %.4g %.4g");
static const text_column col_update_95_80 =
    WITH("update_ratio", "update_ratio_lo", "update_ratio_hi", "update +- 95%", 18,
         TEXT_CELL_ESTIMATE, "%.3g +- %.1g");
static const text_column col_share_95_80 =
    WITH("embedding_share", "embedding_share_lo", "embedding_share_hi", "share +- 95%", 18,
         TEXT_CELL_ESTIMATE, "%.3g +- %.1g");
static const text_column col_update_95 =
    WITH("update_ratio", "update_ratio_lo", "update_ratio_hi", "update ratio", 20,
         TEXT_CELL_ESTIMATE, "%.4g +- %.2g");
static const text_column col_share_95 =
    WITH("embedding_share", "embedding_share_lo", "embedding_share_hi", "embedding share", 20,
         TEXT_CELL_ESTIMATE, "%.4g +- %.2g");
/* beside the gradient's, under shorter heads */
static const text_column col_update_95_grad =
    WITH("update_ratio", "update_ratio_lo", "update_ratio_hi", "update +- 95%", 20,
         TEXT_CELL_ESTIMATE, "%.4g +- %.2g");
static const text_column col_share_95_grad =
    WITH("embedding_share", "embedding_share_lo", "embedding_share_hi", "share +- 95%", 20,
         TEXT_CELL_ESTIMATE, "%.4g +- %.2g");
static const text_column col_grad_var_95 =
    WITH("grad_var", "grad_var_lo", "grad_var_hi", "grad var +- 95%", 22, TEXT_CELL_ESTIMATE,
         "%.4g +- %.2g");
static const text_column col_grad_size_9 =
    COLUMN("grad_size", "grad size", 9, TEXT_CELL_NUMBER, "%.4g");
static const text_column col_weight_grad_95 =
    WITH("weight_grad", "weight_grad_lo", "weight_grad_hi", "weight grad +- 95%", 20,
         TEXT_CELL_ESTIMATE, "%.4g +- %.2g");

/* The forward pass's: the branch's measured gain, the cosine of the update
 * with the stream, the batch's stream norm; a gradient figure is "-" where
 * the gradient left float's range above it. */
static const text_column col_measured_gain_80 =
    COLUMN("measured_gain", "gain", 6, TEXT_CELL_NUMBER, "%.4g");
static const text_column col_measured_gain =
    COLUMN("measured_gain", "meas. gain", 11, TEXT_CELL_NUMBER, "%.4g");
static const text_column col_cosine =
    COLUMN("update_cosine", "cosine", 8, TEXT_CELL_NUMBER, "%+.3f");
static const text_column col_stream_norm =
    COLUMN("stream_norm", "stream norm", 12, TEXT_CELL_NUMBER, "%.6g");
static const text_column col_grad_var_f =
    COLUMN("grad_var", "grad var", 12, TEXT_CELL_FIGURE, "%.4g");
static const text_column col_grad_size_f =
    COLUMN("grad_size", "grad size", 11, TEXT_CELL_FIGURE, "%.4g");
static const text_column col_weight_grad_f =
    COLUMN("weight_grad", "weight grad", 11, TEXT_CELL_FIGURE, "%.4g");
#undef COLUMN
#undef WITH

/* The layouts: in 80 columns the stream's size and what the profile adds
 * (its gradient, its gain), the rest left to --wide; wide, every figure. */
static const text_column *const closed_80[] = {
    &text_col_sub_block, &col_layer,  &text_col_part, &col_gain_80,
    &col_stream_size,    &col_update, &col_share_80,  NULL};
static const text_column *const closed_wide[] = {
    &text_col_sub_block, &col_layer_7, &text_col_part, &col_gain, &col_stream_var,
    &col_stream_size,    &col_update,  &col_share,     NULL};
static const text_column *const closed_grad_80[] = {
    &text_col_sub_block, &col_layer,     &text_col_part,   &col_gain_80,
    &col_stream_size,    &col_grad_size, &col_weight_grad, NULL};
static const text_column *const closed_grad_wide[] = {
    &text_col_sub_block, &col_layer_7,     &text_col_part,   &col_gain_4,
    &col_stream_var,     &col_stream_size, &col_update,      &col_share,
    &col_grad_var,       &col_grad_size,   &col_weight_grad, NULL};
static const text_column *const sampled_80[] = {
    &text_col_sub_block, &col_layer, &text_col_part, &col_stream_size, &col_update_95_80,
    &col_share_95_80,    NULL};
static const text_column *const sampled_wide[] = {
    &text_col_sub_block, &col_layer,       &text_col_part,
    &col_stream_var_95,  &col_stream_size, &col_spread,
    &col_update_95,      &col_share_95,    NULL};
static const text_column *const sampled_grad_80[] = {
    &text_col_sub_block, &col_layer, &text_col_part, &col_stream_size, &col_grad_size_9,
    &col_weight_grad_95, NULL};
static const text_column *const sampled_grad_wide[] = {&text_col_sub_block, &col_layer,
                                                       &text_col_part,      &col_stream_size,
                                                       &col_update_95_grad, &col_share_95_grad,
                                                       &col_grad_var_95,    &col_grad_size_9,
                                                       &col_weight_grad_95, NULL};
static const text_column *const measured_80[] = {&text_col_sub_block,   &col_layer,  &text_col_part,
                                                 &col_stream_size,      &col_update, &col_share_15,
                                                 &col_measured_gain_80, NULL};
static const text_column *const measured_wide[] = {&text_col_sub_block,
                                                   &col_layer,
                                                   &text_col_part,
                                                   &col_stream_var,
                                                   &col_stream_size,
                                                   &col_update,
                                                   &col_share_15,
                                                   &col_measured_gain,
                                                   &col_cosine,
                                                   &col_stream_norm,
                                                   NULL};
static const text_column *const measured_grad_80[] = {
    &text_col_sub_block, &col_layer,         &text_col_part,        &col_stream_size,
    &col_grad_size_f,    &col_weight_grad_f, &col_measured_gain_80, NULL};
static const text_column *const measured_grad_wide[] = {&text_col_sub_block,
                                                        &col_layer,
                                                        &text_col_part,
                                                        &col_stream_size,
                                                        &col_update,
                                                        &col_share_15,
                                                        &col_measured_gain,
                                                        &col_grad_var_f,
                                                        &col_grad_size_f,
                                                        &col_weight_grad_f,
                                                        NULL};

/* [kind][narrow]: the kind 0 closed, 1 sampled (VP_HAS_BOUNDS), 2 measured
 * (VP_HAS_MEASURED), plus 3 with the backward half (VP_HAS_GRAD). */
static const text_column *const *const layouts[6][2] = {
    {closed_wide, closed_80},
    {sampled_wide, sampled_80},
    {measured_wide, measured_80},
    {closed_grad_wide, closed_grad_80},
    {sampled_grad_wide, sampled_grad_80},
    {measured_grad_wide, measured_grad_80},
};

static const text_column *const *layout_of(const vp_profile *p, vp_text_width width)
{
    const int kind = (p->fields & VP_HAS_MEASURED) ? 2 : (p->fields & VP_HAS_BOUNDS) ? 1 : 0;
    const int grad = (p->fields & VP_HAS_GRAD) != 0;
    return layouts[kind + 3 * grad][width == VP_TEXT_FIT_80];
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
        if (p->sampling.has_loss)
            fprintf(out, "  loss              %s, %.6g on the batch\n",
                    vp_loss_name(p->sampling.loss), p->loss);
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
    if (p->sampling.has_loss) /* the forward pass's: a loss on its batch */
        fprintf(out, "  loss              %s, %.6g on the batch\n", vp_loss_name(p->sampling.loss),
                p->loss);
    /* what the backward held: every activation, and the weights or not */
    if (p->sampling.has_loss && p->sampling.kept_bytes > 0.0)
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

vp_status vp_text_write_rows(FILE *out, const vp_profile *profile, size_t every,
                             vp_text_width width)
{
    const vp_status status =
        text_write_table(out, layout_of(profile, width), &profile, profile->n_rows, every);
    if (status != VP_OK)
        return status;
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
