/* Progress of a long computation, reported to the caller.
 *
 * An engine that takes a vp_progress (vp_mc_options.progress,
 * vp_forward_options.progress, vp_figures_options.progress) calls report with
 * the units done so far and the units in all, from 0 to total: tokens for
 * the Monte Carlo, sub-blocks for the forward pass, figures for the figure
 * set. What a unit is matters only to the ratio.
 *
 * The calls are few: at most about VP_PROGRESS_STEPS per run (plus the first
 * and the last), however many units there are, so a callback may draw on a
 * terminal without slowing the run. They are serialised: never two at once,
 * though they may come from any of the engine's threads, and `done` never
 * goes down within a run. A callback must not call back into the engine.
 *
 * Reporting changes nothing in a result: the engines count units as they
 * finish them and decide nothing from the count. A NULL vp_progress, or a
 * NULL report, reports nothing.
 */
#ifndef VARPROF_PROGRESS_H
#define VARPROF_PROGRESS_H

/* Calls per run, at most, besides the first (done 0) and the last (done == total). */
#define VP_PROGRESS_STEPS 200u

typedef void (*vp_progress_fn)(void *context, unsigned long long done, unsigned long long total);

typedef struct {
    vp_progress_fn report;
    void *context; /* handed back to report, not owned */
} vp_progress;

#endif
