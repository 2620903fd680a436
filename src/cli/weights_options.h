/* What `varprof --weights` fixes, said before anything runs: the options a
 * weights file or checkpoint decides, a checkpoint's file given for its
 * folder, and a batch of random tokens where none were given. */
#ifndef VARPROF_CLI_WEIGHTS_OPTIONS_H
#define VARPROF_CLI_WEIGHTS_OPTIONS_H

#include "options.h"
#include "weights_shape.h"
#include "varprof/config.h"
#include "varprof/forward.h"
#include "varprof/safetensors.h"

/* --gain, --gains, --embedding-var, --gamma, --beta and --init with
 * --weights: loaded weights have their own gains and embedding (both
 * measured), norm weights and no draw. A usage error naming the option and
 * why; EXIT_OK where none is given. */
int weights_refuse_settings(const cli_args *args);

/* --weights naming a file of a Hugging Face checkpoint where its folder was
 * meant: its config.json or another JSON file. A usage error giving the
 * folder; EXIT_OK otherwise. Before the file is read. */
int weights_refuse_json(const cli_args *args);

/* A plain safetensors file without varprof's embed.weight that is a
 * checkpoint's (a config.json beside it, or its embedding under a Hugging
 * Face name): a usage error giving the folder; EXIT_OK otherwise, the
 * loader then naming what is missing. */
int weights_refuse_checkpoint_file(const cli_args *args, const vp_safetensors *weights);

/* --width, --vocab, --layers, --ffn-mult and --ffn-width where given,
 * against the shape the weights have (vp_forward_options_from_checkpoint
 * with none of them kept; arch as there): a usage error saying what the
 * file has where one disagrees. cfg and fw hold what the command line
 * read; given says which it gave. */
int weights_refuse_shape(const cli_args *args, const vp_safetensors *weights,
                         const vp_hf_architecture *arch, const weights_shape_given *given,
                         const vp_config *cfg, const vp_forward_options *fw);

/* DeepNorm's alpha and beta for the weights' depth, where the command line
 * set neither them nor --layers: read_stack_options made them for the
 * default depth, before the file said its own. */
void weights_adopt_depth(const cli_args *args, vp_config *cfg);

/* One warning line where the weights run on token ids drawn at random (no
 * --token-ids): the batch, the seed, and the option that gives real ones. */
void weights_warn_random_tokens(const cli_args *args, const vp_forward_options *fw);

#endif
