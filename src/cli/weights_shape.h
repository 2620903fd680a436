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

/* What a checkpoint's config.json says beyond the names: the heads, kv
 * heads and head width, the
 * norms' eps, the MLP's activation, the positions and rope theta. Each
 * option `given` names must agree with it: VP_EINVAL naming the option,
 * both values and the config.json field. */
vp_status weights_arch_adopt(const vp_hf_architecture *arch, const weights_shape_given *given,
                             vp_forward_options *o, vp_error *err);

/* Reads the shape weights describe (vp_forward_infer) and sets each part of
 * cfg and o that `given` leaves open: width, vocab, MLP width (multiple or
 * exact), the MLP's kind (gated or not as the names say; VP_EINVAL when a
 * given kind's gating disagrees with the file's), the projections' biases
 * (VP_EINVAL when a given setting is not the file's), norm,
 * layers, MLP-only blocks, and the heads, kv heads and head width q's and
 * k's rows tell with the heads and head width given (a checkpoint's
 * config.json counts as given: weights_arch_adopt first); VP_EINVAL, naming
 * --heads and --head-dim, where nothing is given and the shapes admit more
 * than one reading. Whether the head has a bias. QK-norm is on if
 * either says so; positions are learned when the file has pos_embed.weight
 * and o's are none. Fails as vp_forward_infer does, changing nothing. */
vp_status weights_shape_adopt(const vp_safetensors *weights, const weights_shape_given *given,
                              vp_config *cfg, vp_forward_options *o, vp_error *err);

#endif
