/* Counting an engine's finished units from any thread and reporting them
 * through a vp_progress (varprof/progress.h) at a bounded rate: a call only
 * when the count crosses one of VP_PROGRESS_STEPS equal steps, under a lock,
 * so that calls are serialised and never go backwards.
 *
 * Private to libvarprof (no vp_ prefix). */
#ifndef VARPROF_SYS_PROGRESS_METER_H
#define VARPROF_SYS_PROGRESS_METER_H

#include <pthread.h>
#include <stdatomic.h>

#include "varprof/progress.h"
#include "varprof/status.h"

typedef struct {
    const vp_progress *progress; /* NULL: the meter counts nothing */
    unsigned long long total;
    atomic_ullong done;
    pthread_mutex_t lock;
    unsigned long long reported; /* under lock: the last done reported */
} progress_meter;

/* Starts a run of total units; reports done 0. progress may be NULL. */
void progress_meter_start(progress_meter *meter, const vp_progress *progress,
                          unsigned long long total);

/* Adds units finished by the calling thread; reports when a step is crossed. */
void progress_meter_add(progress_meter *meter, unsigned long long units);

/* Counts one unit when status is VP_OK, and returns status: a step of a
 * sequence that stops at the first failure, `status = progress_meter_count(
 * meter, draw(...))`. */
vp_status progress_meter_count(progress_meter *meter, vp_status status);

/* Ends the run: reports the last count if it was not (done == total after a
 * whole run), and releases the lock. */
void progress_meter_finish(progress_meter *meter);

#endif
