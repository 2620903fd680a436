/* Options that take a comma list (--engine closed,mc, --gain 0.5,1,2): split
 * strictly, each item read as the option's single value would be. */
#ifndef VARPROF_CLI_OPTION_LISTS_H
#define VARPROF_CLI_OPTION_LISTS_H

#include <stddef.h>

#include "options.h"

/* The most items one list holds: a sweep makes at most this many combinations. */
#define CLI_LIST_MAX 256

typedef struct {
    char text[4096];
    const char *items[CLI_LIST_MAX]; /* into text */
    size_t n;
} list_buffer;

/* Splits the option's value at commas into at most max items (max <=
 * CLI_LIST_MAX); n = 0 when the option is absent. An empty item, or more than
 * max, is a usage error: EXIT_USAGE after printing it. */
int cli_list_items(const cli_args *args, option_id id, list_buffer *buf, size_t max);

/* The option's list read item by item as cli_double or cli_size would read
 * one value, into out (room for max); *n = 0 when the option is absent. A
 * value given twice is refused: it would make two identical stacks. */
int cli_double_list(const cli_args *args, option_id id, double min, int min_exclusive, double *out,
                    size_t max, size_t *n);
int cli_size_list(const cli_args *args, option_id id, size_t min, size_t max_value, size_t *out,
                  size_t max, size_t *n);

#endif
