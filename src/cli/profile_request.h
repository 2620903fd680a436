/* varprof [profile]'s request: what the command line asks, read and checked
 * before anything runs (profile_request.c, profile_network.c). */
#ifndef VARPROF_CLI_PROFILE_REQUEST_H
#define VARPROF_CLI_PROFILE_REQUEST_H

#include "option_lists.h"
#include "options.h"
#include "output_format.h"
#include "varprof/varprof.h"

/* --engine's list, as a set */
enum { ENGINE_CLOSED = 1u << 0, ENGINE_MC = 1u << 1, ENGINE_FORWARD = 1u << 2, ENGINE_ALL = 7u };

typedef struct {
    vp_placement placements[VP_PLACEMENT_COUNT];
    size_t n_placements;
    vp_config base;
    output_format format;
    unsigned engines; /* ENGINE_* */
    vp_mc_options mc;
    vp_forward_options forward;
    vp_safetensors weights;    /* --weights, owned */
    vp_hf_architecture arch;   /* --weights DIR's config.json: forward.layer_kinds
                                  points into it */
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
    /* the combinations run: the sweep's [first_combination, first_combination
       + n_combinations), all of it but with --shard */
    size_t first_combination, n_combinations;
    int sweeping; /* a list of more than one value was given */
    const cli_args *args;
} profile_request;

/* Whether the request runs any engine of the set `engine` (ENGINE_*). */
int profile_has(const profile_request *req, unsigned engine);

/* The closed form held against a sampled engine: side by side, with verdicts. */
int profile_comparing(const profile_request *req);

/* The text's layout: every column with --wide, else 80 columns. */
vp_text_width profile_text_width(const profile_request *req);

/* The command line with each list cut to its first value: what the readers
 * of one value read. */
cli_args profile_first_values(const cli_args *args, const profile_request *req);

/* The i-th combination run: the sweep's first_combination + i. */
vp_sweep_point profile_point(const profile_request *req, size_t i);

/* The configuration and sampling options of the sweep's i-th combination.
 * Returns EXIT_OK, or EXIT_USAGE after printing the error. */
int profile_combination(const profile_request *req, size_t i, vp_sweep_point *point, vp_config *cfg,
                        vp_mc_options *mc, vp_forward_options *fw);

/* Reads and checks the whole request, every combination's sizes included,
 * before anything is allocated. Returns EXIT_OK, or EXIT_USAGE or
 * EXIT_RUNTIME after printing the error. */
int profile_read_request(const cli_args *args, profile_request *req);

/* --model NAME: the model's placement, and its layers unless --layers says
 * otherwise. Returns EXIT_OK, or EXIT_USAGE or EXIT_RUNTIME after printing
 * the error. */
int profile_read_model(const cli_args *args, profile_request *req);

/* The network the forward pass runs: --weights and --token-ids from files,
 * or the --model's own shape. Returns EXIT_OK, or EXIT_USAGE or
 * EXIT_RUNTIME after printing the error. */
int profile_read_network(const cli_args *args, profile_request *req);

/* Frees what the request owns. */
void profile_request_free(profile_request *req);

#endif
