/* A forward pass's options from a built-in model's shape or from a
 * checkpoint: the rule varprof(1) follows for --model and --weights, for a
 * library user to load a model exactly as the program does. */
#ifndef VARPROF_FORWARD_SETUP_H
#define VARPROF_FORWARD_SETUP_H

#include "varprof/config.h"
#include "varprof/forward.h"
#include "varprof/hf_checkpoint.h"
#include "varprof/models.h"
#include "varprof/safetensors.h"
#include "varprof/status.h"

/* The parts of vp_config and vp_forward_options the caller set itself, as
 * a mask: the model's or the file's value leaves each as it is (where the
 * file fixes it, a kept value that differs is refused). */
enum {
    VP_KEEP_WIDTH = 1u << 0,
    VP_KEEP_VOCAB = 1u << 1,
    VP_KEEP_FFN = 1u << 2, /* ffn_mult and ffn_width */
    VP_KEEP_MLP = 1u << 3,
    VP_KEEP_BIAS = 1u << 4,
    VP_KEEP_NORM = 1u << 5,
    VP_KEEP_HEADS = 1u << 6,
    VP_KEEP_KV_HEADS = 1u << 7,
    VP_KEEP_HEAD_DIM = 1u << 8,
    VP_KEEP_LAYERS = 1u << 9,
    VP_KEEP_BLOCK = 1u << 10, /* cfg->mlp_only */
    VP_KEEP_EPS = 1u << 11,
    VP_KEEP_POSITIONS = 1u << 12,
    VP_KEEP_ROPE_THETA = 1u << 13, /* and with it Llama 3.1's rope scaling */
    VP_KEEP_TIE_EMBEDDINGS = 1u << 14,
    VP_KEEP_FINAL_NORM = 1u << 15,
    VP_KEEP_RESIDUAL = 1u << 16,
    VP_KEEP_ROPE_FRACTION = 1u << 17,
    VP_KEEP_EMBEDDING_NORM = 1u << 18,
    VP_KEEP_LOGIT_SCALE = 1u << 19,
    VP_KEEP_WINDOW = 1u << 20, /* the sliding window and its pattern, and with them the
                                  sliding layers' own RoPE base */
};

/* Sets each part of cfg (final_norm) and fw that `keep` leaves open from
 * model's shape: width, vocab, MLP kind and width (exact, ffn_mult standing
 * by), eps, tied head, final norm, heads (with them the kv heads and head
 * width unless kept), biases, positions, RoPE's base, fraction and pairing
 * where RoPE runs, the residual form (where the model's placement is parallel), the
 * embedding norm, the logit scale, LayerNorm's bias, attention's columns
 * (the sliding window and its pattern, the sliding layers' RoPE base, the
 * linear RoPE factor, the scores' scale, the soft caps), and
 * what no column of the table says but the forward pass builds: the norm
 * and QK-norm (OLMo 2's over the full width), Gemma's embedding scale,
 * Llama 3.1's scaled RoPE. cfg's placement and
 * layers are the caller's. A model without a shape (shape.known 0) changes
 * nothing but the norm and QK-norm.
 *
 * Fails with VP_EINVAL, the message naming the model and what of it the
 * forward pass does not build, and err->fix the way past it: a mixture of
 * experts, an encoder's row, BERT and RoBERTa whatever is kept
 * (VP_FIX_BY_HAND); positions other than none, learned, rope, partial rope
 * (with its fraction in the table) and alibi unless the positions are kept
 * (VP_FIX_POSITIONS). fw may be part set on failure; fw->layer_kinds is
 * left NULL where the table gives a window. */
vp_status vp_forward_options_from_model(const vp_model *model, unsigned keep, vp_config *cfg,
                                        vp_forward_options *fw, vp_error *err);

/* Sets each part of cfg and fw that `keep` leaves open from the weights'
 * shapes (vp_forward_infer), and, with arch (a checkpoint's config.json, as
 * vp_hf_checkpoint_read gives it; NULL for a file of varprof's own names),
 * from config.json first: its heads, kv heads, head width, eps, MLP kind,
 * positions, RoPE base and scaling, tied head, head bias, padding row,
 * Gemma 2's scales and caps, QK-norm, and cfg->placement. From the shapes:
 * width, vocab, MLP width, MLP kind, biases, norm, layers, MLP-only blocks,
 * the heads' shape q's and k's rows give with the heads kept (a
 * checkpoint's count as kept), whether the head has a bias, QK-norm where
 * the file has its weights, learned positions where the file has
 * pos_embed.weight and fw's are none. fw->weights is set to weights.
 * A checkpoint's sliding window and its layers' kinds (the window on the
 * sliding layers, their own RoPE base and the full layers' linear factor)
 * become fw's: fw->layer_kinds then points into arch, which the caller
 * keeps while fw runs.
 *
 * Fails as vp_forward_infer does, and with VP_EINVAL where a kept value
 * disagrees with config.json or the file (err->fix names the setting to
 * leave to the file: VP_FIX_HEADS, VP_FIX_KV_HEADS, VP_FIX_HEAD_DIM,
 * VP_FIX_EPS, VP_FIX_MLP, VP_FIX_POSITIONS, VP_FIX_ROPE_THETA,
 * VP_FIX_TIE_EMBEDDINGS, VP_FIX_BIAS) or where nothing is kept and the shapes
 * admit more than one head shape (VP_FIX_HEAD_SHAPE). On failure cfg and fw may be part set. */
vp_status vp_forward_options_from_checkpoint(const vp_safetensors *weights,
                                             const vp_hf_architecture *arch, unsigned keep,
                                             vp_config *cfg, vp_forward_options *fw, vp_error *err);

#endif
