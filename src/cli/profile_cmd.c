/* varprof [profile]: compute each placement's profile and write it. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "model_hint.h"
#include "model_network.h"
#include "option_lists.h"
#include "nearest_name.h"
#include "output_file.h"
#include "output_format.h"
#include "output_paths.h"
#include "page_tables.h"
#include "progress_line.h"
#include "weights_options.h"
#include "weights_shape.h"
#include "wrap_text.h"
#include "varprof/varprof.h"

/* --engine's list, as a set */
enum { ENGINE_CLOSED = 1u << 0, ENGINE_MC = 1u << 1, ENGINE_FORWARD = 1u << 2, ENGINE_ALL = 7u };

/* Each placement's profiles: closed form, Monte Carlo, forward pass. */
#define MAX_PROFILES (3 * VP_PLACEMENT_COUNT)

/* A sampled figure agrees with the closed form within this many standard
 * errors, or within this many eps relative: the norms' eps moves a sampled
 * stream by about eps, which no standard error covers where a norm pins it. */
#define AGREEMENT_SE 3.0
#define AGREEMENT_EPS_MULTIPLE 10.0

typedef struct {
    vp_placement placements[VP_PLACEMENT_COUNT];
    size_t n_placements;
    vp_config base;
    output_format format;
    unsigned engines; /* ENGINE_* */
    vp_mc_options mc;
    vp_forward_options forward;
    vp_safetensors weights;    /* --weights, owned */
    size_t sliding_window;     /* a checkpoint's attention window; 0 none */
    int checkpoint;            /* --weights names a checkpoint directory */
    int varprof_names;         /* --names varprof */
    unsigned *token_ids;       /* --token-ids, owned */
    vp_grad_norms *grad_norms; /* --grads-out: the forward's gradients, owned */
    size_t every;
    int wide;       /* --wide: every column */
    vp_model model; /* from --model; model.name is empty without it */
    const char *gains_path;
    double *gains; /* from --gains, owned */
    size_t n_gains;
    /* the sweep: --gain, --layers and --width as lists, each value's text
       kept for the readers of one value; a list not given holds the one
       value the options make (widths: 0, each engine's own) */
    list_buffer gain_text, layers_text, width_text;
    double sweep_gains[CLI_LIST_MAX];
    size_t sweep_layers[CLI_LIST_MAX], sweep_widths[CLI_LIST_MAX];
    vp_sweep sweep;
    size_t n_combinations;
    int sweeping; /* a list of more than one value was given */
    const cli_args *args;
} profile_request;

static int has(const profile_request *req, unsigned engine)
{
    return (req->engines & engine) != 0;
}

/* The closed form held against a sampled engine: side by side, with verdicts. */
static int comparing(const profile_request *req)
{
    return has(req, ENGINE_CLOSED) && has(req, ENGINE_MC | ENGINE_FORWARD);
}

/* The text's layout: every column with --wide, else 80 columns. */
static vp_text_width width_of(const profile_request *req)
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

/* The command line with each list cut to its first value: what the readers
 * of one value read. */
static cli_args first_values(const cli_args *args, const profile_request *req)
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

/* --model NAME: the model's placement, and its layers unless --layers says otherwise. */
static int read_model(const cli_args *args, profile_request *req)
{
    if (args->given[OPT_PLACEMENT])
        return cli_usage_error("--model and --placement both given; the model decides the "
                               "placement, so give one of them");
    vp_model_table table;
    int rc = load_models(&table);
    if (rc != EXIT_OK)
        return rc;
    const char *name = args->value[OPT_MODEL];
    const vp_model *m = vp_model_find(&table, name);
    if (!m) {
        char hint[256];
        model_hint(name, &table, hint, sizeof hint);
        vp_model_table_free(&table);
        return cli_usage_error("--model: '%s' is not in the models table; %s'varprof models' "
                               "lists them",
                               name, hint);
    }
    req->placements[req->n_placements++] = m->placement;
    req->model = *m;
    vp_model_table_free(&table);
    rc = read_stack_options(args, req->model.layers, &req->base);
    /* the model's own alpha and beta at this depth, unless --alpha or --beta says otherwise */
    if (rc == EXIT_OK && req->model.alpha.text[0] && !args->given[OPT_ALPHA])
        req->base.alpha = vp_model_scale_value(&req->model.alpha, req->base.layers);
    if (rc == EXIT_OK && req->model.beta.text[0] && !args->given[OPT_BETA])
        req->base.beta = vp_model_scale_value(&req->model.beta, req->base.layers);
    return rc;
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

/* A checkpoint directory's config.json: its placement (the one its names
   make), its heads, eps, activation and positions. */
static int adopt_checkpoint(const cli_args *args, const vp_hf_architecture *arch,
                            const weights_shape_given *given, profile_request *req)
{
    if (!args->given[OPT_PLACEMENT]) { /* not pre-norm by default: the names' */
        req->placements[0] = arch->placement;
        req->n_placements = 1;
    }
    for (size_t i = 0; i < req->n_placements; i++)
        if (req->placements[i] != arch->placement)
            return cli_usage_error("--placement %s: a %s checkpoint's names make it %s; leave "
                                   "--placement out",
                                   args->value[OPT_PLACEMENT], arch->model_type,
                                   vp_placement_name(arch->placement));
    vp_error err;
    if (weights_arch_adopt(arch, given, &req->forward, &err) != VP_OK)
        return cli_usage_error("--weights: %s: %s", args->value[OPT_WEIGHTS], err.message);
    req->sliding_window = arch->sliding_window;
    return EXIT_OK;
}

/* config.json's keys that varprof neither reads nor knows to be harmless:
   one line each on standard error, and the run goes on */
static void warn_unknown_keys(const char *dir, const vp_hf_architecture *arch)
{
    for (size_t i = 0; i < arch->n_unknown_keys && i < VP_HF_MOST_UNKNOWN_KEYS; i++)
        cli_warning("--weights %s: config.json's '%s' is not a key varprof knows for "
                    "model_type '%s'; the numbers assume it changes nothing",
                    dir, arch->unknown_keys[i], arch->model_type);
    if (arch->n_unknown_keys > VP_HF_MOST_UNKNOWN_KEYS)
        cli_warning("--weights %s: and %zu more such keys", dir,
                    arch->n_unknown_keys - VP_HF_MOST_UNKNOWN_KEYS);
}

/* --weights and --token-ids: the network and the batch from files. What the
 * weights fix (weights_options.h) the command line may not set otherwise. */
static int read_network_files(const cli_args *args, profile_request *req)
{
    vp_forward_options *fw = &req->forward;
    vp_error err;
    if (args->given[OPT_WEIGHTS] && args->given[OPT_MODEL])
        return cli_usage_error("--model and --weights both given; the weights file says the "
                               "network's shape, so give one of them");
    int rc;
    if (args->given[OPT_WEIGHTS] && ((rc = weights_refuse_settings(args)) != EXIT_OK ||
                                     (rc = weights_refuse_json(args)) != EXIT_OK))
        return rc;
    if (args->given[OPT_WEIGHTS]) {
        vp_hf_architecture arch;
        int checkpoint = 0;
        if (weights_read(args->value[OPT_WEIGHTS], &req->weights, &arch, &checkpoint, &err) !=
            VP_OK)
            return cli_runtime_error("--weights: %s", err.message);
        req->checkpoint = checkpoint;
        if (!checkpoint && (rc = weights_refuse_checkpoint_file(args, &req->weights)) != EXIT_OK)
            return rc;
        if (checkpoint)
            warn_unknown_keys(args->value[OPT_WEIGHTS], &arch);
        const weights_shape_given given =
            weights_shape_given_by(args, OPT_WIDTH, OPT_VOCAB, OPT_FFN_MULT, OPT_LAYERS, OPT_BLOCK);
        weights_shape_given shape_given = given;
        if (checkpoint) { /* config.json first: its heads read the tensors */
            if ((rc = adopt_checkpoint(args, &arch, &given, req)) != EXIT_OK)
                return rc;
            shape_given.heads = shape_given.head_dim = 1;
        }
        if ((rc = weights_refuse_shape(args, &req->weights, &shape_given, &req->base, fw)) !=
            EXIT_OK)
            return rc;
        const vp_status s = weights_shape_adopt(&req->weights, &shape_given, &req->base, fw, &err);
        if (s == VP_EINVAL)
            return cli_usage_error("--weights: %s: %s", args->value[OPT_WEIGHTS], err.message);
        if (s != VP_OK)
            return cli_runtime_error("--weights: %s: %s", args->value[OPT_WEIGHTS], err.message);
        fw->weights = &req->weights;
        weights_adopt_depth(args, &req->base);
        /* with --engine all the Monte Carlo samples the stack the file describes */
        if (!args->given[OPT_WIDTH])
            req->mc.width = fw->width;
        if (!args->given[OPT_NORM])
            req->mc.norm = fw->norm;
    }
    if (args->given[OPT_TOKEN_IDS]) {
        const size_t batch = fw->batch, tokens = fw->tokens;
        if (vp_token_ids_read(args->value[OPT_TOKEN_IDS], fw->vocab, &req->token_ids, &fw->batch,
                              &fw->tokens, &err) != VP_OK)
            return cli_runtime_error("--token-ids: %s", err.message);
        if ((args->given[OPT_BATCH] && batch != fw->batch) ||
            (args->given[OPT_TOKENS] && tokens != fw->tokens))
            return cli_usage_error("--token-ids: %s holds %zu rows of %zu ids, but --batch %zu "
                                   "--tokens %zu were given; give the file alone",
                                   args->value[OPT_TOKEN_IDS], fw->batch, fw->tokens, batch,
                                   tokens);
        fw->token_ids = req->token_ids;
    }
    if (req->sliding_window && fw->tokens > req->sliding_window)
        return cli_usage_error("--weights: %zu tokens a sequence, but the checkpoint's "
                               "sliding_window is %zu; varprof attends to every earlier token, "
                               "so give at most %zu",
                               fw->tokens, req->sliding_window, req->sliding_window);
    return EXIT_OK;
}

/* The configuration and sampling options of the sweep's i-th combination. */
static int combination_setup(const profile_request *req, size_t i, vp_sweep_point *point,
                             vp_config *cfg, vp_mc_options *mc, vp_forward_options *fw)
{
    *point = vp_sweep_point_at(&req->sweep, i);
    *cfg = req->base;
    *mc = req->mc;
    *fw = req->forward;
    int rc = EXIT_OK;
    if (req->sweeping) {
        cli_args one = first_values(req->args, req);
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
        cli_args one = first_values(args, req);
        one.value[OPT_WIDTH] = req->width_text.items[i];
        vp_mc_options mc;
        vp_forward_options fw;
        int rc;
        if ((has(req, ENGINE_MC) && (rc = read_sampling_options(&one, &mc)) != EXIT_OK) ||
            (has(req, ENGINE_FORWARD) && (rc = read_forward_options(&one, &fw)) != EXIT_OK))
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

static int read_request(const cli_args *raw_args, profile_request *req)
{
    int rc;
    req->every = 1;
    req->args = raw_args;
    if ((rc = read_engines(raw_args, req)) != EXIT_OK ||
        (rc = read_sweep_lists(raw_args, req)) != EXIT_OK)
        return rc;
    const cli_args first = first_values(raw_args, req);
    const cli_args *args = &first;
    req->wide = args->given[OPT_WIDE];
    if (args->given[OPT_MODEL])
        rc = read_model(args, req);
    else if ((rc = read_placements(args, req)) == EXIT_OK)
        rc = read_stack_options(args, VP_DEFAULT_LAYERS, &req->base);
    if (rc == EXIT_OK)
        rc = check_scales_apply(args, req->placements, req->n_placements);
    if (rc != EXIT_OK || (rc = read_output_format(args, &req->format)) != EXIT_OK ||
        (rc = cli_size(args, OPT_EVERY, 1, 2 * (size_t)VP_MAX_LAYERS, &req->every)) != EXIT_OK)
        return rc;
    if (is_page_format(req->format) && comparing(req)) /* a page must not drop it unsaid */
        return cli_usage_error("a %s page holds each engine's table, not the text's comparison "
                               "of them (differences in standard errors, verdicts); give one "
                               "engine with --engine, or --format text",
                               req->format == FORMAT_MARKDOWN ? "Markdown" : "LaTeX");
    req->base.mlp_only = 0;
    if (args->given[OPT_BLOCK]) {
        static const char *const blocks[] = {"attn-mlp", "mlp", NULL};
        int block = 0;
        if ((rc = cli_choice(args, OPT_BLOCK, blocks, &block)) != EXIT_OK)
            return rc;
        req->base.mlp_only = block == 1;
    }
    const int mc = has(req, ENGINE_MC);
    const int forward = has(req, ENGINE_FORWARD);
    if ((mc && (rc = read_sampling_options(args, &req->mc)) != EXIT_OK) ||
        (forward && (rc = read_forward_options(args, &req->forward)) != EXIT_OK))
        return rc;
    if (forward && (rc = read_network_files(args, req)) != EXIT_OK)
        return rc;
    if (req->model.name[0]) {
        /* the model's norm and QK-norm, unless the command line says otherwise */
        if (!args->given[OPT_NORM])
            req->mc.norm = req->forward.norm = req->model.norm;
        if (req->model.qk_norm)
            req->forward.qk_norm = 1;
        if (forward &&
            (rc = model_network(args, &req->model, &req->base, &req->forward)) != EXIT_OK)
            return rc;
    }
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
    if ((rc = check_width_list(raw_args, req)) != EXIT_OK || (rc = make_sweep(req)) != EXIT_OK ||
        (rc = check_backward_options(args, req)) != EXIT_OK)
        return rc;
    /* every size, memory included, is checked before anything is allocated */
    const char *engine_text = args->given[OPT_ENGINE]    ? args->value[OPT_ENGINE]
                              : args->given[OPT_WEIGHTS] ? "closed,forward"
                                                         : "closed";
    for (size_t i = 0; i < req->n_combinations; i++) {
        vp_sweep_point point;
        vp_config cfg;
        vp_mc_options mc_opts;
        vp_forward_options fw_opts;
        if ((rc = combination_setup(req, i, &point, &cfg, &mc_opts, &fw_opts)) != EXIT_OK)
            return rc;
        vp_error err;
        if (vp_config_check(&cfg, &err) != VP_OK)
            return cli_usage_error("--placement %s: %s", vp_placement_name(cfg.placement),
                                   err.message);
        if (mc && vp_mc_check(&cfg, &mc_opts, &err) != VP_OK)
            return cli_usage_error("--engine %s: %s", engine_text, err.message);
        if (forward && vp_forward_check(&cfg, &fw_opts, &err) != VP_OK)
            return cli_usage_error("--engine %s: %s", engine_text, err.message);
    }
    return EXIT_OK;
}

/* One profile as a table for a page, a blank line between two. */
static vp_status write_page_profile(const profile_request *req, FILE *out,
                                    const vp_profile *profile, int first)
{
    vp_page_table table;
    vp_status status = vp_page_table_of_profile(profile, req->every, &table);
    if (status != VP_OK)
        return status;
    if (!first)
        fputc('\n', out);
    status = req->format == FORMAT_MARKDOWN ? vp_markdown_write_table(out, &table)
                                            : vp_latex_write_table(out, &table);
    vp_page_table_free(&table);
    return status;
}

/* Whether the text's heading is written before each run: text, with one
 * engine (several are compared side by side after their runs). */
static int heading_first(const profile_request *req, const FILE *out)
{
    return out && req->format == FORMAT_TEXT && (req->engines & (req->engines - 1)) == 0;
}

/* Writes one profile in the chosen format; the caller starts and ends the document. */
static vp_status write_profile(const profile_request *req, FILE *out, vp_json_writer *json,
                               const vp_profile *profile, int first)
{
    switch (req->format) {
    case FORMAT_CSV: return vp_csv_write_profile(out, profile, req->every);
    case FORMAT_JSON: return vp_json_add_profile(json, profile, req->every);
    case FORMAT_MARKDOWN:
    case FORMAT_LATEX: return write_page_profile(req, out, profile, first);
    default:
        if (heading_first(req, out)) /* the heading came before the run */
            return vp_text_write_rows(out, profile, req->every,
                                      req->wide ? VP_TEXT_WIDE : VP_TEXT_FIT_80);
        if (!first)
            fputc('\n', out);
        return vp_text_write_profile(out, profile, req->every);
    }
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

/* Every placement must have as many sub-blocks as the file has gains; said
 * before anything is written, so that no profile is half-delivered. */
static int check_gain_count(const profile_request *req)
{
    for (size_t i = 0; req->gains && i < req->n_combinations; i++) {
        const vp_sweep_point point = vp_sweep_point_at(&req->sweep, i);
        vp_config cfg = req->base;
        cfg.placement = point.placement;
        cfg.layers = point.layers;
        size_t k_total = vp_config_sub_blocks(&cfg);
        if (req->n_gains != k_total)
            return cli_runtime_error("--gains: %s holds %zu gains, but %zu layers of %s make %zu "
                                     "sub-blocks: give one gain per sub-block",
                                     req->gains_path, req->n_gains, point.layers,
                                     vp_placement_name(point.placement), k_total);
    }
    return EXIT_OK;
}

static void write_model_heading(const profile_request *req, FILE *out)
{
    const vp_model *m = &req->model;
    char here[96] = "", line[1400];
    if (req->layers_text.n > 1)
        snprintf(here, sizeof here, " (%s here, as --layers says)", req->args->value[OPT_LAYERS]);
    else if (req->base.layers != m->layers)
        snprintf(here, sizeof here, " (%zu here, as --layers says)", req->base.layers);
    snprintf(line, sizeof line, "model %s (%d): %zu layers%s, %s, %s, QK-norm %s; source: %s",
             m->name, m->year, m->layers, here, vp_placement_name(m->placement),
             vp_norm_name(m->norm), m->qk_norm ? "yes" : "no", m->source);
    write_wrapped(out, line, 0, 2, req->wide ? 0 : TEXT_COLUMNS);
    if (m->alpha.text[0] || m->beta.text[0]) {
        snprintf(line, sizeof line, "its own alpha %s, beta %s%s; source: %s",
                 m->alpha.text[0] ? m->alpha.text : "DeepNet's",
                 m->beta.text[0] ? m->beta.text : "DeepNet's",
                 m->alpha.per_layer || m->beta.per_layer ? ", N its layers" : "", m->scale_source);
        write_wrapped(out, line, 0, 2, req->wide ? 0 : TEXT_COLUMNS);
    }
}

/* The profiles of one combination, each possibly NULL: the closed form, the
 * Monte Carlo, the forward pass, and the closed form fed with the forward
 * pass's measured gains (its prediction). */
typedef struct {
    vp_profile *closed, *sampled, *forward, *predicted;
} placement_profiles;

static void free_placement(placement_profiles *pp)
{
    vp_profile_free(pp->closed);
    vp_profile_free(pp->sampled);
    vp_profile_free(pp->forward);
    vp_profile_free(pp->predicted);
    *pp = (placement_profiles){0};
}

/* The text's heading for combination i, written and flushed before its
 * engine runs, so that a long run says first what it computes. The bytes are
 * those the profile's own heading would have been. */
static int write_heading_first(const profile_request *req, FILE *out, size_t i)
{
    vp_sweep_point point;
    vp_config cfg;
    vp_mc_options mc;
    vp_forward_options fw;
    int rc = combination_setup(req, i, &point, &cfg, &mc, &fw);
    if (rc != EXIT_OK)
        return rc;
    const vp_engine engine = req->engines == ENGINE_MC        ? VP_ENGINE_MC
                             : req->engines == ENGINE_FORWARD ? VP_ENGINE_FORWARD
                                                              : VP_ENGINE_CLOSED;
    if (i > 0)
        fputc('\n', out);
    if (vp_text_write_heading(out, engine, &cfg, &mc, &fw,
                              req->wide ? VP_TEXT_WIDE : VP_TEXT_FIT_80) != VP_OK ||
        fflush(out) != 0)
        return cli_runtime_error("cannot write the output: %s", strerror(errno));
    return EXIT_OK;
}

static int compute_placement(const profile_request *req, size_t i, progress_line *line,
                             placement_profiles *out)
{
    vp_sweep_point point;
    vp_config cfg;
    vp_mc_options mc;
    vp_forward_options fw;
    *out = (placement_profiles){0};
    int rc = combination_setup(req, i, &point, &cfg, &mc, &fw);
    if (rc != EXIT_OK)
        return rc;
    vp_error err;
    if (has(req, ENGINE_CLOSED) && vp_closed_profile(&cfg, &out->closed, &err) != VP_OK)
        return cli_runtime_error("%s", err.message);
    char label[64];
    vp_status status = VP_OK;
    if (has(req, ENGINE_MC)) {
        snprintf(label, sizeof label, "Monte Carlo, %s", vp_placement_name(cfg.placement));
        mc.progress = progress_line_begin(line, label);
        status = vp_mc_profile(&cfg, &mc, &out->sampled, &err);
        progress_line_end(line);
    }
    if (status != VP_OK) {
        free_placement(out);
        return cli_runtime_error("Monte Carlo: %s", err.message);
    }
    if (has(req, ENGINE_FORWARD)) {
        snprintf(label, sizeof label, "forward pass, %s", vp_placement_name(cfg.placement));
        fw.progress = progress_line_begin(line, label);
        if (req->grad_norms) {
            fw.on_param_grad = vp_grad_norms_add;
            fw.param_grad_ctx = req->grad_norms;
        }
        status = vp_forward_profile(&cfg, &fw, &out->forward, &err);
        progress_line_end(line);
    }
    if (has(req, ENGINE_FORWARD) &&
        (status != VP_OK || (has(req, ENGINE_CLOSED) &&
                             vp_closed_predict(out->forward, &out->predicted, &err) != VP_OK))) {
        free_placement(out);
        return cli_runtime_error("forward pass: %s", err.message);
    }
    vp_profile *all[] = {out->closed, out->sampled, out->forward};
    for (size_t e = 0; e < 3; e++)
        if (all[e] && all[e]->overflow_at)
            warn_overflow(all[e]);
    return EXIT_OK;
}

/* In a sweep, what sets a combination apart beyond its placement. */
static void write_point(FILE *out, const profile_request *req, size_t i, const char *then)
{
    const vp_sweep_point p = vp_sweep_point_at(&req->sweep, i);
    fprintf(out, "gain %.6g, %zu layer%s", p.gain, p.layers, p.layers == 1 ? "" : "s");
    if (p.width)
        fprintf(out, ", width %zu", p.width);
    fputs(then, out);
}

/* The closed form is the same at every width: a sweep writes it once, with
 * the first width of its placement, gain and layers. */
static int first_width(const profile_request *req, size_t i)
{
    return i % req->sweep.n_widths == 0;
}

static vp_status write_placement(const profile_request *req, FILE *out, vp_json_writer *json,
                                 const placement_profiles *pp, size_t i, int *first)
{
    vp_status status = VP_OK;
    if (req->format == FORMAT_TEXT && comparing(req)) {
        if (!*first)
            fputc('\n', out);
        *first = 0;
        if (req->sweeping) {
            write_point(out, req, i, ":\n");
        }
        if (pp->sampled) {
            vp_comparison cmp;
            status =
                vp_text_write_side_by_side(out, pp->closed, pp->sampled, req->every, width_of(req));
            if (status == VP_OK && (pp->sampled->fields & VP_HAS_GRAD)) {
                fputc('\n', out);
                status = vp_text_write_grad_side_by_side(out, pp->closed, pp->sampled, req->every,
                                                         width_of(req));
            }
            if (status == VP_OK && vp_compare(pp->closed, pp->sampled, AGREEMENT_SE,
                                              AGREEMENT_EPS_MULTIPLE * req->mc.eps, &cmp) == VP_OK)
                status = vp_text_write_verdict(out, pp->closed, &cmp, width_of(req));
        }
        if (status == VP_OK && pp->forward) {
            if (pp->sampled)
                fputc('\n', out);
            status = vp_text_write_forward_comparison(out, pp->closed, pp->predicted, pp->forward,
                                                      req->every, width_of(req));
            if (status == VP_OK && (pp->forward->fields & VP_HAS_GRAD)) {
                fputc('\n', out);
                status = vp_text_write_grad_forward_comparison(out, pp->predicted, pp->forward,
                                                               req->every, width_of(req));
            }
            if (status == VP_OK)
                status =
                    vp_text_write_forward_verdict(out, pp->predicted, pp->forward, width_of(req));
        }
        return status;
    }
    vp_profile *const all[] = {first_width(req, i) ? pp->closed : NULL, pp->sampled, pp->forward};
    for (size_t e = 0; e < 3 && status == VP_OK; e++)
        if (all[e]) {
            status = write_profile(req, out, json, all[e], *first);
            *first = 0;
        }
    return status;
}

/* What sets a sweep's tops apart on a page, as in the text's table; no gain
 * where --gains gave one per sub-block. */
static unsigned tops_shown(const profile_request *req)
{
    if (!req->sweeping)
        return 0;
    return (req->args->given[OPT_GAINS] ? 0 : TOPS_GAIN) | TOPS_LAYERS |
           (has(req, ENGINE_MC | ENGINE_FORWARD) ? TOPS_WIDTH : 0);
}

/* One line per combination, after the tables: the verdicts together. */
static vp_status write_verdicts(const profile_request *req, FILE *out,
                                const placement_profiles *all)
{
    if (has(req, ENGINE_MC)) {
        char line[256];
        snprintf(line, sizeof line,
                 "Verdicts: the Monte Carlo against the closed form, each figure within %g "
                 "standard errors or %g eps relative, and none beyond what chance allows the "
                 "largest of them",
                 AGREEMENT_SE, AGREEMENT_EPS_MULTIPLE);
        fputc('\n', out);
        write_wrapped(out, line, 0, 2, req->wide ? 0 : TEXT_COLUMNS);
        for (size_t i = 0; i < req->n_combinations; i++) {
            vp_comparison cmp;
            if (vp_compare(all[i].closed, all[i].sampled, AGREEMENT_SE,
                           AGREEMENT_EPS_MULTIPLE * req->mc.eps, &cmp) != VP_OK)
                continue;
            if (req->sweeping) /* in 80 columns the verdict starts a line */
                write_point(out, req, i, req->wide ? ": " : ":\n");
            vp_text_write_verdict(out, all[i].closed, &cmp, width_of(req));
        }
    }
    if (has(req, ENGINE_FORWARD)) {
        fprintf(out, "\nThe forward pass against the closed form fed with its measured gains:\n");
        for (size_t i = 0; i < req->n_combinations; i++) {
            if (req->sweeping)
                write_point(out, req, i, req->wide ? ": " : ":\n");
            vp_text_write_forward_verdict(out, all[i].predicted, all[i].forward, width_of(req));
        }
    }
    return ferror(out) ? VP_EIO : VP_OK;
}

/* The tops a combination adds to the sweep's table and figure: each engine's,
 * the closed form's once across the widths. */
static size_t add_tops(const profile_request *req, const placement_profiles *pp, size_t i,
                       vp_sweep_top *tops)
{
    const vp_sweep_point point = vp_sweep_point_at(&req->sweep, i);
    vp_profile *const each[] = {first_width(req, i) ? pp->closed : NULL, pp->sampled, pp->forward};
    size_t n = 0;
    for (size_t e = 0; e < 3; e++)
        if (each[e]) {
            tops[n].point = point;
            tops[n].point.width = each[e]->sampling.generator ? each[e]->sampling.width : 0;
            tops[n++].top = vp_profile_get_top(each[e]);
        }
    return n;
}

/* The run's results that outlive the writing: the profiles to plot (all the
 * engines' of each combination, when a single stack per placement is
 * plotted) and the sweep's tops. */
typedef struct {
    vp_profile *kept[MAX_PROFILES];
    size_t n_kept;
    int keep;
    vp_sweep_top *tops; /* 3 per combination, owned */
    size_t n_tops;
} run_results;

/* Ends the text: the verdicts where engines were compared, then the top of
 * each stack: a sweep's, or each placement's. */
static vp_status write_ending(const profile_request *req, FILE *out, const placement_profiles *all,
                              const run_results *res)
{
    vp_status status = VP_OK;
    if (comparing(req) && req->n_combinations > 1)
        status = write_verdicts(req, out, all);
    if (status != VP_OK)
        return status;
    if (req->sweeping)
        return vp_sweep_write_tops(out, res->tops, res->n_tops,
                                   has(req, ENGINE_MC | ENGINE_FORWARD), width_of(req));
    if (comparing(req) || req->n_combinations < 2)
        return VP_OK;
    vp_profile_top tops[VP_PLACEMENT_COUNT];
    for (size_t i = 0; i < req->n_combinations; i++) {
        const placement_profiles *pp = &all[i];
        tops[i] = vp_profile_get_top(pp->closed    ? pp->closed
                                     : pp->sampled ? pp->sampled
                                                   : pp->forward);
    }
    return vp_text_write_comparison(out, tops, req->n_combinations);
}

/* Computes every combination's profiles and writes them (out may be NULL:
 * only a plot was asked for), keeping what res asks for. */
static int compute_and_write(const profile_request *req, FILE *out, progress_line *line,
                             run_results *res)
{
    int rc = check_gain_count(req);
    if (rc != EXIT_OK)
        return rc;
    if (out && req->format == FORMAT_TEXT && req->model.name[0])
        write_model_heading(req, out);
    placement_profiles *all = calloc(req->n_combinations, sizeof *all);
    res->tops = calloc(3 * req->n_combinations, sizeof *res->tops);
    if (!all || !res->tops) {
        free(all);
        return cli_runtime_error("no memory for %zu combinations", req->n_combinations);
    }
    vp_json_writer json;
    vp_status status = VP_OK;
    if (out && req->format == FORMAT_CSV)
        status = vp_csv_write_header(out);
    else if (out && req->format == FORMAT_JSON)
        status = vp_json_begin(&json, out);
    /* what outlives its combination's writing: the profiles a plot of one
       stack per placement draws, and those the ending reads (the verdicts,
       the table of the placements' tops) */
    const int plot_profiles_kept = res->keep && !req->sweeping;
    const int ending_reads = out && req->format == FORMAT_TEXT && req->n_combinations > 1 &&
                             (comparing(req) || !req->sweeping);
    int first = 1;
    for (size_t i = 0; i < req->n_combinations && status == VP_OK; i++) {
        placement_profiles *pp = &all[i];
        if (heading_first(req, out) && (rc = write_heading_first(req, out, i)) != EXIT_OK)
            break;
        if ((rc = compute_placement(req, i, line, pp)) != EXIT_OK)
            break;
        if (out)
            status = write_placement(req, out, &json, pp, i, &first);
        res->n_tops += add_tops(req, pp, i, res->tops + res->n_tops);
        if (!plot_profiles_kept && !ending_reads)
            free_placement(pp);
    }
    if (rc == EXIT_OK && out && status == VP_OK) {
        if (req->format == FORMAT_JSON)
            status = vp_json_end(&json);
        else if (req->format == FORMAT_TEXT)
            status = write_ending(req, out, all, res);
        else if (is_page_format(req->format) && req->n_combinations > 1)
            status = write_tops_page(out, res->tops, res->n_tops, tops_shown(req), req->format);
    }
    for (size_t i = 0; i < req->n_combinations; i++) {
        if (plot_profiles_kept && rc == EXIT_OK) {
            vp_profile *const each[] = {all[i].closed, all[i].sampled, all[i].forward};
            for (size_t e = 0; e < 3; e++)
                if (each[e])
                    res->kept[res->n_kept++] = each[e]; /* res owns them now */
            vp_profile_free(all[i].predicted);
        } else {
            free_placement(&all[i]);
        }
    }
    free(all);
    if (rc != EXIT_OK)
        return rc;
    if (status != VP_OK)
        return cli_runtime_error("cannot write the output: %s",
                                 status == VP_EIO ? strerror(errno) : vp_strerror(status));
    return EXIT_OK;
}

static void free_request(profile_request *req)
{
    vp_safetensors_free(&req->weights);
    free(req->token_ids);
    free(req->gains);
    vp_grad_norms_free(req->grad_norms);
    free(req->grad_norms);
}

/* --grads-out: the gradients the run collected, written as --output is */
static int write_grads(const cli_args *args, output_file *grads, const profile_request *req)
{
    vp_grad_norms stored = {0};
    vp_status status = VP_OK;
    if (req->checkpoint && !req->varprof_names) {
        vp_error err;
        if ((status = vp_hf_grad_norms_stored(&req->weights, req->grad_norms, &stored, &err)) !=
            VP_OK) {
            output_abort(grads);
            return cli_library_error("--grads-out", status, &err);
        }
    }
    status = vp_grads_csv_write(grads->stream, stored.rows ? &stored : req->grad_norms);
    vp_grad_norms_free(&stored);
    if (status != VP_OK) {
        output_abort(grads);
        return status == VP_EIO ? cli_runtime_error("--grads-out: cannot write %s: %s",
                                                    args->value[OPT_GRADS_OUT], strerror(errno))
                                : cli_library_error("--grads-out", status, NULL);
    }
    return output_commit(grads);
}

/* Computes, writes and plots, once the request is read. */
static int profile_and_write(const cli_args *args, profile_request *req)
{
    /* with --plot, the table is written only where --output or --format asks */
    const int plotting = args->given[OPT_PLOT];
    const int writing = !plotting || args->given[OPT_OUTPUT] || args->given[OPT_FORMAT];
    output_file out = {0};
    int rc;
    if (writing &&
        (rc = output_open(&out, args->value[OPT_OUTPUT], args->given[OPT_FORCE])) != EXIT_OK)
        return rc;
    /* --grads-out: opened before the run, so that a file in the way stops it early */
    output_file grads = {0};
    if (args->given[OPT_GRADS_OUT]) {
        req->grad_norms = calloc(1, sizeof *req->grad_norms);
        if (!req->grad_norms) {
            output_abort(&out);
            return cli_runtime_error("no memory for the gradients");
        }
        if ((rc = output_open(&grads, args->value[OPT_GRADS_OUT], args->given[OPT_FORCE])) !=
            EXIT_OK) {
            output_abort(&out);
            return rc;
        }
    }
    if (args->given[OPT_GAINS]) {
        vp_error err;
        req->gains_path = args->value[OPT_GAINS];
        if (vp_gains_read(args->value[OPT_GAINS], &req->gains, &req->n_gains, &err) != VP_OK) {
            output_abort(&out);
            return cli_runtime_error("--gains: %s", err.message);
        }
    }
    run_results res = {.keep = plotting};
    progress_line line;
    progress_line_init(&line, args);
    rc = compute_and_write(req, writing ? out.stream : NULL, &line, &res);
    if (rc != EXIT_OK) {
        if (writing)
            output_abort(&out);
        output_abort(&grads);
    } else {
        if (writing)
            rc = output_commit(&out);
        if (args->given[OPT_GRADS_OUT])
            rc = rc == EXIT_OK ? write_grads(args, &grads, req) : (output_abort(&grads), rc);
    }
    /* the output is written even when gnuplot then fails or is missing */
    if (rc == EXIT_OK && plotting && req->sweeping) {
        rc = plot_sweep_tops(args, res.tops, res.n_tops, vp_sweep_x_axis(&req->sweep));
    } else if (rc == EXIT_OK && plotting) {
        char title[128] = "";
        if (req->model.name[0])
            snprintf(title, sizeof title, "%s: %s, %zu layers", req->model.name,
                     vp_placement_name(req->model.placement), req->base.layers);
        rc = plot_profiles(args, (const vp_profile *const *)res.kept, res.n_kept,
                           title[0] ? title : NULL);
    }
    for (size_t i = 0; i < res.n_kept; i++)
        vp_profile_free(res.kept[i]);
    free(res.tops);
    return rc;
}

int run_profile(const cli_args *args)
{
    profile_request req = {0};
    int rc = read_request(args, &req);
    if (rc == EXIT_OK)
        rc = check_distinct_outputs(args);
    if (rc == EXIT_OK)
        rc = check_plot_options(args);
    if (rc == EXIT_OK) {
        weights_warn_random_tokens(args, &req.forward);
        rc = profile_and_write(args, &req);
    }
    free_request(&req);
    return rc;
}
