/* `table` and `models` in the formats other than text: each put in a page
 * table (varprof/page_table.h), then written by the format's writer. */
#ifndef VARPROF_CLI_PAGE_TABLES_H
#define VARPROF_CLI_PAGE_TABLES_H

#include <stdio.h>

#include "output_format.h"
#include "varprof/config.h"
#include "varprof/models.h"
#include "varprof/page_table.h"

/* The maths table at cfg's layers, gain, gamma, alpha and beta: one row per
 * placement with its update rule and the top of its stack. Returns EXIT_OK,
 * or EXIT_RUNTIME after printing why. */
int maths_page_table(vp_config cfg, vp_page_table *table);

/* The models table, one row per model. Returns EXIT_OK, or EXIT_RUNTIME
 * after printing why. */
int models_page_table(const vp_model_table *models, vp_page_table *table);

/* Writes the table in format (not FORMAT_TEXT) to out and flushes it.
 * Returns EXIT_OK, or EXIT_RUNTIME after printing why. */
int write_page_table(FILE *out, const vp_page_table *table, output_format format);

#endif
