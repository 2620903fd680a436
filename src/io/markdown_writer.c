/* The Markdown writer: a page table as a Markdown table. */
#include "varprof/markdown.h"

/* A cell's text, '|' escaped (it would end the cell) and, for a code
 * column, in backquotes. */
static void write_cell(FILE *out, const vp_page_table *table, size_t row, size_t column)
{
    const vp_cell *cell = vp_page_table_cell(table, row, column);
    char text[512];
    vp_page_cell_text(cell, text, sizeof text);
    const int code = table->columns[column].code && cell->kind == VP_CELL_TEXT;
    fputs(code ? " `" : " ", out);
    for (const char *p = text; *p; p++) {
        if (*p == '|')
            fputc('\\', out);
        fputc(*p, out);
    }
    fputs(code ? "`" : "", out);
    if (cell->marked)
        fputs("\\*", out); /* a bare '*' would start emphasis */
    fputs(" |", out);
}

/* The note as a paragraph under the table; its '*' escaped, or it would
 * start a list. */
static void write_note(FILE *out, const char *note)
{
    fputc('\n', out);
    for (const char *p = note; *p; p++) {
        if (*p == '*')
            fputc('\\', out);
        fputc(*p, out);
    }
    fputc('\n', out);
}

/* A column of numbers is right-aligned: the digits line up. */
static int is_numeric(const vp_page_table *table, size_t column)
{
    for (size_t r = 0; r < table->n_rows; r++) {
        const vp_cell_kind kind = vp_page_table_cell(table, r, column)->kind;
        if (kind == VP_CELL_TEXT)
            return 0;
    }
    return 1;
}

vp_status vp_markdown_write_table(FILE *out, const vp_page_table *table)
{
    if (table->caption[0])
        fprintf(out, "%s\n\n", table->caption);
    fputc('|', out);
    for (size_t c = 0; c < table->n_columns; c++)
        fprintf(out, " %s |", table->columns[c].heading);
    fputs("\n|", out);
    for (size_t c = 0; c < table->n_columns; c++)
        fputs(is_numeric(table, c) ? " ---: |" : " --- |", out);
    fputc('\n', out);
    for (size_t r = 0; r < table->n_rows; r++) {
        fputc('|', out);
        for (size_t c = 0; c < table->n_columns; c++)
            write_cell(out, table, r, c);
        fputc('\n', out);
    }
    if (table->note[0])
        write_note(out, table->note);
    return ferror(out) ? VP_EIO : VP_OK;
}
