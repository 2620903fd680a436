/* --model NAME with the forward pass: the network is the model's own shape
 * (the models table's width, heads, kv heads, head width, MLP, vocab, eps, biases, positions,
 * final norm), each part the command line does not give. */
#ifndef VARPROF_CLI_MODEL_NETWORK_H
#define VARPROF_CLI_MODEL_NETWORK_H

#include "options.h"
#include "varprof/varprof.h"

/* Sets each part of cfg and fw that args leaves open from model's shape
 * (vp_forward_options_from_model), the norm and QK-norm included. Returns
 * EXIT_OK, or EXIT_USAGE after printing what of the model the forward pass
 * cannot build and the option that runs a stand-in, where one does. */
int model_network(const cli_args *args, const vp_model *model, vp_config *cfg,
                  vp_forward_options *fw);

#endif
