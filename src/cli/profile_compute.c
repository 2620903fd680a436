/* varprof [profile]'s engines for one combination, and a sweep's
 * combinations several at once: runs first, then threads within a run. */
#include "profile_compute.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "fix_hint.h"
#include "sys/longest_first.h"
#include "sys/thread_pool.h"

void free_placement(placement_profiles *pp)
{
    vp_profile_free(pp->closed);
    vp_profile_free(pp->sampled);
    vp_profile_free(pp->forward);
    vp_profile_free(pp->predicted);
    *pp = (placement_profiles){0};
}

static void warn_overflow(const vp_profile *p)
{
    if (p->overflowed == VP_OVERFLOW_FLOAT_GRAD) {
        fprintf(stderr,
                "varprof: warning: %s: the gradient overflows float at sub-block %zu; no "
                "gradient figures from there down\n",
                vp_placement_name(p->config.placement), p->overflow_at);
        return;
    }
    fprintf(stderr,
            "varprof: warning: %s: the %s overflows double at sub-block %zu; rows stop "
            "at sub-block %zu\n",
            vp_placement_name(p->config.placement), vp_overflow_name(p->overflowed), p->overflow_at,
            p->overflow_at - 1);
}

void warn_overflows(const placement_profiles *pp)
{
    const vp_profile *all[] = {pp->closed, pp->sampled, pp->forward};
    for (size_t e = 0; e < 3; e++)
        if (all[e] && all[e]->overflow_at)
            warn_overflow(all[e]);
}

/* A sweep's combinations run at once (profile_compute_ahead) */
typedef struct {
    const profile_request *req;
    placement_profiles *all;
    const size_t *order; /* the combinations, longest first */
    size_t threads_each;
    progress_line *line;
    const vp_progress *shown; /* the line's own report; NULL: nothing shown */
    pthread_mutex_t lock;     /* the line, which every run reports to */
} ahead;

/* Where a run's progress goes: the line itself (one run at a time), or
   the line through the sweep's lock, labelled with this run (several at
   once: the line shows whichever reported last). */
typedef struct {
    progress_line *line;
    ahead *shared;
    char label[64];
    struct timespec started;
    vp_progress progress;
} run_progress;

static void shared_report(void *context, unsigned long long done, unsigned long long total)
{
    const run_progress *p = context;
    ahead *a = p->shared;
    pthread_mutex_lock(&a->lock);
    memcpy(a->line->label, p->label, sizeof p->label);
    a->line->started = p->started;
    a->shown->report(a->shown->context, done, total);
    pthread_mutex_unlock(&a->lock);
}

static const vp_progress *progress_begin(run_progress *p, const char *label)
{
    if (p->line)
        return progress_line_begin(p->line, label);
    if (!p->shared || !p->shared->shown)
        return NULL;
    snprintf(p->label, sizeof p->label, "%s", label);
    clock_gettime(CLOCK_MONOTONIC, &p->started);
    p->progress = (vp_progress){shared_report, p};
    return &p->progress;
}

static void progress_end(run_progress *p)
{
    if (p->line)
        progress_line_end(p->line);
}

/* Which engine failed, for its message. */
typedef enum { FAILED_NONE, FAILED_CLOSED, FAILED_MC, FAILED_FORWARD } failed_engine;

/* The engines of combination i on cfg, mc and fw, printing nothing but
   their progress. */
static failed_engine run_engines(const profile_request *req, vp_config *cfg, vp_mc_options *mc,
                                 vp_forward_options *fw, run_progress *line,
                                 placement_profiles *out, vp_error *err)
{
    if (profile_has(req, ENGINE_CLOSED) && vp_closed_profile(cfg, &out->closed, err) != VP_OK)
        return FAILED_CLOSED;
    char label[64];
    if (profile_has(req, ENGINE_MC)) {
        snprintf(label, sizeof label, "Monte Carlo, %s", vp_placement_name(cfg->placement));
        mc->progress = progress_begin(line, label);
        const vp_status status = vp_mc_profile(cfg, mc, &out->sampled, err);
        progress_end(line);
        if (status != VP_OK)
            return FAILED_MC;
    }
    if (!profile_has(req, ENGINE_FORWARD))
        return FAILED_NONE;
    snprintf(label, sizeof label, "forward pass, %s", vp_placement_name(cfg->placement));
    fw->progress = progress_begin(line, label);
    if (req->grad_norms) {
        fw->on_param_grad = vp_grad_norms_add;
        fw->param_grad_ctx = req->grad_norms;
    }
    const vp_status status = vp_forward_profile(cfg, fw, &out->forward, err);
    progress_end(line);
    if (status != VP_OK || (profile_has(req, ENGINE_CLOSED) &&
                            vp_closed_predict(out->forward, &out->predicted, err) != VP_OK))
        return FAILED_FORWARD;
    return FAILED_NONE;
}

int compute_placement(const profile_request *req, size_t i, size_t threads, progress_line *line,
                      placement_profiles *out)
{
    vp_sweep_point point;
    vp_config cfg;
    vp_mc_options mc;
    vp_forward_options fw;
    *out = (placement_profiles){0};
    int rc = profile_combination(req, i, &point, &cfg, &mc, &fw);
    if (rc != EXIT_OK)
        return rc;
    if (threads)
        mc.threads = fw.threads = threads;
    vp_error err;
    run_progress progress = {.line = line};
    const failed_engine failed = run_engines(req, &cfg, &mc, &fw, &progress, out, &err);
    if (failed != FAILED_NONE)
        free_placement(out);
    switch (failed) {
    case FAILED_CLOSED: return cli_runtime_error("%s", err.message);
    case FAILED_MC: return cli_runtime_error("Monte Carlo: %s%s", err.message, cli_fix_hint(&err));
    case FAILED_FORWARD:
        return cli_runtime_error("forward pass: %s%s", err.message, cli_fix_hint(&err));
    case FAILED_NONE: break;
    }
    warn_overflows(out);
    return EXIT_OK;
}

/* ---- a sweep's combinations at once ---- */

static void run_ahead(void *ctx, size_t index, size_t thread)
{
    (void)thread;
    ahead *a = ctx;
    const size_t i = a->order[index];
    vp_sweep_point point;
    vp_config cfg;
    vp_mc_options mc;
    vp_forward_options fw;
    placement_profiles *pp = &a->all[i];
    *pp = (placement_profiles){0};
    if (profile_combination(a->req, i, &point, &cfg, &mc, &fw) != EXIT_OK)
        return; /* not reached: the request checked every combination */
    mc.threads = fw.threads = a->threads_each;
    vp_error err;
    run_progress progress = {.shared = a};
    if (run_engines(a->req, &cfg, &mc, &fw, &progress, pp, &err) != FAILED_NONE)
        free_placement(pp); /* the writer runs it again, and says why */
    else
        pp->done = 1;
}

/* A combination's estimated cost: its sub-blocks times its width for the
   Monte Carlo's noise, squared for the forward pass's matmuls. */
static double cost_of(const void *ctx, size_t i)
{
    const profile_request *req = ctx;
    vp_sweep_point point;
    vp_config cfg;
    vp_mc_options mc;
    vp_forward_options fw;
    if (profile_combination(req, i, &point, &cfg, &mc, &fw) != EXIT_OK)
        return 0.0;
    const double k = (double)vp_config_sub_blocks(&cfg);
    const double w = (double)(profile_has(req, ENGINE_FORWARD) ? fw.width : mc.width);
    return profile_has(req, ENGINE_FORWARD) ? k * w * w : k * w;
}

void profile_compute_ahead(const profile_request *req, progress_line *line, placement_profiles *all)
{
    const size_t n = req->n_combinations;
    size_t threads = profile_has(req, ENGINE_MC) ? req->mc.threads : 1;
    if (profile_has(req, ENGINE_FORWARD) && req->forward.threads > threads)
        threads = req->forward.threads;
    /* runs at once: no more than the cores can run (thread_pool_usable) */
    const size_t usable = thread_pool_usable(threads);
    const size_t at_once = n < usable ? n : usable;
    /* a network from --weights holds the file's weights, each run its own
       copy: several at once could outgrow the memory one run was checked
       against */
    const int from_file = profile_has(req, ENGINE_FORWARD) && req->forward.weights;
    if (at_once <= 1 || req->grad_norms || from_file ||
        !profile_has(req, ENGINE_MC | ENGINE_FORWARD))
        return; /* one at a time, as the writer goes */
    size_t *order = longest_first(n, cost_of, req);
    vp_error err;
    thread_pool *pool = order ? thread_pool_create(at_once, &err) : NULL;
    if (pool) {
        ahead a = {req, all, order, usable / at_once, line, NULL, PTHREAD_MUTEX_INITIALIZER};
        a.shown = progress_line_begin(line, "sweep");
        thread_pool_run(pool, n, run_ahead, &a);
        progress_line_end(line);
        pthread_mutex_destroy(&a.lock);
        thread_pool_free(pool);
    }
    free(order); /* without memory or threads, the writer runs them one at a time */
}
