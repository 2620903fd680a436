/* A profile as a page table: the text table's columns, the values read
 * through the row-field table (core/row_fields.h), so that a page shows what
 * the CSV and JSON hold, by the same names. */
#include <string.h>

#include "core/row_fields.h"
#include "varprof/config.h"
#include "varprof/page_table.h"

/* The text table's choice of columns: a page has room for these, not the
 * CSV's 25. Keys are row-field names. */
static const vp_page_column profile_columns[] = {
    {"sub_block", "k", "$k$", 0},
    {"layer", "layer", "layer", 0},
    {"part", "part", "part", 0},
    {"gain", "g_k", "$g_k$", 0},
    {"stream_var", "v_k", "$v_k$", 0},
    {"stream_size", "sqrt(v_k/v_0)", "$\\sqrt{v_k/v_0}$", 0},
    {"update_ratio", "u_k", "$u_k$", 0},
    {"embedding_share", "e_k", "$e_k$", 0},
    {"log2_embedding_share", "log2 e_k", "$\\log_2 e_k$", 0},
};

#define N_COLUMNS (sizeof profile_columns / sizeof *profile_columns)

static const row_field *field_named(const char *name)
{
    for (size_t f = 0; f < row_field_table_size; f++)
        if (strcmp(row_field_table[f].name, name) == 0)
            return &row_field_table[f];
    return NULL;
}

static void write_caption(const vp_profile *p, vp_page_table *table)
{
    const vp_config *c = &p->config;
    char gain[64];
    if (p->gains_from_file)
        snprintf(gain, sizeof gain, "gains per sub-block from file");
    else
        snprintf(gain, sizeof gain, "gain %.*g", VP_PAGE_SIGNIFICANT, c->gain);
    snprintf(table->caption, sizeof table->caption,
             "%s, %s (%s): %zu layer%s = %zu sub-block%s, %s", vp_placement_name(c->placement),
             vp_engine_title(p->engine), vp_placement_formula(c->placement), c->layers,
             c->layers == 1 ? "" : "s", p->sub_blocks, p->sub_blocks == 1 ? "" : "s", gain);
}

vp_status vp_page_table_of_profile(const vp_profile *profile, size_t every, vp_page_table *table)
{
    vp_page_table_init(table, profile_columns, N_COLUMNS);
    write_caption(profile, table);
    const row_field *fields[N_COLUMNS];
    for (size_t c = 0; c < N_COLUMNS; c++)
        fields[c] = field_named(profile_columns[c].key);
    for (size_t k = 0; k < profile->n_rows; k++) {
        if (!vp_profile_shows_row(profile, k, every))
            continue;
        if (vp_page_table_add_row(table) != VP_OK) {
            vp_page_table_free(table);
            return VP_ENOMEM;
        }
        for (size_t c = 0; c < N_COLUMNS; c++) {
            const row_field *field = fields[c];
            if (!field || !row_field_present(field, profile, k))
                continue;
            if (field->kind == ROW_FIELD_SIZE) {
                vp_page_table_set_count(table, c, row_field_size(field, profile, k));
            } else if (field->kind == ROW_FIELD_DOUBLE) {
                vp_page_table_set_number(table, c, row_field_double(field, profile, k));
            } else if (vp_page_table_set_text(table, c, row_field_text(field, profile, k)) !=
                       VP_OK) {
                vp_page_table_free(table);
                return VP_ENOMEM;
            }
        }
    }
    return VP_OK;
}
