/* varprof [profile]'s request: the engines, the stack, the sweep and each combination's checks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "fix_hint.h"
#include "nearest_name.h"
#include "page_tables.h"
#include "profile_request.h"
#include "shard_option.h"

int profile_has(const profile_request *req, unsigned engine)
{
    return (req->engines & engine) != 0;
}

int profile_comparing(const profile_request *req)
{
    return profile_has(req, ENGINE_CLOSED) && profile_has(req, ENGINE_MC | ENGINE_FORWARD);
}

vp_text_width profile_text_width(const profile_request *req)
{
    return req->wide ? VP_TEXT_WIDE : VP_TEXT_FIT_80;
}

/* --engine closed|mc|forward|all, or a list of the first three, each once;
 * without it the closed form, or with --weights the network the file holds
 * beside the closed form fed with its measured gains (closed,forward). */
static int read_engines(const cli_args *args, profile_request *req)
{
    static const char *const engines[] = {"closed", "mc", "forward", "all", NULL};
    list_buffer list;
    int rc = cli_list_items(args, OPT_ENGINE, &list, CLI_LIST_MAX);
    if (rc != EXIT_OK)
        return rc;
    req->engines = list.n > 0                 ? 0
                   : args->given[OPT_WEIGHTS] ? ENGINE_CLOSED | ENGINE_FORWARD
                                              : ENGINE_CLOSED;
    for (size_t i = 0; i < list.n; i++) {
        cli_args one = *args;
        one.value[OPT_ENGINE] = list.items[i];
        int which = 0;
        if ((rc = cli_choice(&one, OPT_ENGINE, engines, &which)) != EXIT_OK)
            return rc;
        const unsigned engine = which == 3 ? ENGINE_ALL : 1u << which;
        if (engine == ENGINE_ALL && list.n > 1)
            return cli_usage_error("--engine: '%s': all names every engine, so it stands alone; "
                                   "or list the engines, e.g. closed,mc",
                                   args->value[OPT_ENGINE]);
        if (req->engines & engine)
            return cli_usage_error("--engine: '%s' names %s twice", args->value[OPT_ENGINE],
                                   engines[which]);
        req->engines |= engine;
    }
    return EXIT_OK;
}

/* --gain, --layers and --width as lists; a list where one value is needed
 * is refused here, with the option that fixes it. */
static int read_sweep_lists(const cli_args *args, profile_request *req)
{
    int rc;
    size_t n;
    if ((rc = cli_list_items(args, OPT_GAIN, &req->gain_text, CLI_LIST_MAX)) != EXIT_OK ||
        (rc = cli_list_items(args, OPT_LAYERS, &req->layers_text, CLI_LIST_MAX)) != EXIT_OK ||
        (rc = cli_list_items(args, OPT_WIDTH, &req->width_text, CLI_LIST_MAX)) != EXIT_OK ||
        (rc = cli_double_list(args, OPT_GAIN, 0.0, 0, req->sweep_gains, CLI_LIST_MAX, &n)) !=
            EXIT_OK ||
        (rc = cli_size_list(args, OPT_LAYERS, 1, VP_MAX_LAYERS, req->sweep_layers, CLI_LIST_MAX,
                            &n)) != EXIT_OK ||
        /* the engines' readers hold each width to their own range */
        (rc = cli_size_list(args, OPT_WIDTH, 0, SIZE_MAX, req->sweep_widths, CLI_LIST_MAX, &n)) !=
            EXIT_OK)
        return rc;
    const struct {
        option_id id;
        const list_buffer *list;
    } fixed_by_weights[] = {{OPT_LAYERS, &req->layers_text}, {OPT_WIDTH, &req->width_text}};
    for (size_t i = 0; i < 2; i++)
        if (args->given[OPT_WEIGHTS] && fixed_by_weights[i].list->n > 1)
            return cli_usage_error("%s: '%s' is a sweep, but --weights fixes the network's "
                                   "shape; give one value",
                                   cli_option_name(fixed_by_weights[i].id),
                                   args->value[fixed_by_weights[i].id]);
    /* a placement's sub-blocks follow its depth, and a file holds one count */
    if (args->given[OPT_GAINS] && req->layers_text.n > 1)
        return cli_usage_error("--layers: '%s' is a sweep, but --gains gives one gain per "
                               "sub-block of one depth; give one value",
                               args->value[OPT_LAYERS]);
    req->sweeping = req->gain_text.n > 1 || req->layers_text.n > 1 || req->width_text.n > 1;
    return EXIT_OK;
}

cli_args profile_first_values(const cli_args *args, const profile_request *req)
{
    cli_args one = *args;
    if (req->gain_text.n)
        one.value[OPT_GAIN] = req->gain_text.items[0];
    if (req->layers_text.n)
        one.value[OPT_LAYERS] = req->layers_text.items[0];
    if (req->width_text.n)
        one.value[OPT_WIDTH] = req->width_text.items[0];
    return one;
}

/* A name of a --placement list that is none, with what the user most likely
 * meant: no spaces in a list, 'all' alone, or the nearest name. */
static int refuse_placement(const char *list, const char *name, const char *why)
{
    if (strchr(list, ' '))
        return cli_usage_error("--placement: '%s': a list takes no spaces; write the names "
                               "joined by commas alone, such as post-ln,pre-norm",
                               list);
    if (strcmp(name, "all") == 0)
        return cli_usage_error("--placement: '%s': 'all' must stand alone, not in a list", list);
    const char *names[VP_PLACEMENT_COUNT + 2] = {"pre-ln", "peri-norm"};
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
        names[2 + p] = vp_placement_name((vp_placement)p);
    const char *near = nearest_name(name, strlen(name), names, VP_PLACEMENT_COUNT + 2);
    if (near)
        return cli_usage_error("--placement: %s; did you mean %s?", why, near);
    return cli_usage_error("--placement: %s", why);
}

/* "all", or a comma list of names, each once. */
static int read_placements(const cli_args *args, profile_request *req)
{
    const char *list = args->given[OPT_PLACEMENT] ? args->value[OPT_PLACEMENT] : "pre-norm";
    if (strcmp(list, "all") == 0) {
        for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
            req->placements[req->n_placements++] = (vp_placement)p;
        return EXIT_OK;
    }
    char name[64];
    const char *start = list;
    for (;;) {
        const char *comma = strchr(start, ',');
        size_t length = comma ? (size_t)(comma - start) : strlen(start);
        if (length == 0 || length >= sizeof name)
            return cli_usage_error("--placement: '%s' is not a comma-separated list of "
                                   "placement names",
                                   list);
        memcpy(name, start, length);
        name[length] = '\0';
        vp_placement p;
        vp_error err;
        if (vp_placement_parse(name, &p, &err) != VP_OK)
            return refuse_placement(list, name, err.message);
        for (size_t i = 0; i < req->n_placements; i++)
            if (req->placements[i] == p)
                return cli_usage_error("--placement: '%s' names %s twice", list,
                                       vp_placement_name(p));
        req->placements[req->n_placements++] = p;
        if (!comma)
            return EXIT_OK;
        start = comma + 1;
    }
}

int profile_combination(const profile_request *req, size_t i, vp_sweep_point *point, vp_config *cfg,
                        vp_mc_options *mc, vp_forward_options *fw)
{
    *point = profile_point(req, i);
    *cfg = req->base;
    *mc = req->mc;
    *fw = req->forward;
    int rc = EXIT_OK;
    if (req->sweeping) {
        cli_args one = profile_first_values(req->args, req);
        rc = read_stack_at(&one, point->layers, point->gain, cfg);
        cfg->mlp_only = req->base.mlp_only;
    }
    if (point->width)
        mc->width = fw->width = point->width;
    cfg->placement = point->placement;
    cfg->gains = req->gains;
    cfg->n_gains = req->n_gains;
    return rc;
}

/* Each width of a --width list as the engines' readers take one: its range
 * for the Monte Carlo (2 up with LayerNorm) and the forward pass, and the
 * heads dividing it. */
static int check_width_list(const cli_args *args, const profile_request *req)
{
    for (size_t i = 1; i < req->width_text.n; i++) {
        cli_args one = profile_first_values(args, req);
        one.value[OPT_WIDTH] = req->width_text.items[i];
        vp_mc_options mc;
        vp_forward_options fw;
        int rc;
        if ((profile_has(req, ENGINE_MC) && (rc = read_sampling_options(&one, &mc)) != EXIT_OK) ||
            (profile_has(req, ENGINE_FORWARD) && (rc = read_forward_options(&one, &fw)) != EXIT_OK))
            return rc;
    }
    return EXIT_OK;
}

/* The sweep over what the options made: the placements, and each list or
 * the one value the options gave. */
static int make_sweep(profile_request *req)
{
    vp_sweep *s = &req->sweep;
    s->placements = req->placements;
    s->n_placements = req->n_placements;
    s->gains = req->sweep_gains;
    s->n_gains = req->gain_text.n ? req->gain_text.n : 1;
    if (!req->gain_text.n)
        req->sweep_gains[0] = req->base.gain;
    s->layers = req->sweep_layers;
    s->n_layers = req->layers_text.n ? req->layers_text.n : 1;
    if (!req->layers_text.n)
        req->sweep_layers[0] = req->base.layers;
    s->widths = req->sweep_widths;
    s->n_widths = req->width_text.n ? req->width_text.n : 1;
    if (!req->width_text.n)
        req->sweep_widths[0] = 0;
    vp_error err;
    if (vp_sweep_count(s, &req->n_combinations, &err) != VP_OK)
        return cli_usage_error("--placement, --gain, --layers and --width: %s", err.message);
    return EXIT_OK;
}

/* --loss and --grads-out: the forward's backward, one profile's gradients */
static int check_backward_options(const cli_args *args, profile_request *req)
{
    static const char *const names[] = {"checkpoint", "varprof", NULL};
    const int rc = cli_choice(args, OPT_NAMES, names, &req->varprof_names);
    if (rc != EXIT_OK)
        return rc;
    static const option_id needs_grad[] = {OPT_LOSS, OPT_GRADS_OUT};
    for (size_t i = 0; i < sizeof needs_grad / sizeof *needs_grad; i++)
        if (args->given[needs_grad[i]] && !args->given[OPT_GRAD])
            return cli_usage_error("%s applies to the backward pass: add --grad",
                                   cli_option_name(needs_grad[i]));
    if (args->given[OPT_NAMES] && !args->given[OPT_GRADS_OUT])
        return cli_usage_error("--names names the rows of --grads-out: add --grads-out FILE");
    if (args->given[OPT_GRADS_OUT] && req->n_combinations > 1)
        return cli_usage_error("--grads-out holds one network's gradients, but %zu profiles "
                               "were asked (a list of placements, layers, gains or widths); "
                               "give one of each",
                               req->n_combinations);
    return EXIT_OK;
}

/* --block attn-mlp|mlp: MLP-only blocks. */
static int read_block(const cli_args *args, profile_request *req)
{
    req->base.mlp_only = 0;
    if (!args->given[OPT_BLOCK])
        return EXIT_OK;
    static const char *const blocks[] = {"attn-mlp", "mlp", NULL};
    int block = 0;
    const int rc = cli_choice(args, OPT_BLOCK, blocks, &block);
    req->base.mlp_only = block == 1;
    return rc;
}

/* The stack: --model's or --placement's, with its depth and scales; the
 * output's format and --every; --block. */
static int read_stack(const cli_args *args, profile_request *req)
{
    int rc;
    if (args->given[OPT_MODEL])
        rc = profile_read_model(args, req);
    else if ((rc = read_placements(args, req)) == EXIT_OK)
        rc = read_stack_options(args, VP_DEFAULT_LAYERS, &req->base);
    if (rc == EXIT_OK)
        rc = check_scales_apply(args, req->placements, req->n_placements);
    if (rc != EXIT_OK || (rc = read_output_format(args, &req->format)) != EXIT_OK ||
        (rc = cli_size(args, OPT_EVERY, 1, 2 * (size_t)VP_MAX_LAYERS, &req->every)) != EXIT_OK)
        return rc;
    if (is_page_format(req->format) && profile_comparing(req)) /* a page must not drop it unsaid */
        return cli_usage_error("a %s page holds each engine's table, not the text's comparison "
                               "of them (differences in standard errors, verdicts); give one "
                               "engine with --engine, or --format text",
                               req->format == FORMAT_MARKDOWN ? "Markdown" : "LaTeX");
    return read_block(args, req);
}

/* A LayerNorm after the embedding sets sub-block 0's variance to its own;
 * the closed form and the Monte Carlo take the embedding's variance as given
 * and model no norm on it: refused beside them, not ignored. */
static int check_embedding_norm(const cli_args *args, const profile_request *req)
{
    if (!args->given[OPT_EMBEDDING_NORM] || strcmp(args->value[OPT_EMBEDDING_NORM], "none") == 0 ||
        !(profile_has(req, ENGINE_MC) || profile_has(req, ENGINE_CLOSED)))
        return EXIT_OK;
    return cli_usage_error("--embedding-norm %s: the closed form and the Monte Carlo take the "
                           "embedding's variance as given and model no norm on it; use --engine "
                           "forward",
                           args->value[OPT_EMBEDDING_NORM]);
}

/* Each option of an engine the request does not run, refused naming the
 * engines it applies to; and the options that need another. */
static int check_scoped(const cli_args *args, const profile_request *req)
{
    const int mc = profile_has(req, ENGINE_MC), forward = profile_has(req, ENGINE_FORWARD);
    const struct {
        option_id id;
        int applies;
        const char *engines;
    } scoped[] = {
        {OPT_WIDTH, mc || forward, "mc, forward or all"},
        {OPT_SEED, mc || forward, "mc, forward or all"},
        {OPT_THREADS, mc || forward, "mc, forward or all"},
        {OPT_NORM, mc || forward, "mc, forward or all"},
        {OPT_NORM_EPS, mc || forward, "mc, forward or all"},
        {OPT_TRIALS, mc, "mc or all"},
        {OPT_METHOD, mc, "mc or all"},
        {OPT_HEADS, forward, "forward or all"},
        {OPT_KV_HEADS, forward, "forward or all"},
        {OPT_HEAD_DIM, forward, "forward or all"},
        {OPT_FFN_MULT, forward, "forward or all"},
        {OPT_FFN_WIDTH, forward, "forward or all"},
        {OPT_MLP, forward, "forward or all"},
        {OPT_BIAS, forward, "forward or all"},
        {OPT_TIE_EMBEDDINGS, forward, "forward or all"},
        {OPT_VOCAB, forward, "forward or all"},
        {OPT_BATCH, forward, "forward or all"},
        {OPT_TOKENS, forward, "forward or all"},
        {OPT_QK_NORM, forward, "forward or all"},
        {OPT_POSITIONS, forward, "forward or all"},
        {OPT_ROPE_THETA, forward, "forward or all"},
        {OPT_ROPE_FRACTION, forward, "forward or all"},
        {OPT_LOGIT_SCALE, forward, "forward or all"},
        {OPT_RESIDUAL, forward, "forward or all"},
        {OPT_EMBEDDING_NORM, forward, "forward or all"},
        {OPT_SLIDING_WINDOW, forward, "forward or all"},
        {OPT_WINDOW_PATTERN, forward, "forward or all"},
        {OPT_INIT, forward, "forward or all"},
        {OPT_WEIGHTS, forward, "forward or all"},
        {OPT_TOKEN_IDS, forward, "forward or all"},
        {OPT_LOSS, forward, "forward or all"},
        {OPT_GRADS_OUT, forward, "forward or all"},
    };
    for (size_t i = 0; i < sizeof scoped / sizeof *scoped; i++)
        if (args->given[scoped[i].id] && !scoped[i].applies)
            return cli_usage_error("%s applies to the sampled engines: add --engine %s",
                                   cli_option_name(scoped[i].id), scoped[i].engines);
    if (args->given[OPT_GAINS] && args->given[OPT_GAIN])
        return cli_usage_error("--gain and --gains both given; a file of gains replaces the "
                               "single gain, so give one of them");
    if (args->given[OPT_FORCE] && !args->given[OPT_OUTPUT] && !args->given[OPT_PLOT] &&
        !args->given[OPT_GRADS_OUT])
        return cli_usage_error("--force only applies with --output, --plot, --plot-script or "
                               "--grads-out");
    return EXIT_OK;
}

/* Every combination's sizes, memory included, checked before anything is
 * allocated. */
static int check_combinations(const cli_args *args, const profile_request *req)
{
    const int mc = profile_has(req, ENGINE_MC), forward = profile_has(req, ENGINE_FORWARD);
    const char *engine_text = args->given[OPT_ENGINE]    ? args->value[OPT_ENGINE]
                              : args->given[OPT_WEIGHTS] ? "closed,forward"
                                                         : "closed";
    for (size_t i = 0; i < req->n_combinations; i++) {
        vp_sweep_point point;
        vp_config cfg;
        vp_mc_options mc_opts;
        vp_forward_options fw_opts;
        const int rc = profile_combination(req, i, &point, &cfg, &mc_opts, &fw_opts);
        if (rc != EXIT_OK)
            return rc;
        vp_error err;
        if (vp_config_check(&cfg, &err) != VP_OK)
            return cli_usage_error("--placement %s: %s", vp_placement_name(cfg.placement),
                                   err.message);
        if (mc && vp_mc_check(&cfg, &mc_opts, &err) != VP_OK)
            return cli_usage_error("--engine %s: %s%s", engine_text, err.message,
                                   cli_fix_hint(&err));
        if (forward && vp_forward_check(&cfg, &fw_opts, &err) != VP_OK)
            return cli_usage_error("--engine %s: %s%s", engine_text, err.message,
                                   cli_fix_hint(&err));
    }
    return EXIT_OK;
}

vp_sweep_point profile_point(const profile_request *req, size_t i)
{
    return vp_sweep_point_at(&req->sweep, req->first_combination + i);
}

/* --shard K/N: the combinations of part K, by each one's estimated cost:
   its layers, times its width once for the Monte Carlo (tokens x width
   coordinates a sub-block) and squared for the forward pass (its matmuls). */
static int read_shard(const cli_args *args, profile_request *req)
{
    if (!args->given[OPT_SHARD])
        return EXIT_OK;
    double *costs = malloc(req->n_combinations * sizeof *costs);
    if (!costs)
        return cli_runtime_error("no memory for %zu combinations", req->n_combinations);
    for (size_t i = 0; i < req->n_combinations; i++) {
        const vp_sweep_point p = vp_sweep_point_at(&req->sweep, i);
        const double width = p.width ? (double)p.width : 1.0;
        const double per_layer = (profile_has(req, ENGINE_CLOSED) ? 1.0 : 0.0) +
                                 (profile_has(req, ENGINE_MC) ? width : 0.0) +
                                 (profile_has(req, ENGINE_FORWARD) ? width * width : 0.0);
        costs[i] = (double)p.layers * per_layer;
    }
    size_t first, end;
    const int rc = cli_shard_range(args, costs, req->n_combinations, &first, &end);
    free(costs);
    if (rc != EXIT_OK)
        return rc;
    req->first_combination = first;
    req->n_combinations = end - first;
    return EXIT_OK;
}

int profile_read_request(const cli_args *raw_args, profile_request *req)
{
    int rc;
    req->every = 1;
    req->args = raw_args;
    if ((rc = read_engines(raw_args, req)) != EXIT_OK ||
        (rc = read_sweep_lists(raw_args, req)) != EXIT_OK)
        return rc;
    const cli_args first = profile_first_values(raw_args, req);
    const cli_args *args = &first;
    req->wide = args->given[OPT_WIDE];
    const int mc = profile_has(req, ENGINE_MC), forward = profile_has(req, ENGINE_FORWARD);
    if ((rc = read_stack(args, req)) != EXIT_OK ||
        (mc && (rc = read_sampling_options(args, &req->mc)) != EXIT_OK) ||
        (forward && (rc = read_forward_options(args, &req->forward)) != EXIT_OK) ||
        (rc = profile_read_network(args, req)) != EXIT_OK ||
        (rc = check_scoped(args, req)) != EXIT_OK ||
        (rc = check_embedding_norm(args, req)) != EXIT_OK ||
        (rc = check_width_list(raw_args, req)) != EXIT_OK || (rc = make_sweep(req)) != EXIT_OK ||
        (rc = check_backward_options(args, req)) != EXIT_OK)
        return rc;
    if ((rc = check_combinations(args, req)) != EXIT_OK)
        return rc;
    return read_shard(raw_args, req);
}

void profile_request_free(profile_request *req)
{
    vp_safetensors_free(&req->weights);
    free(req->token_ids);
    free(req->gains);
    vp_grad_norms_free(req->grad_norms);
    free(req->grad_norms);
}
