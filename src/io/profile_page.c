/* A profile as a page table: every column the text shows of it, the values
 * read through the row-field table (core/row_fields.h), so that a page
 * shows what the CSV and JSON hold, by the same names. A column appears
 * where the profile carries it, as a text column does; nothing the text
 * shows is left off the page. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/row_fields.h"
#include "varprof/config.h"
#include "varprof/page_table.h"

typedef struct {
    vp_page_column column; /* its key a row-field name */
    unsigned needs;        /* the VP_HAS_* a profile carries it with; 0: always */
    const char *lo, *hi;   /* the row fields of its 95 % interval, or NULL */
} profile_column;

/* In the text's order, --wide's columns included: the sampled engines'
 * figures after the closed form's, the backward half's last. */
static const profile_column profile_columns[] = {
    {{"sub_block", "k", "$k$", 0}, 0, NULL, NULL},
    {{"layer", "layer", "layer", 0}, 0, NULL, NULL},
    {{"part", "part", "part", 0}, 0, NULL, NULL},
    {{"gain", "g_k", "$g_k$", 0}, 0, NULL, NULL},
    {{"stream_var", "v_k", "$v_k$", 0}, 0, "stream_var_lo", "stream_var_hi"},
    {{"stream_size", "sqrt(v_k/v_0)", "$\\sqrt{v_k/v_0}$", 0}, 0, NULL, NULL},
    {{"stream_size_p05", "size p5", "size $p_{5}$", 0}, VP_HAS_PERCENTILES, NULL, NULL},
    {{"stream_size_p50", "size p50", "size $p_{50}$", 0}, VP_HAS_PERCENTILES, NULL, NULL},
    {{"stream_size_p95", "size p95", "size $p_{95}$", 0}, VP_HAS_PERCENTILES, NULL, NULL},
    {{"update_ratio", "u_k", "$u_k$", 0}, 0, "update_ratio_lo", "update_ratio_hi"},
    {{"embedding_share", "e_k", "$e_k$", 0}, 0, "embedding_share_lo", "embedding_share_hi"},
    {{"log2_embedding_share", "log2 e_k", "$\\log_2 e_k$", 0}, 0, NULL, NULL},
    {{"measured_gain", "measured g_k", "measured $g_k$", 0}, VP_HAS_MEASURED, NULL, NULL},
    {{"update_cosine", "cosine", "cosine", 0}, VP_HAS_MEASURED, NULL, NULL},
    {{"stream_norm", "stream norm", "stream norm", 0}, VP_HAS_STREAM_NORM, NULL, NULL},
    {{"grad_var", "G_k", "$G_k$", 0}, VP_HAS_GRAD, "grad_var_lo", "grad_var_hi"},
    {{"grad_size", "sqrt(G_k/G_K)", "$\\sqrt{G_k/G_K}$", 0},
     VP_HAS_GRAD,
     "grad_size_lo",
     "grad_size_hi"},
    {{"weight_grad", "wg_k", "$\\mathrm{wg}_k$", 0},
     VP_HAS_GRAD,
     "weight_grad_lo",
     "weight_grad_hi"},
};

#define N_COLUMNS (sizeof profile_columns / sizeof *profile_columns)

/* A column's row fields: its value's, and its interval's or NULL. */
typedef struct {
    const row_field *value, *lo, *hi;
} column_fields;

static const row_field *field_named(const char *name)
{
    for (size_t f = 0; name && f < row_field_table_size; f++)
        if (strcmp(row_field_table[f].name, name) == 0)
            return &row_field_table[f];
    return NULL;
}

/* Every column's fields; VP_EINVAL for a name the row-field table lacks, so
 * that a misspelt key cannot leave a column empty unnoticed. */
static vp_status find_fields(column_fields *fields)
{
    for (size_t c = 0; c < N_COLUMNS; c++) {
        const profile_column *pc = &profile_columns[c];
        fields[c] =
            (column_fields){field_named(pc->column.key), field_named(pc->lo), field_named(pc->hi)};
        if (!fields[c].value || (pc->lo && (!fields[c].lo || !fields[c].hi)))
            return VP_EINVAL;
    }
    return VP_OK;
}

static void write_caption(const vp_profile *p, vp_page_table *table)
{
    const vp_config *c = &p->config;
    char gain[64];
    if (p->sampling.method == VP_SAMPLING_LOADED) /* no gain set: theirs are measured */
        snprintf(gain, sizeof gain, "weights from a file");
    else if (p->gains_from_file)
        snprintf(gain, sizeof gain, "gains per sub-block from file");
    else
        snprintf(gain, sizeof gain, "gain %.*g", VP_PAGE_SIGNIFICANT, c->gain);
    char *caption = table->caption;
    const size_t size = sizeof table->caption;
    snprintf(caption, size, "%s, %s (%s): %zu layer%s = %zu sub-block%s, %s",
             vp_placement_name(c->placement), vp_engine_title(p->engine),
             vp_placement_formula(c->placement), c->layers, c->layers == 1 ? "" : "s",
             p->sub_blocks, p->sub_blocks == 1 ? "" : "s", gain);
    /* what the intervals come from, as the text's heading says */
    size_t used = strlen(caption);
    if (p->engine == VP_ENGINE_MC)
        snprintf(caption + used, size - used, ", width %zu, %zu tokens", p->sampling.width,
                 p->sampling.trials);
    used = strlen(caption);
    if ((p->fields & VP_HAS_GRAD) && p->sampling.has_loss)
        snprintf(caption + used, size - used, ", loss %s %.*g on the batch",
                 vp_loss_name(p->sampling.loss), VP_PAGE_SIGNIFICANT, p->loss);
}

/* Where the rows stop early, or the gradient does, as the text says it. */
static void write_note(const vp_profile *p, vp_page_table *table)
{
    const size_t at = p->overflow_at;
    if (!at)
        return;
    const int forward = p->engine == VP_ENGINE_FORWARD;
    if (p->overflowed == VP_OVERFLOW_FLOAT_GRAD)
        snprintf(table->note, sizeof table->note,
                 "The gradient goes out of range at sub-block %zu: beyond %.3g, the largest "
                 "float; no gradient figures from sub-block %zu down.",
                 at, (double)FLT_MAX, at);
    else if (p->overflowed == VP_OVERFLOW_GRAD_VAR)
        snprintf(table->note, sizeof table->note,
                 "The gradient variance goes beyond %.3g, the largest double, below the top; "
                 "those figures are left empty.",
                 DBL_MAX);
    else
        snprintf(table->note, sizeof table->note,
                 "The %s goes out of range at sub-block %zu: beyond %.3g, the largest %s, so "
                 "the rows stop at sub-block %zu.",
                 vp_overflow_name(p->overflowed), at, forward ? (double)FLT_MAX : DBL_MAX,
                 forward ? "float" : "double", p->n_rows - 1);
}

/* Cell c of the last row: row k's value, with its half-width where the
 * profile has the interval. */
static vp_status set_cell(vp_page_table *table, size_t c, const column_fields *f,
                          const vp_profile *p, size_t k)
{
    if (!row_field_present(f->value, p, k))
        return VP_OK;
    switch (f->value->kind) {
    case ROW_FIELD_SIZE: vp_page_table_set_count(table, c, row_field_size(f->value, p, k)); break;
    case ROW_FIELD_TEXT: return vp_page_table_set_text(table, c, row_field_text(f->value, p, k));
    case ROW_FIELD_DOUBLE:
        if (f->lo && row_field_present(f->lo, p, k))
            vp_page_table_set_estimate(
                table, c, row_field_double(f->value, p, k),
                (row_field_double(f->hi, p, k) - row_field_double(f->lo, p, k)) / 2.0);
        else
            vp_page_table_set_number(table, c, row_field_double(f->value, p, k));
        break;
    }
    return VP_OK;
}

/* The rows, then only the columns the profile carries. */
static vp_status fill(const vp_profile *profile, size_t every, const column_fields *fields,
                      vp_page_table *table)
{
    for (size_t k = 0; k < profile->n_rows; k++) {
        if (!vp_profile_shows_row(profile, k, every))
            continue;
        vp_status status = vp_page_table_add_row(table);
        for (size_t c = 0; c < N_COLUMNS && status == VP_OK; c++)
            status = set_cell(table, c, &fields[c], profile, k);
        if (status != VP_OK)
            return status;
    }
    size_t keep[N_COLUMNS], n = 0;
    for (size_t c = 0; c < N_COLUMNS; c++)
        if ((profile->fields & profile_columns[c].needs) == profile_columns[c].needs)
            keep[n++] = c;
    return vp_page_table_keep_columns(table, keep, n);
}

vp_status vp_page_table_of_profile(const vp_profile *profile, size_t every, vp_page_table *table)
{
    column_fields fields[N_COLUMNS];
    vp_page_column columns[N_COLUMNS]; /* until fill keeps its own copy */
    for (size_t c = 0; c < N_COLUMNS; c++)
        columns[c] = profile_columns[c].column;
    vp_page_table_init(table, columns, N_COLUMNS);
    write_caption(profile, table);
    write_note(profile, table);
    vp_status status = find_fields(fields);
    if (status == VP_OK)
        status = fill(profile, every, fields, table);
    if (status != VP_OK) {
        vp_page_table_free(table);
        table->columns = NULL; /* the caller's copy is gone */
        table->n_columns = 0;
    }
    return status;
}
