/* varprof [profile]'s output: each combination computed and written. */
#ifndef VARPROF_CLI_PROFILE_OUTPUT_H
#define VARPROF_CLI_PROFILE_OUTPUT_H

#include <stdio.h>

#include "output_file.h"
#include "profile_request.h"
#include "progress_line.h"

/* Each placement's profiles: closed form, Monte Carlo, forward pass. */
#define MAX_PROFILES (3 * VP_PLACEMENT_COUNT)

/* The run's results that outlive the writing: the profiles to plot (all the
 * engines' of each combination, when a single stack per placement is
 * plotted) and the sweep's tops. */
typedef struct {
    vp_profile *kept[MAX_PROFILES];
    size_t n_kept;
    int keep;
    vp_sweep_top *tops; /* 3 per combination, owned */
    size_t n_tops;
} run_results;

/* Computes every combination's profiles and writes them (out may be NULL:
 * only a plot was asked for), keeping what res asks for. Returns EXIT_OK,
 * or EXIT_USAGE or EXIT_RUNTIME after printing the error. */
int profile_compute_and_write(const profile_request *req, FILE *out, progress_line *line,
                              run_results *res);

/* --grads-out: the gradients the run collected, written as --output is, and
 * the file committed. Returns EXIT_OK, or EXIT_RUNTIME after printing why
 * (the file aborted). */
int profile_write_grads(const cli_args *args, output_file *grads, const profile_request *req);

#endif
