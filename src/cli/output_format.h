/* --format for profile, table and models: given, or followed from the
 * --output file's extension (.csv, .json, .md, .tex), never both at odds. */
#ifndef VARPROF_CLI_OUTPUT_FORMAT_H
#define VARPROF_CLI_OUTPUT_FORMAT_H

#include "options.h"

typedef enum {
    FORMAT_TEXT,
    FORMAT_CSV,
    FORMAT_JSON,
    FORMAT_MARKDOWN,
    FORMAT_LATEX,
} output_format;

/* The format --format names; without it, the one --output's extension names
 * (.csv, .json, .md, .tex), else text. A --format that contradicts the
 * extension (--format csv --output x.json) is a usage error; an extension
 * that names no format (.txt, none) contradicts nothing. Returns EXIT_OK or
 * EXIT_USAGE after printing why. */
int read_output_format(const cli_args *args, output_format *format);

#endif
