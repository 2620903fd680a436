/* The Monte Carlo engine: checks, memory, threads, and the hand-over to
 * the statistics. */
#include "varprof/mc.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mc/mc_internal.h"
#include "core/profile_header.h"
#include "sys/progress_meter.h"

const char *const vp_mc_generator = "philox4x32-10";

void vp_mc_options_init(vp_mc_options *options)
{
    *options = (vp_mc_options){
        .width = VP_MC_DEFAULT_WIDTH,
        .trials = VP_MC_DEFAULT_TRIALS,
        .seed = 1,
        .threads = 1,
        .norm = VP_NORM_LAYERNORM,
        .eps = VP_MC_DEFAULT_EPS,
        .method = VP_MC_REDUCED,
    };
}

static vp_sampling_method sampling_method(vp_mc_method method)
{
    return method == VP_MC_FULL ? VP_SAMPLING_FULL : VP_SAMPLING_REDUCED;
}

const char *vp_mc_method_name(vp_mc_method method)
{
    return vp_sampling_method_name(sampling_method(method));
}

/* a * b + c, or 0 with *overflow set */
static size_t mul_add(size_t a, size_t b, size_t c, int *overflow)
{
    if (b != 0 && a > (SIZE_MAX - c) / b) {
        *overflow = 1;
        return 0;
    }
    return a * b + c;
}

vp_status mc_memory_needed(const vp_config *cfg, const vp_mc_options *options, size_t *bytes,
                           vp_error *err)
{
    int overflow = 0;
    const size_t k_total = vp_config_sub_blocks(cfg);
    const size_t per_cell = cfg->grad ? 6 : 3; /* xx, oo, cc, and gg, ff, hh for --grad */
    size_t cells = mul_add(k_total + 1, options->trials, 0, &overflow);
    size_t total = mul_add(cells, per_cell * sizeof(double), 0, &overflow); /* the samples */
    total = mul_add(options->trials, 5 * sizeof(double), total, &overflow); /* statistics */
    total = mul_add(k_total + 1, sizeof(vp_row), total, &overflow);         /* the profile */
    const size_t threads = options->threads < options->trials ? options->threads : options->trials;
    if (options->method == VP_MC_FULL) {
        const size_t workspace =
            mc_full_workspace_bytes(options->width, k_total, vp_config_branches(cfg), cfg->grad);
        if (workspace == 0 || workspace > SIZE_MAX - 64)
            overflow = 1;
        else
            total = mul_add(threads, workspace + 64, total, &overflow);
    }
    if (overflow)
        return vp_fail(err, VP_EOVERFLOW, "the run's memory does not fit in an address");
    *bytes = total;
    return VP_OK;
}

static size_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return SIZE_MAX;
    return (size_t)pages * (size_t)page;
}

/* The backward half needs every coordinate (the reduced method keeps a few
 * sums, and the gradient's direction is not among them) and a tape of the
 * forward per thread, which must stay within MC_TAPE_MAX_BYTES. */
static vp_status check_grad(const vp_config *cfg, const vp_mc_options *o, vp_error *err)
{
    if (!cfg->grad)
        return VP_OK;
    if (o->method != VP_MC_FULL)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_METHOD_FULL,
                           "the backward half is sampled by the full method "
                           "only (the reduced method keeps a few sums of each token, not its "
                           "gradient's d coordinates)");
    const size_t k_total = vp_config_sub_blocks(cfg);
    const size_t tape = mc_tape_bytes(o->width, k_total, vp_config_branches(cfg));
    if (tape == 0 || tape > MC_TAPE_MAX_BYTES)
        return vp_fail_fix(err, VP_EINVAL, VP_FIX_WIDTH_OR_LAYERS,
                           "the backward half keeps each token's forward, width "
                           "%zu x %zu sub-blocks, %.3g GiB per thread; at most %.3g GiB is "
                           "allowed",
                           o->width, k_total, tape == 0 ? INFINITY : (double)tape / 1073741824.0,
                           (double)MC_TAPE_MAX_BYTES / 1073741824.0);
    return VP_OK;
}

vp_status vp_mc_check(const vp_config *cfg, const vp_mc_options *o, vp_error *err)
{
    vp_status status = vp_config_check(cfg, err);
    if (status != VP_OK)
        return status;
    const size_t min_width = o->norm == VP_NORM_LAYERNORM ? 2 : 1;
    if (o->width < min_width || o->width > VP_MC_MAX_WIDTH)
        return vp_fail(err, VP_EINVAL, "width is %zu; it must be from %zu to %u%s", o->width,
                       min_width, VP_MC_MAX_WIDTH,
                       min_width == 2 ? " (LayerNorm centres: one coordinate is always 0)" : "");
    if (o->trials < 2 || o->trials > VP_MC_MAX_TRIALS)
        return vp_fail(err, VP_EINVAL, "trials is %zu; it must be from 2 to %u", o->trials,
                       VP_MC_MAX_TRIALS);
    if (o->threads < 1 || o->threads > VP_MC_MAX_THREADS)
        return vp_fail(err, VP_EINVAL, "threads is %zu; it must be from 1 to %u", o->threads,
                       VP_MC_MAX_THREADS);
    if (o->norm != VP_NORM_LAYERNORM && o->norm != VP_NORM_RMSNORM)
        return vp_fail(err, VP_EINVAL, "the norm must be LayerNorm or RMSNorm");
    if (!(o->eps > 0.0 && o->eps < 1e300))
        return vp_fail(err, VP_EINVAL, "eps is %g; it must be a finite number > 0", o->eps);
    if (vp_config_sub_blocks(cfg) > UINT32_MAX)
        return vp_fail(err, VP_EINVAL, "too many sub-blocks for the generator's counter");
    if ((status = check_grad(cfg, o, err)) != VP_OK)
        return status;
    size_t bytes;
    if ((status = mc_memory_needed(cfg, o, &bytes, err)) != VP_OK)
        return status;
    const size_t have = physical_memory();
    if (bytes > have / 2)
        return vp_fail(err, VP_ENOMEM,
                       "%zu layers x %zu trials (width %zu, %zu threads) would need %.3g GiB, "
                       "more than half of this machine's %.3g GiB; use fewer trials, layers, or "
                       "for the full method a smaller width or fewer threads",
                       cfg->layers, o->trials, o->width, o->threads, (double)bytes / 1073741824.0,
                       (double)have / 1073741824.0);
    return VP_OK;
}

typedef struct {
    const mc_job *job;
    size_t first, end; /* tokens [first, end) */
    vp_status status;
    progress_meter *meter;
} worker;

/* Tokens counted at once: the meter's shared counter is touched rarely. */
#define TOKENS_PER_REPORT 64

static void count_token(const worker *w, size_t t)
{
    if ((t - w->first + 1) % TOKENS_PER_REPORT == 0 || t + 1 == w->end)
        progress_meter_add(w->meter, (t - w->first) % TOKENS_PER_REPORT + 1);
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    const mc_job *job = w->job;
    if (job->options->method == VP_MC_REDUCED) {
        mc_reduced_workspace *workspace = mc_reduced_workspace_alloc();
        if (!workspace) {
            w->status = VP_ENOMEM;
            return NULL;
        }
        for (size_t t = w->first; t < w->end; t++) {
            mc_reduced_token(job, t, workspace);
            count_token(w, t);
        }
        mc_reduced_workspace_free(workspace);
    } else {
        void *memory = NULL;
        const size_t bytes = mc_full_workspace_bytes(job->options->width, job->sub_blocks,
                                                     vp_config_branches(job->cfg), job->cfg->grad);
        if (posix_memalign(&memory, 64, bytes) != 0) {
            w->status = VP_ENOMEM;
            return NULL;
        }
        for (size_t t = w->first; t < w->end; t++) {
            mc_full_token(job, t, memory);
            count_token(w, t);
        }
        free(memory);
    }
    return NULL;
}

/* Splits the tokens into contiguous ranges, one per thread. Each token is
 * sampled from its own counters and stored in its own slots, so the split
 * changes nothing in the result. */
static vp_status run_threads(const mc_job *job, vp_error *err)
{
    const size_t n = job->options->trials;
    size_t threads = job->options->threads < n ? job->options->threads : n;
    worker *workers = calloc(threads, sizeof *workers);
    pthread_t *ids = calloc(threads, sizeof *ids);
    if (!workers || !ids) {
        free(workers);
        free(ids);
        return vp_fail(err, VP_ENOMEM, "no memory for %zu threads", threads);
    }
    size_t started = 0;
    vp_status status = VP_OK;
    progress_meter meter;
    progress_meter_start(&meter, job->options->progress, n);
    for (size_t i = 0; i < threads; i++) {
        workers[i] = (worker){job, i * n / threads, (i + 1) * n / threads, VP_OK, &meter};
        if (threads == 1) {
            run_worker(&workers[0]);
        } else if (pthread_create(&ids[i], NULL, run_worker, &workers[i]) != 0) {
            status = vp_fail(err, VP_ETHREAD, "cannot start thread %zu of %zu", i + 1, threads);
            break;
        }
        started = i + 1;
    }
    for (size_t i = 0; threads > 1 && i < started; i++)
        pthread_join(ids[i], NULL);
    progress_meter_finish(&meter);
    for (size_t i = 0; status == VP_OK && i < started; i++)
        if (workers[i].status != VP_OK)
            status = vp_fail(err, workers[i].status, "a worker ran out of memory");
    free(workers);
    free(ids);
    return status;
}

/* The branch noise's scale beyond g rms(h). DeepNet multiplies both of a
 * branch's weight matrices by beta; the reduced method draws a block's n
 * summed branches as one noise of n times the variance, where the full
 * method draws each. */
static double branch_scale(const vp_config *cfg, const vp_mc_options *options)
{
    const double beta2 =
        vp_placement_traits_of(cfg->placement)->branch_beta ? cfg->beta * cfg->beta : 1.0;
    const double branches = (double)vp_config_branches(cfg);
    return beta2 * (options->method == VP_MC_REDUCED ? sqrt(branches) : 1.0);
}

void mc_set_header(vp_profile *profile, const vp_config *cfg, const vp_mc_options *options)
{
    const vp_sampling sampling = {.width = options->width,
                                  .trials = options->trials,
                                  .seed = options->seed,
                                  .generator = vp_mc_generator,
                                  .method = sampling_method(options->method),
                                  .eps = options->eps};
    profile_set_header(profile, VP_ENGINE_MC, options->norm, cfg,
                       VP_HAS_BOUNDS | VP_HAS_PERCENTILES | (cfg->grad ? VP_HAS_GRAD : 0u),
                       &sampling);
}

vp_status vp_mc_profile(const vp_config *cfg, const vp_mc_options *options, vp_profile **out,
                        vp_error *err)
{
    *out = NULL;
    vp_status status = vp_mc_check(cfg, options, err);
    if (status != VP_OK)
        return status;
    gsl_set_error_handler_off(); /* GSL reports through return values, never aborts */
    const vp_placement_traits *traits = vp_placement_traits_of(cfg->placement);
    const size_t k_total = vp_config_sub_blocks(cfg);
    const size_t cells = (k_total + 1) * options->trials;
    mc_job job = {
        .cfg = cfg,
        .options = options,
        .params =
            {
                .traits = traits,
                .norm = options->norm,
                .d = (double)options->width,
                .eps = options->eps,
                .gamma = cfg->gamma,
                .alpha = traits->residual_alpha ? cfg->alpha : 1.0,
                .branch_scale = branch_scale(cfg, options),
            },
        .sub_blocks = k_total,
        .kern = kern_current(),
        .samples = {malloc(cells * sizeof(double)), malloc(cells * sizeof(double)),
                    malloc(cells * sizeof(double))},
    };
    if (cfg->grad) {
        job.samples.gg = malloc(cells * sizeof(double));
        job.samples.ff = malloc(cells * sizeof(double));
        job.samples.hh = malloc(cells * sizeof(double));
    }
    const int have_grad = !cfg->grad || (job.samples.gg && job.samples.ff && job.samples.hh);
    vp_profile *profile = vp_profile_alloc(k_total);
    if (!profile || !job.samples.xx || !job.samples.oo || !job.samples.cc || !have_grad) {
        status = vp_fail(err, VP_ENOMEM, "no memory for %zu samples", cells);
    } else {
        status = run_threads(&job, err);
    }
    if (status == VP_OK) {
        mc_set_header(profile, cfg, options);
        if (mc_fill_rows(&job, profile) != VP_OK)
            status = vp_fail(err, VP_ENOMEM, "no memory for the percentiles");
        else if (cfg->grad)
            status = mc_fill_grad_rows(&job, profile, err);
    }
    free(job.samples.xx);
    free(job.samples.oo);
    free(job.samples.cc);
    free(job.samples.gg);
    free(job.samples.ff);
    free(job.samples.hh);
    if (status != VP_OK) {
        vp_profile_free(profile);
        return status;
    }
    *out = profile;
    return VP_OK;
}
