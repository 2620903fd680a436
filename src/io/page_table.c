/* A page table: the columns a page keeps and their rows. */
#include "varprof/page_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vp_page_table_init(vp_page_table *table, const vp_page_column *columns, size_t n_columns)
{
    *table = (vp_page_table){.columns = columns, .n_columns = n_columns};
}

vp_status vp_page_table_add_row(vp_page_table *table)
{
    if (table->n_rows == table->capacity) {
        const size_t rows = table->capacity ? 2 * table->capacity : 16;
        vp_cell *cells = realloc(table->cells, rows * table->n_columns * sizeof *cells);
        if (!cells)
            return VP_ENOMEM;
        table->cells = cells;
        table->capacity = rows;
    }
    vp_cell *row = table->cells + table->n_rows * table->n_columns;
    for (size_t c = 0; c < table->n_columns; c++)
        row[c] = (vp_cell){.kind = VP_CELL_EMPTY};
    table->n_rows++;
    return VP_OK;
}

static vp_cell *last_row_cell(vp_page_table *table, size_t column)
{
    return table->cells + (table->n_rows - 1) * table->n_columns + column;
}

vp_status vp_page_table_set_text(vp_page_table *table, size_t column, const char *text)
{
    vp_cell *cell = last_row_cell(table, column);
    if (!text || !*text)
        return VP_OK;
    const size_t length = strlen(text);
    char *copy = malloc(length + 1);
    if (!copy)
        return VP_ENOMEM;
    memcpy(copy, text, length + 1);
    *cell = (vp_cell){.kind = VP_CELL_TEXT, .text = copy};
    return VP_OK;
}

void vp_page_table_set_number(vp_page_table *table, size_t column, double number)
{
    vp_page_table_set_estimate(table, column, number, NAN);
}

void vp_page_table_set_estimate(vp_page_table *table, size_t column, double number, double half)
{
    *last_row_cell(table, column) =
        (vp_cell){.kind = VP_CELL_NUMBER, .number = number, .half = half};
}

void vp_page_table_set_count(vp_page_table *table, size_t column, size_t count)
{
    *last_row_cell(table, column) = (vp_cell){.kind = VP_CELL_COUNT, .count = count, .half = NAN};
}

void vp_page_table_mark(vp_page_table *table, size_t column)
{
    last_row_cell(table, column)->marked = 1;
}

/* Whether keep names n distinct columns of the table. */
static int distinct_columns(const vp_page_table *table, const size_t *keep, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (keep[i] >= table->n_columns)
            return 0;
        for (size_t j = 0; j < i; j++)
            if (keep[j] == keep[i])
                return 0;
    }
    return n > 0;
}

vp_status vp_page_table_keep_columns(vp_page_table *table, const size_t *keep, size_t n)
{
    if (!distinct_columns(table, keep, n))
        return VP_EINVAL;
    vp_page_column *columns = malloc(n * sizeof *columns);
    vp_cell *cells = table->n_rows ? malloc(table->n_rows * n * sizeof *cells) : NULL;
    if (!columns || (table->n_rows && !cells)) {
        free(columns);
        free(cells);
        return VP_ENOMEM;
    }
    for (size_t c = 0; c < n; c++)
        columns[c] = table->columns[keep[c]];
    for (size_t r = 0; r < table->n_rows; r++) {
        vp_cell *row = table->cells + r * table->n_columns;
        for (size_t c = 0; c < n; c++) {
            cells[r * n + c] = row[keep[c]];
            row[keep[c]].kind = VP_CELL_EMPTY; /* its text moved, not to be freed below */
        }
        for (size_t c = 0; c < table->n_columns; c++)
            if (row[c].kind == VP_CELL_TEXT)
                free(row[c].text);
    }
    free(table->cells);
    free(table->owned_columns);
    table->cells = cells;
    table->capacity = table->n_rows;
    table->owned_columns = columns;
    table->columns = columns;
    table->n_columns = n;
    return VP_OK;
}

const vp_cell *vp_page_table_cell(const vp_page_table *table, size_t row, size_t column)
{
    return table->cells + row * table->n_columns + column;
}

void vp_page_table_free(vp_page_table *table)
{
    if (!table)
        return;
    for (size_t i = 0; i < table->n_rows * table->n_columns; i++)
        if (table->cells[i].kind == VP_CELL_TEXT)
            free(table->cells[i].text);
    free(table->cells);
    table->cells = NULL;
    table->n_rows = table->capacity = 0;
    if (table->owned_columns) { /* the columns went with it */
        free(table->owned_columns);
        table->owned_columns = NULL;
        table->columns = NULL;
        table->n_columns = 0;
    }
}

void vp_page_cell_text(const vp_cell *cell, char *buf, size_t size)
{
    buf[0] = '\0';
    switch (cell->kind) {
    case VP_CELL_TEXT: snprintf(buf, size, "%s", cell->text); break;
    case VP_CELL_COUNT: snprintf(buf, size, "%zu", cell->count); break;
    case VP_CELL_NUMBER:
        if (isfinite(cell->number) && !isnan(cell->half))
            snprintf(buf, size, "%.*g +- %.*g", VP_PAGE_SIGNIFICANT, cell->number,
                     VP_PAGE_HALF_SIGNIFICANT, cell->half);
        else if (isfinite(cell->number))
            snprintf(buf, size, "%.*g", VP_PAGE_SIGNIFICANT, cell->number);
        break;
    case VP_CELL_EMPTY: break;
    }
}
