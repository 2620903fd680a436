/* --format for profile, table and models. */
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

/* The format --format names, else text. Returns EXIT_OK or EXIT_USAGE
 * after printing why. */
int read_output_format(const cli_args *args, output_format *format);

#endif
