/* varprof train: every combination of the listed placements, layers,
 * learning rates, warm-ups and seeds trained (vp_train_many), then written
 * as the seed's table, CSV or JSON, with the loss curves drawn on request. */
#include <stdlib.h>
#include <string.h>

#include "fix_hint.h"
#include "commands.h"
#include "option_lists.h"
#include "output_file.h"
#include "output_format.h"
#include "progress_line.h"
#include "shard_option.h"
#include "train_layer_stats.h"
#include "weights_options.h"
#include "weights_shape.h"
#include "varprof/varprof.h"

#define MAX_JOBS CLI_LIST_MAX

typedef struct {
    vp_config base;
    vp_forward_options network;
    vp_train_options train;
    output_format format;
    size_t every, threads;
    vp_placement placements[VP_PLACEMENT_COUNT];
    size_t n_placements, n_layers, n_lrs, n_warmups, n_seeds;
    size_t layers[CLI_LIST_MAX], warmups[CLI_LIST_MAX];
    double lrs[CLI_LIST_MAX];
    unsigned long long seeds[CLI_LIST_MAX];
    vp_safetensors weights; /* --weights, owned */
    int have_weights;
    /* --weights DIR's config.json: network.layer_kinds points into it */
    vp_hf_architecture arch;
    unsigned *stream; /* --token-stream, owned */
    vp_train_job jobs[MAX_JOBS];
    layer_stats stats[MAX_JOBS];
    size_t n_jobs;
} train_request;

/* ---- reading the options ---- */

static int read_placements(const cli_args *args, train_request *req)
{
    if (!args->given[OPT_TRAIN_PLACEMENT]) {
        req->placements[0] = VP_PRE_NORM;
        req->placements[1] = VP_POST_LN;
        req->n_placements = 2;
        return EXIT_OK;
    }
    list_buffer list;
    int rc = cli_list_items(args, OPT_TRAIN_PLACEMENT, &list, VP_PLACEMENT_COUNT);
    if (rc != EXIT_OK)
        return rc;
    for (size_t i = 0; i < list.n; i++) {
        vp_error err;
        vp_placement p;
        if (vp_placement_parse(list.items[i], &p, &err) != VP_OK)
            return cli_usage_error("--placement: %s", err.message);
        for (size_t j = 0; j < req->n_placements; j++)
            if (req->placements[j] == p)
                return cli_usage_error("--placement: '%s' is in the list twice", list.items[i]);
        req->placements[req->n_placements++] = p;
    }
    return EXIT_OK;
}

/* The lists (each a sweep's axis), their defaults the seed's. */
static int read_lists(const cli_args *args, train_request *req)
{
    int rc;
    size_t seeds[CLI_LIST_MAX];
    if ((rc = cli_size_list(args, OPT_TRAIN_LAYERS, 1, VP_TRAIN_MAX_LAYERS, req->layers,
                            CLI_LIST_MAX, &req->n_layers)) != EXIT_OK ||
        (rc = cli_double_list(args, OPT_LR, 0.0, 1, req->lrs, CLI_LIST_MAX, &req->n_lrs)) !=
            EXIT_OK ||
        (rc = cli_size_list(args, OPT_WARMUP, 0, VP_TRAIN_MAX_STEPS, req->warmups, CLI_LIST_MAX,
                            &req->n_warmups)) != EXIT_OK ||
        (rc = cli_size_list(args, OPT_TRAIN_SEED, 0, SIZE_MAX, seeds, CLI_LIST_MAX,
                            &req->n_seeds)) != EXIT_OK)
        return rc;
    if (!req->n_layers)
        req->layers[req->n_layers++] = VP_TRAIN_SEED_LAYERS;
    if (!req->n_lrs)
        req->lrs[req->n_lrs++] = 1e-3;
    if (!req->n_warmups)
        req->warmups[req->n_warmups++] = 0;
    for (size_t i = 0; i < req->n_seeds; i++)
        req->seeds[i] = seeds[i];
    if (!req->n_seeds)
        req->seeds[req->n_seeds++] = 1;
    return EXIT_OK;
}

static int read_choices(const cli_args *args, train_request *req)
{
    static const char *const tasks[] = {"copy", "next", NULL};
    static const char *const schedules[] = {"constant", "cosine", NULL};
    static const char *const blocks[] = {"mlp", "attn-mlp", NULL};
    static const char *const inits[] = {"torch", "gain", NULL};
    static const char *const yes_no[] = {"no", "yes", NULL};
    int task = 0, schedule = 0, block = 0, init = 0, final_norm = 0, rc;
    if ((rc = cli_choice(args, OPT_TASK, tasks, &task)) != EXIT_OK ||
        (rc = cli_choice(args, OPT_SCHEDULE, schedules, &schedule)) != EXIT_OK ||
        (rc = cli_choice(args, OPT_TRAIN_BLOCK, blocks, &block)) != EXIT_OK ||
        (rc = cli_choice(args, OPT_TRAIN_INIT, inits, &init)) != EXIT_OK ||
        (rc = cli_choice(args, OPT_TRAIN_FINAL_NORM, yes_no, &final_norm)) != EXIT_OK)
        return rc;
    req->train.task = (vp_task)task;
    req->train.schedule = (vp_schedule)schedule;
    req->base.mlp_only = block == 0;
    req->network.init = init == 0 ? VP_INIT_TORCH : VP_INIT_GAIN;
    if (args->given[OPT_TRAIN_FINAL_NORM])
        req->base.final_norm = final_norm ? VP_FINAL_NORM_YES : VP_FINAL_NORM_NO;
    return EXIT_OK;
}

static int read_sizes(const cli_args *args, train_request *req)
{
    vp_forward_options *n = &req->network;
    vp_train_options *t = &req->train;
    int rc;
    if ((rc = cli_size(args, OPT_TRAIN_WIDTH, 1, VP_FORWARD_MAX_WIDTH, &n->width)) != EXIT_OK ||
        (rc = cli_size(args, OPT_TRAIN_VOCAB, 1, VP_FORWARD_MAX_VOCAB, &n->vocab)) != EXIT_OK ||
        (rc = cli_size(args, OPT_TRAIN_FFN_MULT, 1, VP_FORWARD_MAX_FFN_MULT, &n->ffn_mult)) !=
            EXIT_OK ||
        (rc = cli_size(args, OPT_TRAIN_BATCH, 1, VP_FORWARD_MAX_BATCH, &n->batch)) != EXIT_OK ||
        (rc = cli_size(args, OPT_TRAIN_TOKENS, 1, VP_FORWARD_MAX_TOKENS, &n->tokens)) != EXIT_OK ||
        (rc = cli_size(args, OPT_STEPS, 1, VP_TRAIN_MAX_STEPS, &t->steps)) != EXIT_OK ||
        (rc = cli_size(args, OPT_TRAIN_EVERY, 1, VP_TRAIN_MAX_STEPS, &req->every)) != EXIT_OK ||
        (rc = cli_double(args, OPT_CLIP_NORM, 0.0, 1, &t->clip_norm)) != EXIT_OK ||
        (rc = cli_double(args, OPT_WEIGHT_DECAY, 0.0, 0, &t->weight_decay)) != EXIT_OK)
        return rc;
    return EXIT_OK;
}

/* --weights: the file says the shape, as for the forward pass; the options
   it decides may not be given against it */
static int read_weights(const cli_args *args, train_request *req)
{
    if (!args->given[OPT_WEIGHTS])
        return EXIT_OK;
    vp_error err;
    /* kept in req: the layer kinds point into it */
    vp_hf_architecture *arch = &req->arch;
    int checkpoint = 0, rc = weights_refuse_json(args); /* a checkpoint's file for its folder */
    if (rc != EXIT_OK)
        return rc;
    if (weights_read(args->value[OPT_WEIGHTS], &req->weights, arch, &checkpoint, &err) != VP_OK)
        return cli_runtime_error("--weights: %s", err.message);
    req->have_weights = 1;
    if (!checkpoint && (rc = weights_refuse_checkpoint_file(args, &req->weights)) != EXIT_OK)
        return rc;
    const weights_shape_given given =
        weights_shape_given_by(args, OPT_TRAIN_WIDTH, OPT_TRAIN_VOCAB, OPT_TRAIN_FFN_MULT,
                               OPT_TRAIN_LAYERS, OPT_TRAIN_BLOCK);
    vp_config shape = req->base;
    shape.layers = req->layers[0];
    if ((rc = weights_adopt(args, &req->weights, checkpoint ? arch : NULL, &given, &shape,
                            &req->network, 1)) != EXIT_OK)
        return rc;
    if (checkpoint) {
        if (args->given[OPT_TRAIN_PLACEMENT] &&
            (req->n_placements != 1 || req->placements[0] != arch->placement))
            return cli_usage_error("--placement %s: a %s checkpoint's names make it %s; leave "
                                   "--placement out",
                                   args->value[OPT_TRAIN_PLACEMENT], arch->model_type,
                                   vp_placement_name(arch->placement));
        req->placements[0] = arch->placement;
        req->n_placements = 1;
    }
    req->layers[0] = shape.layers;
    req->base.mlp_only = shape.mlp_only;
    if (!args->given[OPT_TRAIN_FINAL_NORM])
        req->base.final_norm = VP_FINAL_NORM_DEFAULT; /* the file decides */
    req->network.weights = &req->weights;
    return EXIT_OK;
}

/* --token-stream: steps x batch rows of T ids */
static int read_stream(const cli_args *args, train_request *req)
{
    if (!args->given[OPT_TOKEN_STREAM])
        return EXIT_OK;
    vp_forward_options *n = &req->network;
    const char *path = args->value[OPT_TOKEN_STREAM];
    size_t rows, tokens;
    vp_error err;
    vp_status status = vp_token_ids_read(path, n->vocab, &req->stream, &rows, &tokens, &err);
    if (status == VP_EIO || status == VP_ENOMEM)
        return cli_runtime_error("--token-stream: %s", err.message);
    if (status != VP_OK)
        return cli_usage_error("--token-stream: %s", err.message);
    if (args->given[OPT_TRAIN_TOKENS] && tokens != n->tokens)
        return cli_usage_error("--token-stream: %s has rows of %zu ids, but --tokens %zu was "
                               "given; give the file alone",
                               path, tokens, n->tokens);
    n->tokens = tokens;
    if (rows % n->batch != 0)
        return cli_usage_error("--token-stream: %s holds %zu rows, not a whole number of steps "
                               "of %zu rows (--batch)",
                               path, rows, n->batch);
    req->train.token_stream = req->stream;
    req->train.token_stream_steps = rows / n->batch;
    if (req->train.token_stream_steps < req->train.steps)
        return cli_usage_error("--token-stream: %s holds %zu steps of %zu rows (lines 1 to "
                               "%zu); --steps %zu needs %zu lines",
                               path, req->train.token_stream_steps, n->batch, rows,
                               req->train.steps, req->train.steps * n->batch);
    return EXIT_OK;
}

static int read_format(const cli_args *args, train_request *req)
{
    cli_args as_profile = *args; /* --format's text read as profile reads its own */
    as_profile.value[OPT_FORMAT] = args->value[OPT_TRAIN_FORMAT];
    as_profile.given[OPT_FORMAT] = args->given[OPT_TRAIN_FORMAT];
    int rc = read_output_format(&as_profile, &req->format);
    if (rc != EXIT_OK)
        return rc;
    if (req->format != FORMAT_TEXT && req->format != FORMAT_CSV && req->format != FORMAT_JSON)
        return cli_usage_error("varprof train writes text, csv or json; for a table, write "
                               "csv and convert it");
    return EXIT_OK;
}

static int read_request(const cli_args *args, train_request *req)
{
    vp_config_init(&req->base, VP_PRE_NORM, VP_TRAIN_SEED_LAYERS);
    req->base.final_norm = VP_FINAL_NORM_NO;
    int rc = read_forward_options(args, &req->network); /* threads, norm, eps, heads, qk-norm */
    if (rc != EXIT_OK)
        return rc;
    vp_forward_options *n = &req->network;
    req->threads = n->threads;
    n->width = VP_TRAIN_SEED_WIDTH;
    n->vocab = VP_TRAIN_SEED_VOCAB;
    n->ffn_mult = VP_TRAIN_SEED_FFN_MULT;
    n->batch = VP_TRAIN_SEED_BATCH;
    n->tokens = VP_TRAIN_SEED_TOKENS;
    vp_train_options_init(&req->train);
    req->every = 100;
    if ((rc = read_placements(args, req)) != EXIT_OK || (rc = read_lists(args, req)) != EXIT_OK ||
        (rc = read_choices(args, req)) != EXIT_OK || (rc = read_sizes(args, req)) != EXIT_OK ||
        (rc = read_format(args, req)) != EXIT_OK || (rc = read_weights(args, req)) != EXIT_OK ||
        (rc = read_stream(args, req)) != EXIT_OK)
        return rc;
    if (!args->given[OPT_HEADS] && req->base.mlp_only)
        n->heads = 1; /* no attention: any width */
    if (!n->head_dim && n->width % n->heads != 0)
        return cli_usage_error("--heads: %zu heads do not divide the width %zu; give "
                               "--head-dim, or heads that divide it",
                               n->heads, n->width);
    for (size_t i = 0; i < req->n_warmups; i++)
        if (req->warmups[i] > req->train.steps)
            return cli_usage_error("--warmup: %zu steps is longer than the run (--steps %zu); "
                                   "it must be from 0 to %zu",
                                   req->warmups[i], req->train.steps, req->train.steps);
    if (req->have_weights && !n->tie_embeddings &&
        !vp_safetensors_find(&req->weights, "head.weight"))
        return cli_usage_error("--weights: %s has no 'head.weight': training needs the output "
                               "head, head.weight [%zu, %zu] and head.bias [%zu], or "
                               "--tie-embeddings yes to make the embedding the head",
                               args->value[OPT_WEIGHTS], n->vocab, n->width, n->vocab);
    static const option_id files[] = {OPT_OUTPUT, OPT_LAYER_STATS, OPT_SAVE};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = i + 1; j < 3; j++)
            if (args->given[files[i]] && args->given[files[j]] &&
                strcmp(args->value[files[i]], args->value[files[j]]) == 0)
                return cli_usage_error("%s and %s name the same file '%s'",
                                       cli_option_name(files[i]), cli_option_name(files[j]),
                                       args->value[files[i]]);
    return check_plot_options(args);
}

/* ---- the runs ---- */

static int make_jobs(const cli_args *args, train_request *req)
{
    const size_t count =
        req->n_placements * req->n_layers * req->n_lrs * req->n_warmups * req->n_seeds;
    if (count > MAX_JOBS)
        return cli_usage_error("the lists make %zu runs; at most %d in one command", count,
                               MAX_JOBS);
    for (size_t p = 0; p < req->n_placements; p++)
        for (size_t l = 0; l < req->n_layers; l++)
            for (size_t r = 0; r < req->n_lrs; r++)
                for (size_t w = 0; w < req->n_warmups; w++)
                    for (size_t s = 0; s < req->n_seeds; s++) {
                        vp_train_job *job = &req->jobs[req->n_jobs];
                        job->config = req->base;
                        vp_config_init(&job->config, req->placements[p], req->layers[l]);
                        job->config.mlp_only = req->base.mlp_only;
                        job->config.final_norm = req->base.final_norm;
                        job->network = req->network;
                        job->network.seed = req->seeds[s];
                        job->train = req->train;
                        job->train.lr = req->lrs[r];
                        job->train.warmup = req->warmups[w];
                        job->train.keep_weights = args->given[OPT_SAVE];
                        if (args->given[OPT_LAYER_STATS]) {
                            job->train.on_tensor = layer_stats_keep;
                            job->train.tensor_ctx = &req->stats[req->n_jobs];
                            req->stats[req->n_jobs].last_step = (size_t)-1;
                        }
                        vp_error err;
                        if (vp_train_check(&job->config, &job->network, &job->train, &err) != VP_OK)
                            return cli_usage_error("%s%s", err.message, cli_fix_hint(&err));
                        req->n_jobs++;
                    }
    if (args->given[OPT_SAVE] && req->n_jobs != 1)
        return cli_usage_error("--save writes one run's weights, but the lists make %zu runs; "
                               "train one combination to save it",
                               req->n_jobs);
    return EXIT_OK;
}

/* --shard K/N: part K of the runs, by each run's cost, its layers (the runs
   share width, batch and steps). The runs kept move to the front, with the
   layer statistics each one fills. */
static int shard_jobs(const cli_args *args, train_request *req)
{
    double costs[MAX_JOBS];
    for (size_t i = 0; i < req->n_jobs; i++)
        costs[i] = (double)req->jobs[i].config.layers;
    size_t first, end;
    const int rc = cli_shard_range(args, costs, req->n_jobs, &first, &end);
    if (rc != EXIT_OK)
        return rc;
    for (size_t i = first; i < end; i++) {
        req->jobs[i - first] = req->jobs[i];
        req->stats[i - first] = req->stats[i];
        if (req->jobs[i - first].train.tensor_ctx)
            req->jobs[i - first].train.tensor_ctx = &req->stats[i - first];
    }
    req->n_jobs = end - first;
    return EXIT_OK;
}

/* ---- writing ---- */

static vp_status write_results(const train_request *req, FILE *out)
{
    switch (req->format) {
    case FORMAT_CSV: return vp_train_write_csv(out, req->jobs, req->n_jobs);
    case FORMAT_JSON: return vp_train_write_json(out, req->jobs, req->n_jobs);
    default: return vp_train_write_text(out, req->jobs, req->n_jobs, req->every);
    }
}

static int save_weights(const cli_args *args, const vp_train_result *result)
{
    output_file out;
    int rc = output_open(&out, args->value[OPT_SAVE], args->given[OPT_FORCE]);
    if (rc != EXIT_OK)
        return rc;
    vp_error err;
    if (vp_safetensors_write(out.stream, result->weights, result->n_weights, &err) != VP_OK) {
        output_abort(&out);
        return cli_runtime_error("--save: %s", err.message);
    }
    return output_commit(&out);
}

static void free_request(train_request *req)
{
    for (size_t j = 0; j < req->n_jobs; j++) {
        vp_train_result_free(req->jobs[j].result);
        layer_stats_free(&req->stats[j]);
    }
    if (req->have_weights)
        vp_safetensors_free(&req->weights);
    free(req->stream);
}

static int train_and_write(const cli_args *args, train_request *req)
{
    output_file out = {0};
    int rc = output_open(&out, args->given[OPT_OUTPUT] ? args->value[OPT_OUTPUT] : NULL,
                         args->given[OPT_FORCE]);
    if (rc != EXIT_OK)
        return rc;
    progress_line line;
    progress_line_init(&line, args);
    const vp_progress *progress = progress_line_begin(&line, "training");
    vp_error err;
    vp_status status = vp_train_many(req->jobs, req->n_jobs, req->threads, progress, &err);
    progress_line_end(&line);
    if (status != VP_OK) {
        output_abort(&out);
        return cli_library_error(NULL, status, &err);
    }
    if (write_results(req, out.stream) != VP_OK) {
        output_abort(&out);
        return cli_runtime_error("writing the results failed");
    }
    if ((rc = output_commit(&out)) != EXIT_OK)
        return rc;
    if (args->given[OPT_LAYER_STATS] &&
        (rc = layer_stats_write(args, req->jobs, req->stats, req->n_jobs)) != EXIT_OK)
        return rc;
    if (args->given[OPT_SAVE] && (rc = save_weights(args, req->jobs[0].result)) != EXIT_OK)
        return rc;
    if (args->given[OPT_PLOT]) {
        vp_figure *figure;
        if (vp_plot_training(req->jobs, req->n_jobs, &figure, &err) != VP_OK)
            return cli_runtime_error("--plot: %s", err.message);
        rc = plot_figure(args, figure);
    }
    return rc;
}

int run_train(const cli_args *args)
{
    train_request *req = calloc(1, sizeof *req);
    if (!req)
        return cli_runtime_error("no memory for the request");
    int rc = read_request(args, req);
    if (rc == EXIT_OK)
        rc = make_jobs(args, req);
    if (rc == EXIT_OK)
        rc = shard_jobs(args, req);
    static const option_id files[] = {OPT_LAYER_STATS, OPT_SAVE};
    for (size_t i = 0; i < 2 && rc == EXIT_OK; i++) {
        if (!args->given[files[i]] || strcmp(args->value[files[i]], "-") == 0)
            continue;
        vp_error err;
        vp_status status =
            atomic_file_check(args->value[files[i]], args->given[OPT_FORCE], NULL, &err);
        if (status != VP_OK)
            rc = cli_library_error(cli_option_name(files[i]), status, &err);
    }
    if (rc == EXIT_OK)
        rc = train_and_write(args, req);
    free_request(req);
    free(req);
    return rc;
}
