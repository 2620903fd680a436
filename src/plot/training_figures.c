/* The seed's training claims drawn (include/varprof/figures.h): sweeps of
 * the seed's experiment through vp_train_many, as `varprof train` runs them,
 * and a heat map of Post-LN's per-layer gradient norms. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plot/plot_internal.h"
#include "sys/progress_meter.h"
#include "varprof/figures.h"
#include "varprof/train.h"
#include "varprof/train_output.h"

#define SEED_LAYERS 24
#define SEED_STEPS 301
#define WARMUP_STEPS 100
#define MAX_RUNS 6

static const vp_figure_info figures[] = {
    {"train-warmup", "The seed's experiment with and without 100 steps of warm-up: at 301 steps "
                     "warm-up leaves both placements worse, Post-LN at 0.018 against 0.0099."},
    {"train-depth", "8 layers against 24: Post-LN's loss over pre-norm's falls from 47 to 17, "
                    "the absolute gap stays."},
    {"train-lr", "Learning rates 1e-3, 3e-3 and 1e-2: both train better at 3e-3; Post-LN falls "
                 "apart at 1e-2, pre-norm does not."},
    {"train-layers", "Post-LN's gradient norm per layer and step, without warm-up and with 100 "
                     "steps of it."},
};
enum { N_FIGURES = sizeof figures / sizeof figures[0] };

const vp_figure_info *vp_training_figures_list(size_t *n)
{
    *n = N_FIGURES;
    return figures;
}

/* The seed's experiment, one run of it. */
static void seed_job(vp_train_job *job, vp_placement placement, size_t layers, double lr,
                     size_t warmup)
{
    memset(job, 0, sizeof *job);
    vp_config_init(&job->config, placement, layers);
    job->config.mlp_only = 1;
    job->config.final_norm = VP_FINAL_NORM_NO;
    vp_forward_options *n = &job->network;
    vp_forward_options_init(n);
    n->width = 48;
    n->heads = 1;
    n->ffn_mult = 2;
    n->vocab = 24;
    n->batch = 16;
    n->tokens = 12;
    n->init = VP_INIT_TORCH;
    n->seed = 1;
    vp_train_options_init(&job->train);
    job->train.steps = SEED_STEPS;
    job->train.lr = lr;
    job->train.warmup = warmup;
}

static size_t threads_of(const vp_figures_options *opts)
{
    return opts->threads ? opts->threads : 1;
}

static void free_results(vp_train_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        vp_train_result_free(jobs[i].result);
}

/* Both placements at each value of one axis, trained and drawn. */
static vp_status sweep_figure(const vp_figures_options *opts, const char *name,
                              const size_t *layers, const double *lrs, const size_t *warmups,
                              size_t values, vp_error *err)
{
    const vp_placement placements[] = {VP_PRE_NORM, VP_POST_LN};
    vp_train_job jobs[MAX_RUNS];
    size_t n = 0;
    for (size_t p = 0; p < 2; p++)
        for (size_t v = 0; v < values; v++)
            seed_job(&jobs[n++], placements[p], layers[v], lrs[v], warmups[v]);
    vp_status status = vp_train_many(jobs, n, threads_of(opts), NULL, err);
    vp_figure *figure = NULL;
    if (status == VP_OK)
        status = vp_plot_training(jobs, n, &figure, err);
    if (status == VP_OK)
        status = plot_draw_named(figure, opts, name, err);
    vp_figure_free(figure);
    free_results(jobs, n);
    return status;
}

/* Sums each layer's tensors' squared gradient norms per step. */
typedef struct {
    double *grad; /* [steps][layers], squares until the end */
    size_t layers;
} layer_sums;

static void add_tensor(void *ctx, const vp_train_tensor *t)
{
    layer_sums *s = ctx;
    char *end;
    if (strncmp(t->name, "layers.", 7) != 0)
        return; /* the embedding, the head */
    const unsigned long layer = strtoul(t->name + 7, &end, 10);
    if (end == t->name + 7 || layer >= s->layers)
        return;
    s->grad[t->step * s->layers + layer] += t->grad_norm * t->grad_norm;
}

static vp_status layers_figure(const vp_figures_options *opts, vp_error *err)
{
    static const size_t warmups[] = {0, WARMUP_STEPS};
    static const char *const labels[] = {"Post-LN, no warm-up", "Post-LN, 100 steps of warm-up"};
    enum { CELLS = SEED_STEPS * SEED_LAYERS };
    double *grads = calloc(2 * CELLS, sizeof(double)); /* both runs' maps */
    if (!grads)
        return vp_fail(err, VP_ENOMEM, "no memory for the layers' gradient norms");
    vp_train_job jobs[2];
    layer_sums sums[2];
    for (size_t i = 0; i < 2; i++) {
        seed_job(&jobs[i], VP_POST_LN, SEED_LAYERS, 1e-3, warmups[i]);
        sums[i] = (layer_sums){grads + i * CELLS, SEED_LAYERS};
        jobs[i].train.on_tensor = add_tensor;
        jobs[i].train.tensor_ctx = &sums[i];
    }
    vp_status status = vp_train_many(jobs, 2, threads_of(opts), NULL, err);
    vp_layer_grad_map maps[2];
    for (size_t i = 0; i < 2 && status == VP_OK; i++) {
        for (size_t k = 0; k < CELLS; k++)
            sums[i].grad[k] = sqrt(sums[i].grad[k]);
        maps[i] =
            (vp_layer_grad_map){labels[i], jobs[i].result->steps_run, SEED_LAYERS, sums[i].grad};
    }
    vp_figure *figure = NULL;
    if (status == VP_OK)
        status = vp_plot_layer_grads(maps, 2, &figure, err);
    if (status == VP_OK)
        status = plot_draw_named(figure, opts, "train-layers", err);
    vp_figure_free(figure);
    free_results(jobs, 2); /* NULL where a run failed */
    free(grads);
    return status;
}

vp_status vp_training_figures_write(const vp_figures_options *opts, vp_error *err)
{
    if (!opts->outdir || !*opts->outdir)
        return vp_fail(err, VP_EINVAL, "no output folder given");
    const char *ext = opts->extension ? opts->extension : "";
    if (strcmp(ext, "svg") != 0 && strcmp(ext, "png") != 0 && strcmp(ext, "pdf") != 0)
        return vp_fail(err, VP_EINVAL, "unknown figure format '%s'; valid: svg, png, pdf", ext);
    if (mkdir(opts->outdir, 0777) != 0 && errno != EEXIST)
        return vp_fail(err, VP_EIO, "cannot make folder '%s': %s", opts->outdir, strerror(errno));
    if (opts->script_dir && mkdir(opts->script_dir, 0777) != 0 && errno != EEXIST)
        return vp_fail(err, VP_EIO, "cannot make folder '%s': %s", opts->script_dir,
                       strerror(errno));
    progress_meter meter;
    progress_meter_start(&meter, opts->progress, N_FIGURES);
    const size_t seed_layers[] = {SEED_LAYERS, SEED_LAYERS, SEED_LAYERS};
    const double seed_lr[] = {1e-3, 1e-3, 1e-3};
    const size_t no_warmup[] = {0, 0, 0};
    const size_t warmups[] = {0, WARMUP_STEPS};
    const size_t depths[] = {8, SEED_LAYERS};
    const double lrs[] = {1e-3, 3e-3, 1e-2};
    vp_status status = progress_meter_count(
        &meter, sweep_figure(opts, "train-warmup", seed_layers, seed_lr, warmups, 2, err));
    if (status == VP_OK)
        status = progress_meter_count(
            &meter, sweep_figure(opts, "train-depth", depths, seed_lr, no_warmup, 2, err));
    if (status == VP_OK)
        status = progress_meter_count(
            &meter, sweep_figure(opts, "train-lr", seed_layers, lrs, no_warmup, 3, err));
    if (status == VP_OK)
        status = progress_meter_count(&meter, layers_figure(opts, err));
    progress_meter_finish(&meter);
    return status;
}
