/* The CSV writer: a profile's rows as CSV. */
#include <csv.h>
#include <math.h>
#include <string.h>

#include "core/row_fields.h"
#include "varprof/csv.h"

static int in_csv(const row_field *field)
{
    return (field->appears & ROW_FIELD_CSV) != 0;
}

size_t vp_csv_column_count(void)
{
    size_t count = 0;
    for (size_t f = 0; f < row_field_table_size; f++)
        count += in_csv(&row_field_table[f]);
    return count;
}

const char *vp_csv_column_name(size_t column)
{
    for (size_t f = 0; f < row_field_table_size; f++)
        if (in_csv(&row_field_table[f]) && column-- == 0)
            return row_field_table[f].name;
    return NULL;
}

/* Text fields go through libcsv's quoting only when they need it, so that
 * the common case stays plain. */
static void text_field(FILE *out, const char *text, int first)
{
    if (!first)
        fputc(',', out);
    if (strpbrk(text, ",\"\r\n"))
        csv_fwrite(out, text, strlen(text));
    else
        fputs(text, out);
}

/* One field of row k; empty where it has no value. */
static void write_cell(FILE *out, const row_field *field, const vp_profile *profile, size_t k,
                       int first)
{
    const int present = row_field_present(field, profile, k);
    if (field->kind == ROW_FIELD_TEXT) {
        text_field(out, present ? row_field_text(field, profile, k) : "", first);
        return;
    }
    if (!first)
        fputc(',', out);
    if (!present)
        return;
    if (field->kind == ROW_FIELD_SIZE) {
        fprintf(out, "%zu", row_field_size(field, profile, k));
        return;
    }
    const double value = row_field_double(field, profile, k);
    // a sampled share of 0 has log2 -inf: empty, as JSON writes null
    if (isfinite(value))
        fprintf(out, "%.17g", value);
}

vp_status vp_csv_write_header(FILE *out)
{
    int first = 1;
    for (size_t f = 0; f < row_field_table_size; f++)
        if (in_csv(&row_field_table[f])) {
            text_field(out, row_field_table[f].name, first);
            first = 0;
        }
    fputc('\n', out);
    return ferror(out) ? VP_EIO : VP_OK;
}

vp_status vp_csv_write_profile(FILE *out, const vp_profile *profile, size_t every)
{
    for (size_t k = 0; k < profile->n_rows; k++) {
        if (!vp_profile_shows_row(profile, k, every))
            continue;
        int first = 1;
        for (size_t f = 0; f < row_field_table_size; f++)
            if (in_csv(&row_field_table[f])) {
                write_cell(out, &row_field_table[f], profile, k, first);
                first = 0;
            }
        fputc('\n', out);
    }
    return ferror(out) ? VP_EIO : VP_OK;
}

vp_status vp_csv_write_page_table(FILE *out, const vp_page_table *table)
{
    for (size_t c = 0; c < table->n_columns; c++)
        text_field(out, table->columns[c].key, c == 0);
    fputc('\n', out);
    for (size_t r = 0; r < table->n_rows; r++) {
        for (size_t c = 0; c < table->n_columns; c++) {
            const vp_cell *cell = vp_page_table_cell(table, r, c);
            if (cell->kind == VP_CELL_TEXT) {
                text_field(out, cell->text, c == 0);
                continue;
            }
            if (c > 0)
                fputc(',', out);
            if (cell->kind == VP_CELL_COUNT)
                fprintf(out, "%zu", cell->count);
            else if (cell->kind == VP_CELL_NUMBER && isfinite(cell->number))
                fprintf(out, "%.17g", cell->number);
        }
        fputc('\n', out);
    }
    return ferror(out) ? VP_EIO : VP_OK;
}
