/* varprof [profile]'s network: --model's table row, --weights and --token-ids. */
#include <stdio.h>

#include "commands.h"
#include "model_hint.h"
#include "model_network.h"
#include "profile_request.h"
#include "weights_options.h"
#include "weights_shape.h"

int profile_read_model(const cli_args *args, profile_request *req)
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

/* A checkpoint directory's config.json: its placement (the one its names
   make). */
static int adopt_checkpoint(const cli_args *args, const vp_hf_architecture *arch,
                            profile_request *req)
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

/* --weights: the network the file holds. What the weights fix
 * (weights_options.h) the command line may not set otherwise. */
static int read_weights(const cli_args *args, profile_request *req)
{
    vp_forward_options *fw = &req->forward;
    vp_error err;
    int rc;
    if ((rc = weights_refuse_settings(args)) != EXIT_OK ||
        (rc = weights_refuse_json(args)) != EXIT_OK)
        return rc;
    /* kept in req: the options' layer kinds point into it */
    vp_hf_architecture *arch = &req->arch;
    int checkpoint = 0;
    if (weights_read(args->value[OPT_WEIGHTS], &req->weights, arch, &checkpoint, &err) != VP_OK)
        return cli_runtime_error("--weights: %s", err.message);
    req->checkpoint = checkpoint;
    if (!checkpoint && (rc = weights_refuse_checkpoint_file(args, &req->weights)) != EXIT_OK)
        return rc;
    if (checkpoint)
        warn_unknown_keys(args->value[OPT_WEIGHTS], arch);
    const weights_shape_given given =
        weights_shape_given_by(args, OPT_WIDTH, OPT_VOCAB, OPT_FFN_MULT, OPT_LAYERS, OPT_BLOCK);
    if ((checkpoint && (rc = adopt_checkpoint(args, arch, req)) != EXIT_OK) ||
        (rc = weights_adopt(args, &req->weights, checkpoint ? arch : NULL, &given, &req->base, fw,
                            0)) != EXIT_OK)
        return rc;
    fw->weights = &req->weights;
    weights_adopt_depth(args, &req->base);
    /* with --engine all the Monte Carlo samples the stack the file describes */
    if (!args->given[OPT_WIDTH])
        req->mc.width = fw->width;
    if (!args->given[OPT_NORM])
        req->mc.norm = fw->norm;
    return EXIT_OK;
}

/* --token-ids: the batch from a file, its rows and length the batch's. */
static int read_token_ids(const cli_args *args, profile_request *req)
{
    vp_forward_options *fw = &req->forward;
    vp_error err;
    const size_t batch = fw->batch, tokens = fw->tokens;
    if (vp_token_ids_read(args->value[OPT_TOKEN_IDS], fw->vocab, &req->token_ids, &fw->batch,
                          &fw->tokens, &err) != VP_OK)
        return cli_runtime_error("--token-ids: %s", err.message);
    if ((args->given[OPT_BATCH] && batch != fw->batch) ||
        (args->given[OPT_TOKENS] && tokens != fw->tokens))
        return cli_usage_error("--token-ids: %s holds %zu rows of %zu ids, but --batch %zu "
                               "--tokens %zu were given; give the file alone",
                               args->value[OPT_TOKEN_IDS], fw->batch, fw->tokens, batch, tokens);
    fw->token_ids = req->token_ids;
    return EXIT_OK;
}

/* --weights and --token-ids: the network and the batch from files. */
static int read_network_files(const cli_args *args, profile_request *req)
{
    if (args->given[OPT_WEIGHTS] && args->given[OPT_MODEL])
        return cli_usage_error("--model and --weights both given; the weights file says the "
                               "network's shape, so give one of them");
    int rc;
    /* a checkpoint's sliding window is applied on its sliding layers
       (forward.sliding_window), as transformers masks them */
    if ((args->given[OPT_WEIGHTS] && (rc = read_weights(args, req)) != EXIT_OK) ||
        (args->given[OPT_TOKEN_IDS] && (rc = read_token_ids(args, req)) != EXIT_OK))
        return rc;
    return EXIT_OK;
}

int profile_read_network(const cli_args *args, profile_request *req)
{
    const int forward = profile_has(req, ENGINE_FORWARD);
    int rc;
    if (forward && (rc = read_network_files(args, req)) != EXIT_OK)
        return rc;
    if (!req->model.name[0])
        return EXIT_OK;
    /* the model's norm and QK-norm, unless the command line says otherwise */
    if (!args->given[OPT_NORM])
        req->mc.norm = req->forward.norm = req->model.norm;
    if (req->model.qk_norm)
        req->forward.qk_norm = 1;
    return forward ? model_network(args, &req->model, &req->base, &req->forward) : EXIT_OK;
}
