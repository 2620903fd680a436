/* Text broken at spaces to fit a width, for the help and the tables that
 * fit 80 columns. */
#ifndef VARPROF_CLI_WRAP_TEXT_H
#define VARPROF_CLI_WRAP_TEXT_H

#include <stddef.h>
#include <stdio.h>

#define TEXT_COLUMNS 80

/* Writes text and a newline to out, starting at column `column`; with width
 * > 0, broken at spaces so that lines end by column `width`, each further
 * line indented by `indent` spaces (a word longer than a line overflows it);
 * with width 0, whole. */
void write_wrapped(FILE *out, const char *text, size_t column, size_t indent, size_t width);

#endif
