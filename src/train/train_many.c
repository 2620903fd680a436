/* A sweep's configurations trained over the threads (vp_train_many): the
 * jobs are independent, each deterministic on any number of threads, so
 * which thread runs which changes nothing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "sys/longest_first.h"
#include "sys/thread_pool.h"
#include "varprof/train.h"

typedef struct {
    vp_train_job *jobs;
    vp_status *status;
    vp_error *errors;
    const vp_progress *progress;
    pthread_mutex_t lock; /* the step count and the progress calls */
    unsigned long long done, total, reported;
} many;

typedef struct {
    many *all;
    const vp_train_options *given; /* the job's own, for its on_step */
} job_ctx;

/* steps more of the total are done: a step run, or a diverged run's rest */
static void count(many *all, unsigned long long steps)
{
    if (!all->progress || !all->progress->report || steps == 0)
        return;
    pthread_mutex_lock(&all->lock);
    all->done += steps;
    /* at most VP_PROGRESS_STEPS calls, and the last */
    if (all->done == all->total || (all->done - all->reported) * VP_PROGRESS_STEPS >= all->total) {
        all->reported = all->done;
        all->progress->report(all->progress->context, all->done, all->total);
    }
    pthread_mutex_unlock(&all->lock);
}

static void count_step(void *ctx, const vp_train_step *step)
{
    job_ctx *j = ctx;
    if (j->given->on_step)
        j->given->on_step(j->given->step_ctx, step);
    count(j->all, 1);
}

static void run_job(many *all, size_t i, size_t threads)
{
    vp_train_job *job = &all->jobs[i];
    job_ctx ctx = {all, &job->train};
    vp_train_options o = job->train;
    o.on_step = count_step;
    o.step_ctx = &ctx;
    vp_forward_options network = job->network;
    network.threads = threads;
    all->status[i] = vp_train(&job->config, &network, &o, &job->result, &all->errors[i]);
    if (all->status[i] == VP_OK) /* a run that diverged skips its other steps */
        count(all, job->train.steps - job->result->steps_run);
}

/* A run's estimated cost: its multiply-adds a step, as its layers times
   its width squared, times its steps. */
static double job_cost(const void *ctx, size_t index)
{
    const vp_train_job *job = &((const many *)ctx)->jobs[index];
    const double d = (double)job->network.width;
    return (double)job->config.layers * d * d * (double)job->train.steps;
}

/* The sweep's order of starting: the longest runs first (ties in the
   sweep's order), so that the last run to start is a short one and the
   sweep ends near max(longest run, total / threads). */
typedef struct {
    many *all;
    const size_t *order;
    size_t threads_each;
} dispatch;

static void run_in_order(void *ctx, size_t index, size_t thread)
{
    (void)thread;
    const dispatch *d = ctx;
    run_job(d->all, d->order[index], d->threads_each);
}

/* Runs first, then threads within a run: min(runs, threads) runs at once,
   each with an equal share of the threads (which thread runs which run, or
   how many threads a run has, changes no result). */
static vp_status run_all(many *all, size_t n, size_t threads, vp_error *err)
{
    /* runs at once: no more than the cores can run (thread_pool_usable) */
    const size_t usable = thread_pool_usable(threads);
    const size_t at_once = n < usable ? n : usable;
    if (at_once <= 1) {
        for (size_t i = 0; i < n; i++)
            run_job(all, i, threads);
        return VP_OK;
    }
    size_t *order = longest_first(n, job_cost, all);
    if (!order)
        return vp_fail(err, VP_ENOMEM, "no memory for %zu training runs", n);
    thread_pool *pool = thread_pool_create(at_once, err);
    if (pool) {
        dispatch d = {all, order, usable / at_once};
        thread_pool_run(pool, n, run_in_order, &d);
        thread_pool_free(pool);
    }
    free(order);
    return pool ? VP_OK : VP_ETHREAD;
}

vp_status vp_train_many(vp_train_job *jobs, size_t n, size_t threads, const vp_progress *progress,
                        vp_error *err)
{
    if (threads < 1)
        return vp_fail(err, VP_EINVAL, "threads is 0; it must be 1 or more");
    many all = {.jobs = jobs, .progress = progress};
    all.status = calloc(n ? n : 1, sizeof *all.status);
    all.errors = calloc(n ? n : 1, sizeof *all.errors);
    if (!all.status || !all.errors) {
        free(all.status);
        free(all.errors);
        return vp_fail(err, VP_ENOMEM, "no memory for %zu training runs", n);
    }
    for (size_t i = 0; i < n; i++) {
        jobs[i].result = NULL;
        all.total += jobs[i].train.steps;
    }
    pthread_mutex_init(&all.lock, NULL);
    if (progress && progress->report)
        progress->report(progress->context, 0, all.total);
    vp_status status = run_all(&all, n, threads, err);
    for (size_t i = 0; i < n && status == VP_OK; i++)
        if (all.status[i] != VP_OK)
            status = vp_fail(err, all.status[i], "run %zu: %s", i + 1, all.errors[i].message);
    if (status != VP_OK)
        for (size_t i = 0; i < n; i++) {
            vp_train_result_free(jobs[i].result);
            jobs[i].result = NULL;
        }
    pthread_mutex_destroy(&all.lock);
    free(all.status);
    free(all.errors);
    return status;
}
