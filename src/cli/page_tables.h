/* `table` and `models` in the formats other than text: each put in a page
 * table (varprof/page_table.h), then written by the format's writer. */
#ifndef VARPROF_CLI_PAGE_TABLES_H
#define VARPROF_CLI_PAGE_TABLES_H

#include <stdio.h>

#include "output_format.h"
#include "varprof/config.h"
#include "varprof/models.h"
#include "varprof/page_table.h"
#include "varprof/sweep.h"

/* The maths table at cfg's layers, gain, gamma, alpha and beta: one row per
 * placement with its update rule and the top of its stack. Returns EXIT_OK,
 * or EXIT_RUNTIME after printing why. */
int maths_page_table(vp_config cfg, vp_page_table *table);

/* The models table's columns: its own, its shape's and the parameter count. */
#define MODEL_COLUMNS_MAX 24

/* The columns of the models table to write, by index, in order. */
typedef struct {
    size_t keep[MODEL_COLUMNS_MAX];
    size_t n;
    int all;   /* every column the table has, keep unused */
    int given; /* named by --columns */
} model_column_choice;

/* --columns, a list of the CSV's column names or all; without it, a page's
 * short set (name, year, layers, placement, norm, qk_norm, parameters) for
 * Markdown and LaTeX, every column for CSV and JSON. Returns EXIT_OK, or
 * EXIT_USAGE after printing why: a name that is no column (naming them all),
 * one named twice, --columns with the text. */
int read_model_columns(const cli_args *args, output_format format, model_column_choice *choice);

/* The models table, one row per model, in the chosen columns; a count that
 * is not the model's own (the text's star) is marked, and the note says
 * why. Returns EXIT_OK, or EXIT_RUNTIME after printing why (a shape's
 * column named for a table without shapes). */
int models_page_table(const vp_model_table *models, const model_column_choice *choice,
                      vp_page_table *table);

/* Markdown or LaTeX: a table for a page. */
int is_page_format(output_format format);

/* Which columns of a sweep the table of tops shows beside the placement
 * and engine: those that tell its combinations apart. */
enum { TOPS_GAIN = 1u << 0, TOPS_LAYERS = 1u << 1, TOPS_WIDTH = 1u << 2 };

/* The top of each stack, one row per entry of tops, as the text ends a run
 * of several placements or a sweep: placement, the columns shown asks for
 * (gain, layers, width), engine, sub-blocks, stream size, last update
 * ratio, embedding share and its log2, and where a stack went out of range,
 * where and which row its figures are. VP_ENOMEM. */
vp_status tops_page_table(const vp_sweep_top *tops, size_t n, unsigned shown, vp_page_table *table);

/* The tops' table after a blank line, in format (Markdown or LaTeX).
 * VP_ENOMEM or VP_EIO. */
vp_status write_tops_page(FILE *out, const vp_sweep_top *tops, size_t n, unsigned shown,
                          output_format format);

/* Writes the table in format (not FORMAT_TEXT) to out and flushes it.
 * Returns EXIT_OK, or EXIT_RUNTIME after printing why. */
int write_page_table(FILE *out, const vp_page_table *table, output_format format);

#endif
