/* The backward half side by side: the Monte Carlo's gradients against the
 * closed form's, and the forward pass's against its prediction. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "varprof/compare.h"
#include "varprof/text.h"
#include "io/text_columns.h"
#include "io/text_internal.h"

/* A figure of profile p of the table's, one space from the last where
 * tight; a difference in standard errors, beside the figure it is of. */
#define FIGURE(k, h, w, p, t)                                                                      \
    {                                                                                              \
        .key = (k), .head = (h), .width = (w), .cell = TEXT_CELL_NUMBER, .format = "%.5g",         \
        .from = (p), .tight = (t)                                                                  \
    }
#define SE(k, w, kind)                                                                             \
    {                                                                                              \
        .key = (k), .head = "(SE)", .width = (w), .cell = (kind), .from = 1, .tight = 1            \
    }

/* The Monte Carlo's backward half (profile 1) against the closed form's
 * (profile 0): in 80 columns the sampled figure and its difference in
 * standard errors; --wide puts the closed form's before it. */
static const text_column g_s_80 = FIGURE("grad_var", "grad var", 11, 1, 0);
static const text_column g_se_80 = SE("grad_var", 7, TEXT_CELL_SE_80);
static const text_column wg_s_80 = FIGURE("weight_grad", "weight grad", 11, 1, 0);
static const text_column wg_se_80 = SE("weight_grad", 7, TEXT_CELL_SE_80);
static const text_column size_s_80 = FIGURE("grad_size", "grad size", 11, 1, 0);
static const text_column g_c = FIGURE("grad_var", "G closed", 11, 0, 0);
static const text_column g_s = FIGURE("grad_var", "sampled", 11, 1, 1);
static const text_column g_se = SE("grad_var", 6, TEXT_CELL_SE);
static const text_column wg_c = FIGURE("weight_grad", "wgrad cl.", 11, 0, 0);
static const text_column wg_s = FIGURE("weight_grad", "sampled", 11, 1, 1);
static const text_column wg_se = SE("weight_grad", 6, TEXT_CELL_SE);
static const text_column size_c = FIGURE("grad_size", "size closed", 11, 0, 0);
static const text_column size_s = FIGURE("grad_size", "sampled", 11, 1, 1);

static const text_column *const grad_side_by_side_80_columns[] = {
    &text_col_sub_block, &text_col_part, &g_s_80, &g_se_80, &wg_s_80, &wg_se_80, &size_s_80, NULL};
static const text_column *const grad_side_by_side_columns[] = {&text_col_sub_block,
                                                               &text_col_part,
                                                               &g_c,
                                                               &g_s,
                                                               &g_se,
                                                               &wg_c,
                                                               &wg_s,
                                                               &wg_se,
                                                               &size_c,
                                                               &size_s,
                                                               NULL};

/* The forward pass's backward half (profile 1) against its prediction
 * (profile 0): the gradient's size, G where the loss is the random one the
 * prediction's unit gradient stands for, and the weight gradient. */
static const text_column fg_sub_block = {
    .key = "sub_block", .head = "sub-block", .width = 9, .cell = TEXT_CELL_SIZE, .from = 1};
static const text_column fg_part = {
    .key = "part", .head = "part", .width = -9, .cell = TEXT_CELL_TEXT, .from = 1};
static const text_column size_p = FIGURE("grad_size", "size pred.", 10, 0, 0);
static const text_column size_m = FIGURE("grad_size", "measured", 10, 1, 1);
static const text_column g_p = FIGURE("grad_var", "G pred.", 10, 0, 0);
static const text_column g_none = {
    .key = "grad_var", .head = "G pred.", .width = 10, .cell = TEXT_CELL_DASH};
static const text_column g_m = FIGURE("grad_var", "measured", 10, 1, 1);
static const text_column wg_m = FIGURE("weight_grad", "weight grad", 11, 1, 0);
#undef FIGURE
#undef SE

static const text_column *const grad_forward_random_columns[] = {
    &fg_sub_block, &fg_part, &size_p, &size_m, &g_p, &g_m, &wg_m, NULL};
static const text_column *const grad_forward_columns[] = {&fg_sub_block, &fg_part, &size_p, &size_m,
                                                          &g_none,       &g_m,     &wg_m,   NULL};

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

vp_status vp_text_write_grad_side_by_side(FILE *out, const vp_profile *closed,
                                          const vp_profile *sampled, size_t every,
                                          vp_text_width width)
{
    if (!(closed->fields & sampled->fields & VP_HAS_GRAD))
        return VP_OK;
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_grad_side_by_side_title,
                              sampled);
    const vp_profile *const profiles[] = {closed, sampled};
    const size_t rows = closed->n_rows < sampled->n_rows ? closed->n_rows : sampled->n_rows;
    const vp_status status = text_write_table(
        out, width == VP_TEXT_FIT_80 ? grad_side_by_side_80_columns : grad_side_by_side_columns,
        profiles, rows, every);
    if (status != VP_OK)
        return status;
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
            forward->sampling.has_loss ? vp_loss_name(forward->sampling.loss) : "?", forward->loss,
            gradient_source(forward));
}

vp_status vp_text_write_grad_forward_comparison(FILE *out, const vp_profile *predicted,
                                                const vp_profile *forward, size_t every,
                                                vp_text_width width)
{
    if (!(predicted->fields & forward->fields & VP_HAS_GRAD))
        return VP_OK;
    text_write_lines_in_width(out, width, SENTENCE_COMMA_FROM, write_grad_forward_title, forward);
    /* the prediction's G is a unit gradient's at the head: the random loss's */
    const int random_loss =
        forward->sampling.has_loss && vp_loss_traits_of(forward->sampling.loss)->seeded;
    const vp_profile *const profiles[] = {predicted, forward};
    const size_t rows = predicted->n_rows < forward->n_rows ? predicted->n_rows : forward->n_rows;
    const vp_status status =
        text_write_table(out, random_loss ? grad_forward_random_columns : grad_forward_columns,
                         profiles, rows, every);
    if (status != VP_OK)
        return status;
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
