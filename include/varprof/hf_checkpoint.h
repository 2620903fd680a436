/* Reading a Hugging Face model directory (varprof(1), --weights DIR):
 * config.json for the architecture, the weights from model.safetensors or
 * from the shards model.safetensors.index.json lists, renamed and reshaped
 * into varprof's names and layouts (include/varprof/forward.h) so that the
 * forward pass's loader and vp_forward_infer read them as they read a file
 * of varprof's own.
 *
 * Families (config.json's model_type) and their names, one table per family
 * in the library:
 *   gpt2               [transformer.]wte, wpe, h.N.ln_1, h.N.attn.c_attn (Conv1D
 *                      [d, 3d], q, k, v fused: split and transposed),
 *                      h.N.attn.c_proj, h.N.ln_2, h.N.mlp.c_fc, h.N.mlp.c_proj
 *                      (Conv1D, transposed), ln_f; the head is wte (tied).
 *   llama, mistral,    model.embed_tokens, model.layers.N.input_layernorm,
 *   qwen2              self_attn.{q,k,v,o}_proj (qwen2: q, k, v biases; k and v
 *                      of num_key_value_heads x head_dim rows),
 *                      post_attention_layernorm, mlp.{gate,up,down}_proj,
 *                      model.norm, lm_head (or embed_tokens when tied).
 *   gemma2             llama's, with input_layernorm, post_attention_layernorm,
 *                      pre_feedforward_layernorm and post_feedforward_layernorm
 *                      (attn_norm, attn_out_norm, mlp_norm, mlp_out_norm), each
 *                      norm weight w read as 1 + w; tied by default.
 *   gemma3_text        gemma2's, with self_attn.{q,k}_norm over each head of q
 *                      and k, read as 1 + w; a RoPE base per layer type (the
 *                      sliding layers' rope_local_base_freq, the full layers'
 *                      rope_theta with any linear scaling), no soft caps by
 *                      default.
 *   olmo2              llama's without input norms: post_attention_layernorm
 *                      and post_feedforward_layernorm on the branch outputs,
 *                      self_attn.{q,k}_norm over q's and k's full width.
 * gpt2, llama, mistral and qwen2 are pre-norm (norms on the branches'
 * inputs), gemma2 sandwich, olmo2 output-norm; each with a final norm.
 *
 *   opt                model.decoder.embed_tokens, embed_positions (two rows of
 *                      offset before position 0's), project_in and project_out
 *                      (word_embed_proj_dim below the width),
 *                      layers.N.self_attn_layer_norm, self_attn.{q,k,v,out}_proj,
 *                      final_layer_norm, fc1, fc2, final_layer_norm at the top
 *                      (pre-norm only); the head is embed_tokens (tied). Pre-norm,
 *                      or Post-LN without a final norm where do_layer_norm_before
 *                      is false.
 *   cohere             llama's names without post_attention_layernorm:
 *                      input_layernorm (a LayerNorm without bias) feeds
 *                      attention and the MLP side by side (parallel); RoPE
 *                      with interleaved pairs; logit_scale on the logits;
 *                      tied by default; with use_qk_norm self_attn.{q,k}_norm
 *                      [heads, head_dim], a LayerNorm per head.
 *
 * Memory: the shards are mapped read-only (vp_safetensors_map), so their
 * bytes stay in the page cache, and no float copy is made: the file
 * vp_hf_checkpoint_read returns holds each tensor's name and shape, and a
 * source (vp_tensor_source) converts and reshapes a tensor from its shard
 * when vp_safetensors_to_float asks, into the caller's floats, with one
 * stored tensor's floats of scratch (a Conv1D's or a fused bias's). The
 * forward pass reads such a file a layer at a time (fw_model_use_layer):
 * the model never sits in memory whole in float. */
#ifndef VARPROF_HF_CHECKPOINT_H
#define VARPROF_HF_CHECKPOINT_H

#include <stddef.h>

#include "varprof/forward.h"
#include "varprof/grads_csv.h"
#include "varprof/placement.h"
#include "varprof/safetensors.h"
#include "varprof/status.h"

/* Most unknown config.json keys vp_hf_architecture names. */
#define VP_HF_MOST_UNKNOWN_KEYS 16
/* Most layers a checkpoint whose layers are of two kinds (full and
   sliding attention) may have. */
#define VP_HF_MOST_LAYER_KINDS 1024

/* What config.json says of the network, with the names it came from. Its
 * fields follow the config's order of ideas rather than their sizes: it is
 * made once a checkpoint, so its padding costs nothing. */
// NOLINTNEXTLINE(clang-analyzer-optin.performance.Padding) grouped by meaning, made once
typedef struct {
    char model_type[32];    /* "gpt2", "llama", "mistral", "qwen2", "gemma2", "olmo2" */
    vp_placement placement; /* VP_PRE_NORM; gemma2 VP_SANDWICH, olmo2 VP_OUTPUT_NORM */
    size_t layers, width, heads, vocab, ffn_width;
    size_t kv_heads;        /* num_key_value_heads, dividing heads (= heads by default) */
    size_t head_dim;        /* head_dim, or width / heads */
    size_t n_ctx;           /* learned positions' rows (gpt2's n_positions); 0 otherwise */
    size_t position_offset; /* the row position 0 reads in the learned table: opt's 2
                               (its table has max_position_embeddings + 2 rows); else 0 */
    size_t embed_dim;       /* the token embedding's width: opt's word_embed_proj_dim, with
                               project_in and project_out where it is not the width; else
                               the width */
    vp_mlp mlp;             /* gelu_new: VP_MLP_GELU_TANH; silu: VP_MLP_SWIGLU; gemma2's
                               gelu_pytorch_tanh: VP_MLP_GEGLU_TANH */
    vp_bias bias;           /* gpt2 VP_BIAS_ALL, llama and mistral NONE, qwen2 QKV */
    vp_norm norm;           /* gpt2 LayerNorm, the others RMSNorm */
    double eps;             /* layer_norm_epsilon or rms_norm_eps */
    vp_positions positions; /* gpt2 learned, the others rope */
    double rope_theta;      /* with rope: rope_theta (default 10000) */
    double rope_fraction;   /* the share of a head rotated: gpt_neox's and phi's
                               partial_rotary_factor (rotary_pct), gptj's rotary_dim /
                               head_dim; 0 for the families that rotate every coordinate */
    vp_residual residual;   /* gpt_neox's use_parallel_residual: parallel-two-norms;
                               else sequential (the placement's own form) */
    /* llama3's rope_scaling; factor 0 without */
    vp_rope_scaling rope_scaling;
    int tied;              /* the head is the embedding (tie_word_embeddings) */
    size_t sliding_window; /* the sliding layers' window (mistral's, starcoder2's and
                              phi3's every layer, qwen2's and qwen3's from
                              max_window_layers on with use_sliding_window, gemma2's
                              and gemma3_text's by layer_types); 0 when none */
    /* which layers slide (vp_forward_options.layer_kinds): layer_kinds_given
       0, every layer where sliding_window is set; 1, layer_kinds[l], a
       vp_layer_kind, for l < layers (config.json's layer_types, or the
       family's rule), at most VP_HF_MOST_LAYER_KINDS layers */
    int layer_kinds_given;
    unsigned char layer_kinds[VP_HF_MOST_LAYER_KINDS];
    /* gemma3_text's: the sliding layers' RoPE base where it is not the full
       layers' (rope_local_base_freq), and the full layers' linear RoPE
       factor (rope_scaling of type linear); 0 for none, and for the others */
    double rope_local_theta, rope_linear;
    /* a vp_qk_norm: olmo2 VP_QK_NORM_FULL, qwen3's and gemma3_text's
       VP_QK_NORM_HEAD, cohere's use_qk_norm VP_QK_NORM_HEAD_LAYERNORM, else none */
    int qk_norm;
    /* gemma2's (vp_forward_options): sqrt(hidden_size) rounded to float,
       query_pre_attn_scalar^-1/2, attn_logit_softcapping and
       final_logit_softcapping (0: null); 1, 0, 0, 0 for the others */
    double embed_scale, attn_scale, attn_softcap, logit_softcap;
    int head_bias; /* the head has a bias: none of the families read so far */
    /* cohere's logit_scale on the logits (0 for the others: none), and its
       LayerNorm without bias (norm_unbiased 1; 0 for the others) */
    double logit_scale;
    int norm_unbiased;
    long pad_token_id; /* the llama-like families' pad_token_id (nn.Embedding's
                          padding_idx: the lookups give its row no gradient);
                          -1 for none, and for GPT-2, whose embedding has none */
    /* config.json's keys in none of the family's lists (read, known to
       change no number, refused): the first VP_HF_MOST_UNKNOWN_KEYS named,
       n_unknown_keys counting them all. The caller warns that the numbers
       assume each changes nothing. */
    size_t n_unknown_keys;
    char unknown_keys[VP_HF_MOST_UNKNOWN_KEYS][64];
} vp_hf_architecture;

/* 1 when path names a directory (a Hugging Face checkpoint), else 0. */
int vp_hf_is_checkpoint_dir(const char *path);

/* Reads the checkpoint directory dir: *weights gets every tensor under
 * varprof's name in F32 (free with vp_safetensors_free), *arch the
 * architecture. A tied checkpoint (arch->tied) gets no head.weight: its
 * head is the embedding (vp_forward_options.tie_embeddings). The tensors are
 * exactly the checkpoint's (GPT-2's head has no bias, and gets none:
 * vp_forward_infer sets head_unbiased). Keys of config.json in none of
 * the family's lists are named in arch->unknown_keys, for the caller to
 * warn of.
 *
 * Fails with VP_EIO when a file cannot be opened or read (config.json
 * missing included), VP_ENOMEM, or VP_EFORMAT naming what is wrong:
 * config.json not a regular file, above 64 MiB or not a JSON object; a
 * model_type missing or not one of the families above (gemma and olmo
 * named as not yet read); a field missing, of the wrong type, out of its
 * range or contradicting another (n_embd against hidden_size, heads not
 * dividing the width where head_dim is not given, num_key_value_heads not
 * dividing num_attention_heads, both numbers named); a rope_scaling not
 * llama3's or not in range, scale_attn_by_inverse_layer_idx, attention_bias (but qwen2's and
 * mistral's) or llama's mlp_bias set; gemma2's hidden_activation neither
 * gelu_pytorch_tanh nor gelu; layer_types not a list of full_attention and
 * sliding_attention, one a layer, or of both kinds over more than
 * VP_HF_MOST_LAYER_KINDS layers; gemma3_text's RoPE of a type other than
 * default (and linear on the full layers), or use_bidirectional_attention set;
 * neither model.safetensors nor the index; an index that is not
 * JSON or has no weight_map object, a shard path that is empty, absolute,
 * has a '..' component, leads outside dir (a symlink included), names the
 * index itself or a missing file; a tensor mapped twice or kept in a shard
 * the index does not map it to; a tensor of the family's missing or of a
 * shape other than config.json makes it; a tensor the family does not
 * know; more than 32768 tensors in all. Any shard failing
 * vp_safetensors_map fails the same way. On failure *weights is empty. */
vp_status vp_hf_checkpoint_read(const char *dir, vp_safetensors *weights, vp_hf_architecture *arch,
                                vp_error *err);

/* The stored tensor that tensor `name` of weights (as vp_hf_checkpoint_read
 * made it) comes from, under the checkpoint's own name and shape: a fused
 * tensor whole (GPT-2's c_attn for q, k and v), a Conv1D's [in, out]. 1 with
 * *stored set; 0 when weights is no checkpoint's or has no such tensor. */
int vp_hf_stored_tensor(const vp_safetensors *weights, const char *name,
                        const vp_tensor_info **stored);

/* The gradients' norms in (varprof's names) as the checkpoint names its
 * tensors, so that a row can be put beside PyTorch's: one row per stored
 * tensor, a fused tensor's parts as one row whose Frobenius norm is their
 * norms in quadrature (the norm of the whole tensor's gradient), rms over
 * the stored elements, shape as stored; rows in the order vp_grads_csv_write
 * gives in's. out must be zeroed; free it with vp_grad_norms_free. VP_EINVAL
 * when weights is not a checkpoint's or a row names none of its tensors,
 * VP_ENOMEM; in's own status when it lost a row. */
vp_status vp_hf_grad_norms_stored(const vp_safetensors *weights, const vp_grad_norms *in,
                                  vp_grad_norms *out, vp_error *err);

#endif
