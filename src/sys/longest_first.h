/* The order in which to start runs of unequal length on fewer threads than
 * runs (a sweep's combinations, a training sweep's runs): the costliest
 * first, so that the last run to start is a short one and the whole ends
 * near max(longest run, total / threads) instead of a long run starting
 * last. The order changes which thread runs what, never a result. */
#ifndef VARPROF_LONGEST_FIRST_H
#define VARPROF_LONGEST_FIRST_H

#include <stddef.h>

/* A run's estimated cost, in any unit the caller's runs share. */
typedef double (*run_cost_fn)(const void *ctx, size_t index);

/* The indices 0 .. n - 1 by cost(ctx, i), the highest first, ties in index
 * order; malloc'd (the caller frees it). NULL when memory runs out. */
size_t *longest_first(size_t n, run_cost_fn cost, const void *ctx);

#endif
