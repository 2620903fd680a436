/* train --layer-stats: each run's per-step, per-tensor norms, kept as the
 * trainer hands them out and written as one CSV after the runs. */
#ifndef VARPROF_CLI_TRAIN_LAYER_STATS_H
#define VARPROF_CLI_TRAIN_LAYER_STATS_H

#include <stddef.h>

#include "options.h"
#include "varprof/train.h"

/* --layer-stats' rows of one run: the tensors' names once, then per step
   and tensor its three norms */
typedef struct {
    char (*names)[96];
    size_t n_names, names_cap;
    struct stat_row {
        size_t step, tensor;
        double grad_norm, weight_norm, update_norm;
    } * rows;
    size_t n_rows, rows_cap, last_step, in_step;
    int failed; /* out of memory: said after the run */
} layer_stats;

/* A vp_train_options tensor callback: keeps t's norms in ctx, a
   layer_stats (zeroed, last_step (size_t)-1, to start). */
void layer_stats_keep(void *ctx, const vp_train_tensor *t);

/* Frees what layer_stats_keep kept. */
void layer_stats_free(layer_stats *s);

/* Writes --layer-stats' CSV for the n_jobs runs: one row per step and
   tensor, update_ratio empty where the weight norm is 0. An exit code. */
int layer_stats_write(const cli_args *args, const vp_train_job *jobs, const layer_stats *stats,
                      size_t n_jobs);

#endif
