/* A fixed set of threads that run numbered tasks. Tasks write disjoint
 * outputs, so which thread runs which task changes nothing in the result. */
#ifndef VARPROF_THREAD_POOL_H
#define VARPROF_THREAD_POOL_H

#include <stddef.h>

#include "varprof/status.h"

typedef struct thread_pool thread_pool;

/* task(ctx, index, thread) for index < n_tasks; thread < thread_pool_threads(). */
typedef void (*thread_pool_task)(void *ctx, size_t index, size_t thread);

/* The threads worth starting when `threads` are asked for: at most the
 * cores online, since more would only take turns on them, each turn a
 * switch and a cache refilled; at least 1. */
size_t thread_pool_usable(size_t threads);

/* A pool of thread_pool_usable(threads) threads (the caller is one of
 * them); tasks are still numbered as the caller splits its work, so a
 * split made for more threads runs, a few tasks a thread, on fewer. NULL
 * with err on failure (VP_ENOMEM, VP_ETHREAD). */
thread_pool *thread_pool_create(size_t threads, vp_error *err);

/* Runs every task and returns when all are done. */
void thread_pool_run(thread_pool *pool, size_t n_tasks, thread_pool_task task, void *ctx);

size_t thread_pool_threads(const thread_pool *pool);

/* Stops and joins the threads; NULL is allowed. */
void thread_pool_free(thread_pool *pool);

#endif
