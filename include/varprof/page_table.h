/* A table for a page or a script: named columns and rows of cells, each a
 * number, a count, a piece of text or empty. A profile
 * (vp_page_table_of_profile), the maths table and the models table are each
 * put in one, and each writer lays it out once for all of them: Markdown
 * (markdown.h), LaTeX (latex.h), and for `table` and `models`, CSV
 * (vp_csv_write_page_table, csv.h) and JSON (vp_json_write_page_table,
 * json.h).
 *
 * Numbers are kept whole (double); a page shows them with
 * VP_PAGE_SIGNIFICANT significant figures, a script's format with %.17g.
 * What only a page shows: a number's 95 % half-width ("0.25 +- 0.0003"),
 * a footnote mark after a cell and the note under the table that says what
 * it means. CSV and JSON write the number alone: a script reads a profile's
 * bounds from the profile's own CSV and JSON (_lo, _hi), and a model's
 * architecture from its column.
 */
#ifndef VARPROF_PAGE_TABLE_H
#define VARPROF_PAGE_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "varprof/profile.h"
#include "varprof/status.h"

/* The significant figures of a number on a page: sqrt(257) = 16.03. */
#define VP_PAGE_SIGNIFICANT 4

/* Those of a 95 % half-width, as the text shows it: an interval's own
 * uncertainty makes more digits noise. */
#define VP_PAGE_HALF_SIGNIFICANT 2

typedef enum { VP_CELL_EMPTY, VP_CELL_TEXT, VP_CELL_NUMBER, VP_CELL_COUNT } vp_cell_kind;

typedef struct {
    vp_cell_kind kind;
    char *text;    /* VP_CELL_TEXT, owned */
    double number; /* VP_CELL_NUMBER; not finite: written as empty or null */
    double half;   /* VP_CELL_NUMBER: its 95 % half-width, shown "x +- h" on a
                      page; NaN for none */
    size_t count;  /* VP_CELL_COUNT, a whole number */
    int marked;    /* a page writes a footnote mark "*" after it (the note) */
} vp_cell;

typedef struct {
    const char *key;     /* the CSV column and the JSON key: "stream_var" */
    const char *heading; /* a page's heading, plain text: "v_k" */
    const char *latex;   /* the LaTeX heading, written as is: "$v_k$" */
    int code;            /* text shown as code (a formula, a name): `x` or \texttt{x} */
} vp_page_column;

typedef struct {
    /* as given to init, which must outlive the table; or after
       vp_page_table_keep_columns, owned_columns */
    const vp_page_column *columns;
    size_t n_columns;
    vp_cell *cells; /* n_rows x n_columns, row by row */
    size_t n_rows, capacity;
    char caption[256]; /* one line above the table on a page; may be "" */
    /* one line under it on a page: what a mark means, where the rows stop;
       may be "" */
    char note[512];
    vp_page_column *owned_columns; /* the kept columns' copy, or NULL */
} vp_page_table;

/* An empty table of these columns. Cannot fail. */
void vp_page_table_init(vp_page_table *table, const vp_page_column *columns, size_t n_columns);

/* Appends a row of empty cells. VP_ENOMEM. */
vp_status vp_page_table_add_row(vp_page_table *table);

/* Sets a cell of the last row (column < n_columns). set_text copies text (a
 * NULL or "" leaves the cell empty); VP_ENOMEM. */
vp_status vp_page_table_set_text(vp_page_table *table, size_t column, const char *text);
void vp_page_table_set_number(vp_page_table *table, size_t column, double number);
void vp_page_table_set_count(vp_page_table *table, size_t column, size_t count);

/* Sets a cell of the last row to a number and its 95 % half-width. */
void vp_page_table_set_estimate(vp_page_table *table, size_t column, double number, double half);

/* Marks a cell of the last row for the note (vp_cell.marked). */
void vp_page_table_mark(vp_page_table *table, size_t column);

/* Keeps only the n columns keep names (indices into the columns, each at
 * most once, n >= 1), in that order, with their cells; the columns are then
 * the table's own copy, so that those given to init need outlive the table
 * only until this call. VP_EINVAL for a bad index or n 0, VP_ENOMEM; either
 * way the table is as it was. */
vp_status vp_page_table_keep_columns(vp_page_table *table, const size_t *keep, size_t n);

/* The cell at row, column. */
const vp_cell *vp_page_table_cell(const vp_page_table *table, size_t row, size_t column);

/* Frees the cells; the table is then empty. NULL is allowed. */
void vp_page_table_free(vp_page_table *table);

/* A cell as a page shows it: a number with VP_PAGE_SIGNIFICANT significant
 * figures ("16.03", "2.939e-39") and its half-width with
 * VP_PAGE_HALF_SIGNIFICANT ("0.25 +- 0.0003"), a count in decimal, text as
 * it is, "" for an empty cell or a number that is not finite; without the
 * mark, which each writer sets in its own way. */
void vp_page_cell_text(const vp_cell *cell, char *buf, size_t size);

/* A profile's rows that vp_profile_shows_row selects (every >= 1), in
 * every column of the text's, read through the row-field table by their CSV
 * names: sub-block, layer, part, gain, stream variance, stream size, update
 * ratio, embedding share and its log2; the Monte Carlo's spread of the
 * stream size (p5, p50, p95); the forward pass's measured gain, cosine and
 * stream norm; with the backward half the gradient variance, the
 * gradient's size and the weight gradient. A figure with a 95 % interval
 * carries its half-width. The caption names the engine, placement, layers
 * and gain (the Monte Carlo's width and tokens, the forward pass's loss);
 * the note, where the rows stop early and why. VP_ENOMEM. */
vp_status vp_page_table_of_profile(const vp_profile *profile, size_t every, vp_page_table *table);

#endif
