/* The thread pool: workers that spin briefly, then sleep, between runs. */
#include "sys/thread_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* Rounds of a pause that a thread with nothing to do waits, watching for
   the next run (a worker) or for the workers to finish (the caller), before
   it sleeps on a condition variable. A pass hands the pool a run for every
   matmul, norm and attention, often less than a millisecond apart; waking a
   sleeping thread takes a system call and, on a virtual machine, the
   waking of its idle virtual CPU. 4096 pauses made the d = 1024
   attention+MLP pass on two threads (a VM) faster (what they last and the
   figures are in tests/bench/RESULTS.md). */
#define SPIN_ROUNDS 4096

struct thread_pool {
    size_t threads;
    pthread_t *ids;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    atomic_ulong generation; /* bumped for each run, under lock */
    atomic_int stopping;
    /* the run in progress */
    thread_pool_task task;
    void *ctx;
    size_t n_tasks;
    atomic_size_t next;
    atomic_size_t busy; /* workers still in the run */
};

typedef struct {
    thread_pool *pool;
    size_t thread;
} worker_arg;

static void drain(thread_pool *pool, size_t thread)
{
    for (;;) {
        size_t index = atomic_fetch_add(&pool->next, 1);
        if (index >= pool->n_tasks)
            return;
        pool->task(pool->ctx, index, thread);
    }
}

/* Spins while the pool's generation is still seen, SPIN_ROUNDS at most. */
static void spin_while_idle(thread_pool *pool, unsigned long seen)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        if (atomic_load_explicit(&pool->generation, memory_order_acquire) != seen ||
            atomic_load_explicit(&pool->stopping, memory_order_relaxed))
            return;
        cpu_relax();
    }
}

static void *worker_main(void *arg)
{
    worker_arg *w = arg;
    thread_pool *pool = w->pool;
    const size_t thread = w->thread;
    free(w);
    unsigned long seen = 0;
    for (;;) {
        spin_while_idle(pool, seen);
        pthread_mutex_lock(&pool->lock);
        while (!pool->stopping && pool->generation == seen)
            pthread_cond_wait(&pool->work, &pool->lock);
        const int stopping = pool->stopping;
        seen = pool->generation;
        pthread_mutex_unlock(&pool->lock);
        if (stopping)
            break;
        drain(pool, thread);
        /* the last worker out wakes the caller if it sleeps; it checks
           busy under the lock, so the signal cannot come before its wait */
        if (atomic_fetch_sub(&pool->busy, 1) == 1) {
            pthread_mutex_lock(&pool->lock);
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->lock);
        }
    }
    return NULL;
}

size_t thread_pool_usable(size_t threads)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores >= 1 && threads > (size_t)cores)
        threads = (size_t)cores;
    return threads ? threads : 1;
}

thread_pool *thread_pool_create(size_t threads, vp_error *err)
{
    thread_pool *pool = calloc(1, sizeof *pool);
    if (!pool) {
        vp_fail(err, VP_ENOMEM, "no memory for a thread pool");
        return NULL;
    }
    pool->threads = thread_pool_usable(threads);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->ids = calloc(pool->threads, sizeof *pool->ids);
    if (!pool->ids) {
        thread_pool_free(pool);
        vp_fail(err, VP_ENOMEM, "no memory for a thread pool");
        return NULL;
    }
    for (size_t t = 1; t < pool->threads; t++) {
        worker_arg *arg = malloc(sizeof *arg);
        if (arg)
            *arg = (worker_arg){pool, t};
        if (!arg || pthread_create(&pool->ids[t], NULL, worker_main, arg) != 0) {
            free(arg);
            pool->threads = t; /* join only those started */
            thread_pool_free(pool);
            vp_fail(err, VP_ETHREAD, "cannot start thread %zu", t + 1);
            return NULL;
        }
    }
    return pool;
}

void thread_pool_run(thread_pool *pool, size_t n_tasks, thread_pool_task task, void *ctx)
{
    if (pool->threads == 1 || n_tasks <= 1) {
        for (size_t i = 0; i < n_tasks; i++)
            task(ctx, i, 0);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    pool->task = task;
    pool->ctx = ctx;
    pool->n_tasks = n_tasks;
    atomic_store(&pool->next, 0);
    atomic_store(&pool->busy, pool->threads - 1);
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    drain(pool, 0);
    for (int i = 0; i < SPIN_ROUNDS && atomic_load(&pool->busy) > 0; i++)
        cpu_relax();
    if (atomic_load(&pool->busy) > 0) {
        pthread_mutex_lock(&pool->lock);
        while (atomic_load(&pool->busy) > 0)
            pthread_cond_wait(&pool->done, &pool->lock);
        pthread_mutex_unlock(&pool->lock);
    }
}

size_t thread_pool_threads(const thread_pool *pool)
{
    return pool->threads;
}

void thread_pool_free(thread_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = 1;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    for (size_t t = 1; pool->ids && t < pool->threads; t++)
        pthread_join(pool->ids[t], NULL);
    free(pool->ids);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->work);
    pthread_cond_destroy(&pool->done);
    free(pool);
}
