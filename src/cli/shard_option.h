/* --shard K/N read and applied to a sweep's costs, for profile and train alike. */
#ifndef VARPROF_CLI_SHARD_OPTION_H
#define VARPROF_CLI_SHARD_OPTION_H

#include <stddef.h>

#include "options.h"

/* The combinations [*first, *end) of n that --shard runs, by their costs:
   all of them without --shard. Returns EXIT_OK, or EXIT_USAGE after
   printing what was wrong with K/N. */
int cli_shard_range(const cli_args *args, const double *costs, size_t n, size_t *first,
                    size_t *end);

#endif
