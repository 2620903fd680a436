/* Shards: the K-th of N disjoint parts of a sweep's combinations, so that N
 * processes (a Slurm job array, GNU parallel over hosts) share one sweep.
 *
 * A shard is a contiguous run of the combinations in the sweep's own order,
 * its boundaries placed where the estimated cost crosses k/N of the whole,
 * so that the shards' outputs, concatenated in shard order under one header
 * (varprof merge), are the unsharded sweep's output byte for byte. The split
 * depends only on the costs and N: every process computes the same one.
 */
#ifndef VARPROF_SHARD_H
#define VARPROF_SHARD_H

#include <stddef.h>

#include "varprof/status.h"

/* The most parts a sweep is split into. */
#define VP_SHARD_MAX 100000

/* The K-th of N parts, 1 <= index <= count <= VP_SHARD_MAX. */
typedef struct {
    size_t index; /* K, from 1 */
    size_t count; /* N */
} vp_shard;

/* Reads "K/N" (decimal, 1 <= K <= N <= VP_SHARD_MAX) into *out. VP_EINVAL
 * naming what was wrong and what is allowed otherwise; *out is untouched. */
vp_status vp_shard_parse(const char *text, vp_shard *out, vp_error *err);

/* The combinations [*first, *end) of n, each with its estimated cost
 * costs[i] (finite, >= 0; all 0 counts each combination alike), that shard
 * runs. Every shard gets at least one combination, and over K = 1..N the
 * ranges cover 0..n-1 exactly once, in order. VP_EINVAL when shard.count
 * exceeds n (a shard would have nothing to run: err says how many
 * combinations there are), when the shard is not 1 <= K <= N, or when a cost
 * is negative or not finite; *first and *end are untouched then. */
vp_status vp_shard_range(const double *costs, size_t n, vp_shard shard, size_t *first, size_t *end,
                         vp_error *err);

#endif
