/* A fixed set of threads that run numbered tasks. Tasks write disjoint
 * outputs, so which thread runs which task changes nothing in the result. */
#ifndef VARPROF_THREAD_POOL_H
#define VARPROF_THREAD_POOL_H

#include <stddef.h>

#include "varprof/status.h"

typedef struct vp_pool vp_pool;

/* task(ctx, index, thread) for index < n_tasks; thread < vp_pool_threads(). */
typedef void (*vp_pool_task)(void *ctx, size_t index, size_t thread);

/* A pool of `threads` (>= 1; the caller is one of them). NULL with err on
 * failure (VP_ENOMEM, VP_ETHREAD). */
vp_pool *vp_pool_create(size_t threads, vp_error *err);

/* Runs every task and returns when all are done. */
void vp_pool_run(vp_pool *pool, size_t n_tasks, vp_pool_task task, void *ctx);

size_t vp_pool_threads(const vp_pool *pool);

/* Stops and joins the threads; NULL is allowed. */
void vp_pool_free(vp_pool *pool);

#endif
