/* A weights file's shape, taken where the command line is silent: the one
 * rule `varprof --weights` and `varprof train --weights` share. */
#ifndef VARPROF_CLI_WEIGHTS_SHAPE_H
#define VARPROF_CLI_WEIGHTS_SHAPE_H

#include "options.h"
#include "varprof/forward.h"
#include "varprof/hf_checkpoint.h"
#include "varprof/safetensors.h"

/* Which parts of the shape the user gave: those keep their values. */
typedef struct {
    int width, vocab, ffn_mult, ffn_width, mlp, bias, norm, heads, kv_heads, head_dim, layers,
        block;
    int eps, positions, rope_theta, tie_embeddings; /* weighed against config.json */
    /* the command's own spellings of width, vocab, MLP multiple and layers
       (profile's --width, train's), for messages that name them */
    option_id width_id, vocab_id, ffn_mult_id, layers_id;
} weights_shape_given;

/* Which parts args gives. The command's own spellings of width, vocab, MLP
 * multiple, layers and block (profile's --width, train's) are passed in;
 * the other options are the same for both. */
weights_shape_given weights_shape_given_by(const cli_args *args, option_id width, option_id vocab,
                                           option_id ffn_mult, option_id layers, option_id block);

/* --weights PATH: a Hugging Face checkpoint directory (vp_hf_checkpoint_read;
 * *is_checkpoint 1 and *arch filled) or a safetensors file of varprof's
 * names (vp_safetensors_read; *is_checkpoint 0). Fails as those do. */
vp_status weights_read(const char *path, vp_safetensors *weights, vp_hf_architecture *arch,
                       int *is_checkpoint, vp_error *err);

/* The parts of the network `given` keeps, as vp_forward_options_from_model
 * and vp_forward_options_from_checkpoint take them. */
unsigned weights_shape_keep(const weights_shape_given *given);

/* Sets each part of cfg and fw that `given` leaves open from the weights
 * (vp_forward_options_from_checkpoint; arch is the checkpoint's config.json,
 * NULL for a file of varprof's names), after refusing the shape options the
 * file fixes (weights_refuse_shape). Returns EXIT_OK, or after printing
 * what disagrees and the option that fixes it: EXIT_USAGE where a setting
 * given disagrees with the file (and for every failure with usage_only),
 * else EXIT_RUNTIME. */
int weights_adopt(const cli_args *args, const vp_safetensors *weights,
                  const vp_hf_architecture *arch, const weights_shape_given *given, vp_config *cfg,
                  vp_forward_options *fw, int usage_only);

#endif
