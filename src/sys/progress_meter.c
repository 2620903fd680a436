/* Counting finished units from many threads, reporting few of them. */
#include "sys/progress_meter.h"

static int active(const progress_meter *meter)
{
    return meter->progress && meter->progress->report && meter->total > 0;
}

static void report(progress_meter *meter, unsigned long long done)
{
    pthread_mutex_lock(&meter->lock);
    /* another thread may have reported a larger count meanwhile */
    if (done > meter->reported || done == 0) {
        meter->reported = done;
        meter->progress->report(meter->progress->context, done, meter->total);
    }
    pthread_mutex_unlock(&meter->lock);
}

void progress_meter_start(progress_meter *meter, const vp_progress *progress,
                          unsigned long long total)
{
    meter->progress = progress;
    meter->total = total;
    atomic_init(&meter->done, 0);
    meter->reported = 0;
    pthread_mutex_init(&meter->lock, NULL);
    if (active(meter))
        report(meter, 0);
}

/* which of the VP_PROGRESS_STEPS steps `done` is in */
static unsigned long long step_of(const progress_meter *meter, unsigned long long done)
{
    return (unsigned long long)((long double)done * VP_PROGRESS_STEPS / meter->total);
}

void progress_meter_add(progress_meter *meter, unsigned long long units)
{
    if (!active(meter) || units == 0)
        return;
    const unsigned long long before = atomic_fetch_add(&meter->done, units);
    const unsigned long long after = before + units;
    if (step_of(meter, after) != step_of(meter, before) && after < meter->total)
        report(meter, after);
}

vp_status progress_meter_count(progress_meter *meter, vp_status status)
{
    if (status == VP_OK)
        progress_meter_add(meter, 1);
    return status;
}

void progress_meter_finish(progress_meter *meter)
{
    /* the last count, which is the total unless the run failed */
    if (active(meter) && atomic_load(&meter->done) > meter->reported)
        report(meter, atomic_load(&meter->done));
    pthread_mutex_destroy(&meter->lock);
}
