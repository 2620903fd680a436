/* What the text writers share: sentences broken to fit 80 columns, a
 * difference in standard errors as the tables write it, and the heading.
 * The tables' columns are io/text_columns.h. */
#ifndef VARPROF_IO_TEXT_INTERNAL_H
#define VARPROF_IO_TEXT_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "varprof/text.h"

/* A sentence (a title, a verdict) breaks after a comma from this column on,
 * before it at a space. */
#define SENTENCE_COMMA_FROM 60

/* What writes a block of lines, for text_write_lines_in_width. */
typedef void (*text_lines)(FILE *out, const void *arg);

/* Writes what `lines` writes, its lines broken to fit 80 columns with
 * VP_TEXT_FIT_80 (breaking after a comma from column comma_from on). */
void text_write_lines_in_width(FILE *out, vp_text_width width, size_t comma_from, text_lines lines,
                               const void *arg);

/* A difference in standard errors; in 80 columns, whole from 1000 on (a
 * figure exact to its last digits can lie tens of thousands away). */
void text_se_units(char *buf, size_t size, double units, vp_text_width width);

/* The largest relative gap between the predicted and the measured gradient
 * size sqrt(G_k / G_K), and its sub-block in *at; both profiles with
 * VP_HAS_GRAD. */
double text_grad_size_gap(const vp_profile *predicted, const vp_profile *forward, size_t *at);

/* The heading's lines, each whole (text_write_lines_in_width breaks them):
 * the engine, placement and depth; what the run was set to; the network
 * (text_write_network) or the Monte Carlo's sampling; a blank line. */
void text_write_heading_lines(FILE *out, const vp_profile *p);

/* The heading's lines, broken after a comma to fit 80 columns with
 * VP_TEXT_FIT_80. */
void text_write_heading(FILE *out, const vp_profile *p, vp_text_width width);

/* The forward pass's network, its batch, weights, eps and seed where
 * something was drawn from it, the loss, Gemma-2's scales and positions. */
void text_write_network(FILE *out, const vp_profile *p);

#endif
