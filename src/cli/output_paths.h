/* The files one run writes (--output, --plot, --plot-script) must be
 * different files: two names for one would leave whichever came last. */
#ifndef VARPROF_CLI_OUTPUT_PATHS_H
#define VARPROF_CLI_OUTPUT_PATHS_H

#include "options.h"

/* Whether a and b name one file: the same device and inode where both exist,
 * else the same real folder and base name. A character device or a FIFO is
 * never "one file" with anything: it is written in place, and two writes to
 * /dev/null harm nothing. */
int outputs_are_one_file(const char *a, const char *b);

/* Refuses, as a usage error, two of --output, --plot and --plot-script that
 * name one file ("-", standard output, excepted). Returns EXIT_OK or
 * EXIT_USAGE after printing which two. */
int check_distinct_outputs(const cli_args *args);

#endif
