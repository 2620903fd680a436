/* varprof [profile]'s engines for one combination, and a sweep's
 * combinations run several at once (profile_compute.c). */
#ifndef VARPROF_CLI_PROFILE_COMPUTE_H
#define VARPROF_CLI_PROFILE_COMPUTE_H

#include "profile_request.h"
#include "progress_line.h"

/* The profiles of one combination, each possibly NULL: the closed form, the
 * Monte Carlo, the forward pass, and the closed form fed with the forward
 * pass's measured gains (its prediction). done: computed ahead by
 * profile_compute_ahead, not yet handed to the writer. */
typedef struct {
    vp_profile *closed, *sampled, *forward, *predicted;
    int done;
} placement_profiles;

void free_placement(placement_profiles *pp);

/* The warnings of pp's profiles that overflowed, on standard error. */
void warn_overflows(const placement_profiles *pp);

/* Combination i's profiles into out, the engines on their options' threads
 * (or `threads` where not 0), and its overflow warnings said. Returns
 * EXIT_OK, or EXIT_USAGE or EXIT_RUNTIME after printing the error (out
 * then empty). */
int compute_placement(const profile_request *req, size_t i, size_t threads, progress_line *line,
                      placement_profiles *out);

/* A sweep shared as runs first (issue 31): where it has more than one
 * combination and more than one thread, min(combinations, threads) of them
 * run at once, the longest first, each on its share of the threads, into
 * all[i] (done set), the progress line showing whichever run reported
 * last. Nothing else is printed: a combination that fails is left undone, for the writer to
 * run again in its turn, which then says why as it would have. The writer
 * takes the rest in the sweep's order, so the output is the same bytes as
 * one at a time. A sweep that would gather gradients (--grads-out, summed
 * in the sweep's order) runs one at a time, and so does a forward pass on
 * --weights (each run packs its own copy of the file's weights). */
void profile_compute_ahead(const profile_request *req, progress_line *line,
                           placement_profiles *all);

#endif
