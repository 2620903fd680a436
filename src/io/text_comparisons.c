/* The comparisons side by side: the Monte Carlo against the closed form,
 * and the forward pass against its prediction and the closed form. */
#include <math.h>
#include <stdio.h>

#include "varprof/compare.h"
#include "varprof/text.h"
#include "io/text_columns.h"
#include "io/text_internal.h"

/* A figure of profile p of the table's, one space from the last where
 * tight; a difference in standard errors, beside the figure it is of. */
#define FIGURE(k, h, w, f, p, t)                                                                   \
    {                                                                                              \
        .key = (k), .head = (h), .width = (w), .cell = TEXT_CELL_NUMBER, .format = (f),            \
        .from = (p), .tight = (t)                                                                  \
    }
#define SE(k, w, kind)                                                                             \
    {                                                                                              \
        .key = (k), .head = "(SE)", .width = (w), .cell = (kind), .from = 1, .tight = 1            \
    }

/* The side by side's columns: the sampled figure (profile 1) and its
 * difference from the closed form's (profile 0) in standard errors; --wide
 * puts the closed form's before it. */
static const text_column var_s_80 = FIGURE("stream_var", "stream var", 10, "%.5g", 1, 0);
static const text_column var_se_80 = SE("stream_var", 7, TEXT_CELL_SE_80);
static const text_column upd_s_80 = FIGURE("update_ratio", "update", 10, "%.5g", 1, 0);
static const text_column upd_se_80 = SE("update_ratio", 7, TEXT_CELL_SE_80);
static const text_column emb_s_80 = FIGURE("embedding_share", "emb. share", 10, "%.5g", 1, 0);
static const text_column emb_se_80 = SE("embedding_share", 7, TEXT_CELL_SE_80);
static const text_column var_c = FIGURE("stream_var", "var closed", 11, "%.5g", 0, 0);
static const text_column var_s = FIGURE("stream_var", "sampled", 11, "%.5g", 1, 1);
static const text_column var_se = SE("stream_var", 6, TEXT_CELL_SE);
static const text_column upd_c = FIGURE("update_ratio", "upd closed", 11, "%.5g", 0, 0);
static const text_column upd_s = FIGURE("update_ratio", "sampled", 11, "%.5g", 1, 1);
static const text_column upd_se = SE("update_ratio", 6, TEXT_CELL_SE);
static const text_column emb_c = FIGURE("embedding_share", "emb closed", 11, "%.5g", 0, 0);
static const text_column emb_s = FIGURE("embedding_share", "sampled", 11, "%.5g", 1, 1);
static const text_column emb_se = SE("embedding_share", 6, TEXT_CELL_SE);

static const text_column *const side_by_side_80_columns[] = {
    &text_col_sub_block, &text_col_part, &var_s_80,  &var_se_80, &upd_s_80,
    &upd_se_80,          &emb_s_80,      &emb_se_80, NULL};
static const text_column *const side_by_side_wide_columns[] = {&text_col_sub_block,
                                                               &text_col_part,
                                                               &var_c,
                                                               &var_s,
                                                               &var_se,
                                                               &upd_c,
                                                               &upd_s,
                                                               &upd_se,
                                                               &emb_c,
                                                               &emb_s,
                                                               &emb_se,
                                                               NULL};

/* The forward comparison's: the closed form at the configured gain (profile
 * 0), the prediction at the measured gains (1) and the measurement (2); in
 * 80 columns the last two alone. */
static const text_column fw_sub_block = {
    .key = "sub_block", .head = "sub-block", .width = 9, .cell = TEXT_CELL_SIZE, .from = 2};
static const text_column fw_part_80 = {
    .key = "part", .head = "part", .width = -9, .cell = TEXT_CELL_TEXT, .from = 2};
static const text_column fw_part = {
    .key = "part", .head = "part", .width = -6, .cell = TEXT_CELL_TEXT, .from = 2};
static const text_column var_p_80 = FIGURE("stream_var", "var pred.", 9, "%.5g", 1, 0);
static const text_column var_m_80 = FIGURE("stream_var", "measured", 9, "%.5g", 2, 1);
static const text_column upd_p_80 = FIGURE("update_ratio", "upd pred", 8, "%.4g", 1, 0);
static const text_column upd_m_80 = FIGURE("update_ratio", "meas.", 8, "%.4g", 2, 1);
static const text_column emb_p_80 = FIGURE("embedding_share", "emb pred", 8, "%.4g", 1, 0);
static const text_column emb_m_80 = FIGURE("embedding_share", "meas.", 8, "%.4g", 2, 1);
static const text_column fw_gain = FIGURE("measured_gain", "gain", 8, "%.4g", 2, 1);
static const text_column fw_cosine = FIGURE("update_cosine", "cosine", 7, "%+.3f", 2, 1);
static const text_column var_cl = FIGURE("stream_var", "var closed", 10, "%.5g", 0, 0);
static const text_column var_p = FIGURE("stream_var", "predicted", 10, "%.5g", 1, 1);
static const text_column var_m = FIGURE("stream_var", "measured", 10, "%.5g", 2, 1);
static const text_column upd_cl = FIGURE("update_ratio", "upd cl.", 8, "%.4g", 0, 0);
static const text_column upd_p = FIGURE("update_ratio", "pred.", 8, "%.4g", 1, 1);
static const text_column upd_m = FIGURE("update_ratio", "meas.", 8, "%.4g", 2, 1);
static const text_column emb_cl = FIGURE("embedding_share", "emb cl.", 9, "%.4g", 0, 0);
static const text_column emb_p = FIGURE("embedding_share", "pred.", 9, "%.4g", 1, 1);
static const text_column emb_m = FIGURE("embedding_share", "meas.", 9, "%.4g", 2, 1);
#undef FIGURE
#undef SE

static const text_column *const forward_80_columns[] = {&fw_sub_block, &fw_part_80, &var_p_80,
                                                        &var_m_80,     &upd_p_80,   &upd_m_80,
                                                        &emb_p_80,     &emb_m_80,   NULL};
static const text_column *const forward_wide_columns[] = {
    &fw_sub_block, &fw_part, &fw_gain, &fw_cosine, &var_cl, &var_p, &var_m,
    &upd_cl,       &upd_p,   &upd_m,   &emb_cl,    &emb_p,  &emb_m, NULL};

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
    const comparison_title title = {sampled, width};
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_side_by_side_title, &title);
    const vp_profile *const profiles[] = {closed, sampled};
    const size_t rows = closed->n_rows < sampled->n_rows ? closed->n_rows : sampled->n_rows;
    const vp_status status = text_write_table(
        out, width == VP_TEXT_FIT_80 ? side_by_side_80_columns : side_by_side_wide_columns,
        profiles, rows, every);
    if (status != VP_OK)
        return status;
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
    const comparison_title title = {forward, width};
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_forward_title, &title);
    const vp_profile *const profiles[] = {closed, predicted, forward};
    const vp_status status =
        text_write_table(out, width == VP_TEXT_FIT_80 ? forward_80_columns : forward_wide_columns,
                         profiles, forward->n_rows, every);
    if (status != VP_OK)
        return status;
    return ferror(out) ? VP_EIO : VP_OK;
}
