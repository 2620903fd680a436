/* The LaTeX writer: a page table as a LaTeX table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "varprof/latex.h"

/* Text with LaTeX's ten special characters made literal. */
static void write_escaped(FILE *out, const char *text)
{
    for (const char *p = text; *p; p++) {
        switch (*p) {
        case '\\': fputs("\\textbackslash{}", out); break;
        case '~': fputs("\\textasciitilde{}", out); break;
        case '^': fputs("\\textasciicircum{}", out); break;
        case '<': fputs("\\textless{}", out); break; // OT1 fonts set '<' as an inverted '!'
        case '>': fputs("\\textgreater{}", out); break;
        case '-': // "--" would set an en dash: --num-layers must stay two hyphens
            fputs(p[1] == '-' ? "-{}" : "-", out);
            break;
        case '{':
        case '}':
        case '$':
        case '&':
        case '#':
        case '_':
        case '%':
            fputc('\\', out);
            fputc(*p, out);
            break;
        default: fputc(*p, out);
        }
    }
}

/* A number as math, to go between dollars: "16.03", "2.939\times10^{-39}",
 * "-1000", with that many significant figures. */
static void write_math(FILE *out, double x, int significant)
{
    char text[64];
    snprintf(text, sizeof text, "%.*g", significant, x);
    char *e = strchr(text, 'e');
    if (!e) {
        fputs(text, out);
        return;
    }
    *e = '\0';
    const long exponent = strtol(e + 1, NULL, 10);
    if (strcmp(text, "1") == 0)
        fprintf(out, "10^{%ld}", exponent);
    else
        fprintf(out, "%s\\times10^{%ld}", text, exponent);
}

/* A number in math mode, "$16.03$", with its half-width where it has one,
 * "$0.25 \pm 0.0003$", and its mark inside: "$16.03^*$", as "$16.03$$^*$"
 * would open display math. */
static void write_number(FILE *out, const vp_cell *cell)
{
    fputc('$', out);
    write_math(out, cell->number, VP_PAGE_SIGNIFICANT);
    if (!isnan(cell->half)) {
        fputs(" \\pm ", out);
        write_math(out, cell->half, VP_PAGE_HALF_SIGNIFICANT);
    }
    fputs(cell->marked ? "^*$" : "$", out);
}

static void write_cell(FILE *out, const vp_page_table *table, size_t row, size_t column)
{
    const vp_cell *cell = vp_page_table_cell(table, row, column);
    switch (cell->kind) {
    case VP_CELL_NUMBER:
        if (isfinite(cell->number))
            write_number(out, cell);
        else if (cell->marked)
            fputs("$^*$", out);
        return;
    case VP_CELL_COUNT: fprintf(out, "%zu", cell->count); break;
    case VP_CELL_TEXT:
        if (table->columns[column].code)
            fputs("\\texttt{", out);
        write_escaped(out, cell->text);
        if (table->columns[column].code)
            fputc('}', out);
        break;
    case VP_CELL_EMPTY: break;
    }
    if (cell->marked)
        fputs("$^*$", out);
}

/* 'r' for a column of numbers, so that they line up; 'l' for text. */
static char alignment(const vp_page_table *table, size_t column)
{
    for (size_t r = 0; r < table->n_rows; r++)
        if (vp_page_table_cell(table, r, column)->kind == VP_CELL_TEXT)
            return 'l';
    return 'r';
}

vp_status vp_latex_write_table(FILE *out, const vp_page_table *table)
{
    if (table->caption[0]) {
        fputs("% ", out);
        fputs(table->caption, out); // a comment: taken as it is, up to the line's end
        fputc('\n', out);
    }
    fputs("\\begin{tabular}{", out);
    for (size_t c = 0; c < table->n_columns; c++)
        fputc(alignment(table, c), out);
    fputs("}\n\\toprule\n", out);
    for (size_t c = 0; c < table->n_columns; c++)
        fprintf(out, "%s%s", c ? " & " : "", table->columns[c].latex);
    fputs(" \\\\\n\\midrule\n", out);
    for (size_t r = 0; r < table->n_rows; r++) {
        for (size_t c = 0; c < table->n_columns; c++) {
            if (c)
                fputs(" & ", out);
            write_cell(out, table, r, c);
        }
        fputs(" \\\\\n", out);
    }
    fputs("\\bottomrule\n\\end{tabular}\n", out);
    if (table->note[0]) /* as the caption: a comment, for the author to set */
        fprintf(out, "%% %s\n", table->note);
    return ferror(out) ? VP_EIO : VP_OK;
}
