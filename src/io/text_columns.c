/* The text tables written from their column lists: heads and cells, one definition each. */
#include "io/text_columns.h"

#include <math.h>
#include <string.h>

#include "varprof/format.h"
#include "core/compare_internal.h"
#include "core/row_fields.h"
#include "io/text_internal.h"

/* The most columns a table has. */
#define MAX_COLUMNS 16

const text_column text_col_sub_block = {
    .key = "sub_block", .head = "sub-block", .width = 9, .cell = TEXT_CELL_SIZE};
const text_column text_col_part = {
    .key = "part", .head = "part", .width = -9, .cell = TEXT_CELL_TEXT};

/* A column's row fields, found once for the whole table. */
typedef struct {
    const row_field *value, *also[2];
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
static vp_status find_fields(const text_column *const *columns, size_t count, column_fields *fields)
{
    for (size_t c = 0; c < count; c++) {
        const text_column *col = columns[c];
        fields[c].value = field_named(col->key);
        if (!fields[c].value)
            return VP_EINVAL;
        for (int i = 0; i < 2; i++) {
            fields[c].also[i] = field_named(col->also[i]);
            if (col->also[i] && !fields[c].also[i])
                return VP_EINVAL;
        }
    }
    return VP_OK;
}

/* A number's cell: its value in the column's format, or its difference
 * from the first profile's in standard errors. */
static void format_number(char *buf, size_t size, const text_column *col, const column_fields *f,
                          const vp_profile *const *profiles, size_t k)
{
    const vp_profile *p = profiles[col->from];
    const int has = k < p->n_rows;
    const double v = has ? row_field_double(f->value, p, k) : NAN;
    const double a = has && f->also[0] ? row_field_double(f->also[0], p, k) : 0.0;
    const double b = has && f->also[1] ? row_field_double(f->also[1], p, k) : 0.0;
    switch (col->cell) {
    case TEXT_CELL_FIGURE:
        if (isnan(v)) {
            snprintf(buf, size, "-");
            break;
        }
        /* fall through */
    case TEXT_CELL_NUMBER: snprintf(buf, size, col->format, v); break;
    case TEXT_CELL_ESTIMATE: snprintf(buf, size, col->format, v, (b - a) / 2.0); break;
    case TEXT_CELL_SPREAD: snprintf(buf, size, col->format, a, v, b); break;
    case TEXT_CELL_PERCENT: vp_format_percent(buf, size, v); break;
    case TEXT_CELL_SHARE_80:
        vp_format_share(buf, size, v, a);
        if (strlen(buf) > 15 && v > 0.0) /* the power of two aside */
            vp_format_percent(buf, size, v);
        break;
    case TEXT_CELL_SE:
    case TEXT_CELL_SE_80: {
        const double units = compare_se_units(row_field_double(f->value, profiles[0], k), v,
                                              row_field_se(f->value, p, k));
        text_se_units(buf, size, units,
                      col->cell == TEXT_CELL_SE_80 ? VP_TEXT_FIT_80 : VP_TEXT_WIDE);
        break;
    }
    default: /* TEXT_CELL_SHARE */ vp_format_share(buf, size, v, a); break;
    }
}

/* The cell of one column at row k, into buf. */
static void format_cell(char *buf, size_t size, const text_column *col, const column_fields *f,
                        const vp_profile *const *profiles, size_t k)
{
    const int se = col->cell == TEXT_CELL_SE || col->cell == TEXT_CELL_SE_80;
    if (!row_field_applies(f->value, k) || col->cell == TEXT_CELL_DASH)
        snprintf(buf, size, "%s", se ? "" : "-");
    else if (col->cell == TEXT_CELL_SIZE)
        snprintf(buf, size, "%zu", row_field_size(f->value, profiles[col->from], k));
    else if (col->cell == TEXT_CELL_TEXT)
        snprintf(buf, size, "%s", row_field_text(f->value, profiles[col->from], k));
    else
        format_number(buf, size, col, f, profiles, k);
}

/* One line: each cell padded to its column's width, two spaces apart (one
 * where tight). */
static void write_line(FILE *out, const text_column *const *columns, size_t count,
                       const char *const *cells)
{
    for (size_t c = 0; c < count; c++)
        fprintf(out, "%s%*s",
                c == 0              ? ""
                : columns[c]->tight ? " "
                                    : "  ",
                columns[c]->width, cells[c]);
    fputc('\n', out);
}

vp_status text_write_table(FILE *out, const text_column *const *columns,
                           const vp_profile *const *profiles, size_t rows, size_t every)
{
    size_t count = 0;
    while (count <= MAX_COLUMNS && columns[count])
        count++;
    column_fields fields[MAX_COLUMNS];
    if (count > MAX_COLUMNS || find_fields(columns, count, fields) != VP_OK)
        return VP_EINVAL;
    const char *cells[MAX_COLUMNS];
    for (size_t c = 0; c < count; c++)
        cells[c] = columns[c]->head;
    write_line(out, columns, count, cells);
    char text[MAX_COLUMNS][64];
    for (size_t k = 0; k < rows; k++) {
        if (!(k % every == 0 || k + 1 == rows))
            continue;
        for (size_t c = 0; c < count; c++) {
            format_cell(text[c], sizeof text[c], columns[c], &fields[c], profiles, k);
            cells[c] = text[c];
        }
        write_line(out, columns, count, cells);
    }
    return VP_OK;
}
