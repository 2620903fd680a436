/* The real forward pass (varprof-maths(7), FORWARD PASS): a small transformer stack with
 * random weights, run on random tokens, measured after every sub-block.
 *
 * Token embedding (vocab V), then L layers of the configuration's placement:
 * causal multi-head self-attention (H query heads of hd coordinates sharing
 * H_kv key and value heads, Q, K, V and output projections with biases,
 * optional QK-norm) then an MLP of hidden width m d (or
 * options->ffn_width) of the kind options->mlp says (GELU by default), or
 * the MLP alone (cfg->mlp_only). Norms are LayerNorm or RMSNorm with weights 1
 * (gamma for a sandwich's or output-norm's output norm) and biases 0 at init.
 *
 * Measured per sub-block over the batch's B T tokens: the stream's variance,
 * the update ratio, the embedding share (its identity-path component tracked
 * exactly), the branch's gain, the update-stream cosine and the Frobenius
 * norm of the batch's stream. The result does not depend on the thread count.
 *
 * Positions (options->positions): none; learned, a table's row added to the
 * token embedding; rotary, q and k turned after the projections and
 * QK-norm; or ALiBi, a per-head slope times the key's position added to the
 * attention's scores.
 */
#ifndef VARPROF_FORWARD_H
#define VARPROF_FORWARD_H

#include <stddef.h>

#include "varprof/architecture.h"
#include "varprof/config.h"
#include "varprof/profile.h"
#include "varprof/progress.h"

#define VP_FORWARD_MAX_WIDTH 65536u
/* The attention heads of vp_forward_options_init, and of a weights file
   whose shapes fit them when the caller gives none (vp_forward_infer). */
#define VP_FORWARD_DEFAULT_HEADS 8u
#define VP_FORWARD_MAX_VOCAB 1048576u
#define VP_FORWARD_MAX_TOKENS 65536u
#define VP_FORWARD_MAX_BATCH 65536u
#define VP_FORWARD_MAX_FFN_MULT 64u
#define VP_FORWARD_MAX_FFN_WIDTH 262144u
/* The rest of vp_forward_options_init's network: the MLP's width in widths,
   the vocabulary, the batch and its tokens, the norms' eps. */
#define VP_FORWARD_DEFAULT_FFN_MULT 4u
#define VP_FORWARD_DEFAULT_VOCAB 512u
#define VP_FORWARD_DEFAULT_BATCH 2u
#define VP_FORWARD_DEFAULT_TOKENS 64u
#define VP_FORWARD_DEFAULT_EPS 1e-5

typedef enum {
    VP_INIT_GAIN,  /* normal weights, each branch's last projection scaled so that its
                      gain at init is cfg->gain (see vp_forward_branch_scales) */
    VP_INIT_TORCH, /* PyTorch's defaults: nn.Linear uniform in +-1/sqrt(fan_in), weights
                      and biases; nn.Embedding standard normal; norms 1 and 0 */
} vp_init;

#define VP_LOSS_RANDOM_STREAM 0xFFFFFF02u

/* Llama 3's scaled RoPE frequencies (config.json's rope_scaling of
 * rope_type "llama3", Llama 3.1 and 3.2): with wavelength w = 2 pi / f of
 * the frequency f = theta^(-2i/hd), f / factor where w > original_context /
 * low_freq_factor, f where w < original_context / high_freq_factor, and
 * between them (1 - s) f / factor + s f, s = (original_context / w -
 * low_freq_factor) / (high_freq_factor - low_freq_factor). factor 0: none. */
typedef struct {
    double factor, low_freq_factor, high_freq_factor;
    double original_context; /* original_max_position_embeddings */
} vp_rope_scaling;

/* One parameter's gradient, as the backward pass hands it out. */
typedef struct {
    const char *name;      /* the weights' name (below), "layers.0.mlp.fc2.weight" */
    size_t rank;           /* 1 or 2 */
    size_t shape[2];       /* PyTorch's shape; shape[1] 0 for rank 1 */
    const float *gradient; /* dL/dW, shape[0] (x shape[1]) floats, row-major */
} vp_param_grad;

/* Called once per parameter tensor, on the calling thread, the head first
 * and the embedding last; the gradient is the callee's to read until it
 * returns. */
typedef void (*vp_param_grad_fn)(void *ctx, const vp_param_grad *grad);

/* Where the backward writes a parameter's gradient, asked before it is
 * computed: n floats (the tensor's, row-major) that the callee owns and
 * that no other gradient uses until on_param_grad has had it, or NULL for
 * the backward's own buffer. The gradient then handed to on_param_grad is
 * at that address, so the callee need not copy it. Asked for a projection's
 * weight and bias (not the tied head's, norms' or embeddings'); on the
 * calling thread. */
typedef float *(*vp_param_grad_dest_fn)(void *ctx, const char *name, size_t n);

typedef struct {
    size_t width;     /* d */
    size_t heads;     /* H: query heads; with head_dim 0, H divides d */
    size_t kv_heads;  /* H_kv: key and value heads, dividing H (grouped-query
                        attention; 1: multi-query); query head h reads kv head
                        h / (H / H_kv), Hugging Face's repeat_kv; 0: H */
    size_t head_dim;  /* hd: each head's width; 0: d / H */
    size_t ffn_mult;  /* m: the MLP's hidden width is m d, unless ffn_width */
    size_t ffn_width; /* the MLP's hidden width exactly; 0: ffn_mult d */
    vp_mlp mlp;       /* the MLP's kind */
    vp_bias bias;     /* which projections carry a bias */
    size_t vocab;     /* V */
    size_t batch;     /* B sequences */
    size_t tokens;    /* T tokens each */
    size_t threads;   /* 1 .. VP_MC_MAX_THREADS */
    vp_norm norm;     /* VP_NORM_LAYERNORM or VP_NORM_RMSNORM */
    double eps;       /* the norms' eps, > 0 */
    int qk_norm;      /* a vp_qk_norm: a norm over the queries and keys, or none */
    vp_init init;
    unsigned long long seed; /* weights and tokens */
    /* optional, not owned: weights to load instead of drawing them (their
       names below), and the batch's token ids [batch][tokens] in [0, vocab) */
    const struct vp_safetensors_file *weights;
    const unsigned *token_ids;
    const vp_progress *progress; /* optional, not owned: sub-blocks run so far */
    /* with cfg->grad: the loss, and optionally every parameter's gradient */
    vp_loss loss;
    vp_param_grad_fn on_param_grad;        /* NULL: parameter gradients not wanted */
    vp_param_grad_dest_fn param_grad_dest; /* NULL: the backward's own buffers */
    void *param_grad_ctx;                  /* both callbacks' */
    /* positions: none, learned (n_ctx = tokens, or the file's rows), rope or
       alibi (which needs attention); vp_forward_options_init: none, and
       theta 10000 */
    vp_positions positions;
    double rope_theta; /* with rope: the base theta, > 0 and finite */
    /* the head's weight is the embedding (one tensor, embed.weight, whose
       gradient is the sum of its two uses, as PyTorch's tied parameter);
       the head's bias, where it has one, its own and 0 at init */
    int tie_embeddings;
    vp_rope_scaling rope_scaling; /* with rope: Llama 3's scaling, factor 0 for none */
    /* with rope: linear scaling (rope_type linear), each frequency of
       rope_theta's table divided by it (transformers' inv_freq / factor);
       0 or 1 for none; not beside rope_scaling's factor */
    double rope_linear;
    /* sliding-window attention: 0, each query attends to every earlier
       token; else, on the sliding layers, query t attends to the keys s
       with t - sliding_window < s <= t (transformers'
       sliding_window_overlay: the window's keys, itself included) */
    size_t sliding_window;
    /* which layers slide: NULL, every layer (Mistral's); else cfg->layers
       entries, each a vp_layer_kind (a checkpoint's layer_types); not owned,
       and read while the network runs */
    const unsigned char *layer_kinds;
    /* which layers slide by a rule instead (transformers'
       sliding_window_pattern, Gemma 2's 2 and Gemma 3's 6): 0, layer_kinds
       says; N >= 2, layer l attends fully where (l + 1) % N is 0 and slides
       elsewhere; not beside layer_kinds */
    size_t window_pattern;
    /* with rope, the sliding layers' own base (Gemma 3's
       rope_local_base_freq), default RoPE: no rope_scaling, no rope_linear;
       0: they turn as the full layers do */
    double rope_local_theta;
    /* Gemma-2's departures from the usual block, each off by default
       (vp_forward_options_init), set from a checkpoint's config.json: */
    double embed_scale;   /* the token embedding is multiplied by it (Gemma's
                             sqrt(d), rounded to float as Hugging Face does); 1 */
    double attn_scale;    /* the attention scores' factor; 0: 1/sqrt(hd)
                             (Gemma-2: query_pre_attn_scalar^-1/2) */
    double attn_softcap;  /* > 0: each score z becomes c tanh(z / c) before the
                             softmax (attn_logit_softcapping); 0: none */
    double logit_softcap; /* > 0: the head's logits likewise, before the loss
                             (final_logit_softcapping); 0: none */
    double logit_scale;   /* the head's logits are multiplied by it, before any
                             soft cap and the loss (Cohere's logit_scale); 1,
                             0 read as 1 */
    /* drawn weights (not weights): 0, each made panel by panel right
       before the matmul reads it and then dropped, never stored whole (a
       network's memory is its activations); 1, each drawn whole once and
       stored packed, as training needs. The same bits either way. */
    int stored_weights;
    /* with cfg->grad, what the backward keeps (vp_activations) */
    int activations;
    /* 1: the head has no bias even where bias is VP_BIAS_ALL (GPT-2's
       lm_head, bias=False, beside biases on every other projection); 0 */
    int head_unbiased;
    /* 1: LayerNorm's norms have a weight and no bias (Cohere's
       CohereLayerNorm: the mean subtracted, no shift added); a file's norms
       without biases are then LayerNorms, not RMSNorms (vp_forward_infer); 0 */
    int norm_unbiased;
    /* 1 + the token id whose embedding row gets no gradient from the
       lookups (PyTorch's nn.Embedding padding_idx, a checkpoint's
       pad_token_id); a tied head's use of the row still counts; 0: none */
    size_t embed_padding;
    /* OPT's word_embed_proj_dim: the token embedding's width e, from 1 to d,
       with weights alone; 0: d. Below d, project_in.weight [d, e] maps each
       looked-up row to the stream before the positions are added, and
       project_out.weight [e, d] maps the stream (after any final norm) to
       the head's input; neither has a bias, and embed.weight and
       head.weight are [V, e] */
    size_t embed_dim;
    /* the learned table's row that position 0 reads (OPT's 2: its table has
       two rows before the positions); 0 */
    size_t position_offset;
    /* with rotary positions, the share of each head's hd coordinates rotated:
       its first r = hd rope_fraction (GPT-NeoX's rotary_pct, Phi's
       partial_rotary_factor, GPT-J's rotary_dim / hd), r even and > 0, the
       angles theta^(-2i/r); the rest pass through. 0 or 1: the whole head */
    double rope_fraction;
    /* how the branches meet the stream (vp_residual); sequential, the
       default, is the placement's own form (the parallel placement's is
       parallel-shared-norm); a parallel form needs the parallel placement */
    vp_residual residual;
    /* a norm on the embedding before the first block (BLOOM's
       word_embeddings_layernorm): none by default; layernorm's
       embed_norm.weight [d] and embed_norm.bias [d], 1 and 0 when drawn */
    vp_embedding_norm embedding_norm;
} vp_forward_options;

/* A layer's attention (vp_forward_options.layer_kinds): transformers'
   layer_types, full_attention and sliding_attention. */
typedef enum {
    VP_LAYER_FULL,    /* every earlier token */
    VP_LAYER_SLIDING, /* the sliding window, and the local RoPE base where set */
    VP_LAYER_KIND_COUNT
} vp_layer_kind;

/* What the forward pass keeps for its backward (vp_forward_options.activations). */
typedef enum {
    VP_ACTIVATIONS_AUTO,      /* keep, unless that would not fit in half of the machine's
                                 memory and recomputing would */
    VP_ACTIVATIONS_KEEP,      /* every sub-block's intermediate values */
    VP_ACTIVATIONS_RECOMPUTE, /* each sub-block's input alone; the rest made again by
                                 running the sub-block right before its backward: one
                                 more forward pass, the same bits */
} vp_activations;

/* Where the QK-norm runs, and which norm (vp_forward_options.qk_norm). */
typedef enum {
    VP_QK_NORM_NONE,
    VP_QK_NORM_HEAD, /* RMSNorm over each head's hd coordinates, weights [hd] (--qk-norm) */
    VP_QK_NORM_FULL, /* RMSNorm over all of q's H hd coordinates and of k's H_kv hd, before
                        the split into heads, weights [H hd] and [H_kv hd]: OLMo-2's */
    VP_QK_NORM_HEAD_LAYERNORM, /* LayerNorm without bias over each head's hd coordinates,
                                  a weight per head, [H, hd] and [H_kv, hd]: Cohere's
                                  use_qk_norm (Command R+) */
} vp_qk_norm;

/* d 512, 8 heads (kv_heads 0: as many; head_dim 0: d / H), m 4 (no
 * ffn_width), GELU MLP, V 512, B 2, T 64, 1 thread, LayerNorm, eps 1e-5, no
 * QK-norm, every projection with a bias, gain init, seed 1, no progress, loss copy, no
 * gradient callback. */
void vp_forward_options_init(vp_forward_options *options);

/* Weights by name, PyTorch's [out, in] layout for projections, i the layer
 * from 0:
 *   embed.weight [V, d]
 *   pos_embed.weight [n_ctx, d]     with positions learned (rope has no tensor)
 *   embed_norm.weight [d], embed_norm.bias [d]   with embedding_norm layernorm
 *   project_in.weight [d, e], project_out.weight [e, d]   with an embedding
 *     narrower than the stream (embed_dim e < d: embed.weight is then [V, e])
 *   layers.i.attn.q.weight [H hd, d], .bias [H hd]; layers.i.attn.{k,v}.weight
 *     [H_kv hd, d], .bias [H_kv hd]; layers.i.attn.o.weight [d, H hd], .bias [d]
 *     (H hd = H_kv hd = d by default)
 *   layers.i.attn.{q_norm,k_norm}.weight [hd]         with QK-norm per head;
 *     [H hd] and [H_kv hd] with QK-norm over the full width (VP_QK_NORM_FULL);
 *     [H, hd] and [H_kv, hd] with a LayerNorm per head (VP_QK_NORM_HEAD_LAYERNORM)
 *   layers.i.mlp.fc1.weight [F, d], .bias [F]; layers.i.mlp.fc2.weight [d, F], .bias [d]
 *     for the two-matrix MLPs (gelu, gelu-tanh, relu), F the hidden width;
 *   layers.i.mlp.{gate,up}.weight [F, d], .bias [F]; layers.i.mlp.down.weight [d, F],
 *     .bias [d] for the gated ones (swiglu, geglu): down(act(gate h) * up h)
 *   layers.i.{attn_norm,mlp_norm}.weight [d] (.bias [d] for LayerNorm): the norm on
 *     the branch input or on the stream, wherever the placement puts it; a parallel
 *     layer's one norm is attn_norm (residual parallel-two-norms: attn_norm on the
 *     attention's input, mlp_norm on the MLP's)
 *   layers.i.{attn_out_norm,mlp_out_norm}.weight (.bias): sandwich's and output-norm's
 *     norm on the branch output (its weight is the scale gamma)
 *   final_norm.weight [d] (.bias [d] for LayerNorm): the norm before the head
 *   head.weight [V, d], .bias [V]: the output head (the losses copy and next);
 *     with tie_embeddings no head.weight: the head is embed.weight
 * A projection without a bias (o->bias: VP_BIAS_NONE, or all but q, k and v
 * for VP_BIAS_QKV, the head included, or the attention's four for
 * VP_BIAS_MLP) has no .bias tensor, in a file or in
 * the gradients. An MLP-only layer has no attn tensors. With a file, the presence of
 * final_norm.weight decides the final norm; a file without head.* still
 * serves the forward profile and the loss random. */

/* What a weights file says of the network: width and vocab (embed.weight;
 * with OPT's project_in.weight [d, e], the width d and embed_dim e),
 * layers (the highest i + 1), whether layers have attention, the heads'
 * shape, the MLP's hidden width (ffn_mult when the width divides it,
 * ffn_width 0; else ffn_width), whether the MLP is gated (mlp.gate.weight)
 * or not (mlp.fc1.weight), QK-norm, LayerNorm (norms with biases) or
 * RMSNorm, and which projections have biases (layer 0's q and MLP's first
 * projection tell: VP_BIAS_ALL, VP_BIAS_MLP where q has none, VP_BIAS_QKV
 * or VP_BIAS_NONE). Sets those
 * fields of cfg and o. The heads' shape: o->heads and o->head_dim are what
 * the caller was given, 0 for not given. hd is the per-head QK-norm weights'
 * length, else o->head_dim, else q's rows / o->heads; with neither given,
 * d / VP_FORWARD_DEFAULT_HEADS where q has d rows and k's rows are whole
 * heads of that width, else VP_EINVAL: the shapes admit several readings
 * (q 56 rows and k 8 fit 14 heads of 4 with 2 kv heads as well as 7 of 8
 * with 1), which the message names, and the caller must choose (heads and
 * head_dim). Then H is layer 0's q rows / hd and H_kv its k rows / hd,
 * kv_heads and head_dim left 0 where they are the defaults. A q_norm
 * weight as long as q's rows is QK-norm over the full width
 * (VP_QK_NORM_FULL) with o's heads; shorter, per head (VP_QK_NORM_HEAD); of
 * rank 2 [H, hd], a LayerNorm per head (VP_QK_NORM_HEAD_LAYERNORM), hd its
 * second dimension.
 * head_unbiased is set where the MLP's projections have biases but the head
 * has none (no head.bias); embedding_norm is layernorm where the file has
 * embed_norm.weight (BLOOM's). The names do not tell the activation: o->mlp
 * stays as it was when its gating agrees with the file's, else becomes
 * VP_MLP_SWIGLU (gated) or VP_MLP_GELU. VP_EFORMAT when embed.weight or the
 * layers' MLPs are missing or of no consistent shape, or when layer 0 has q
 * but not k, or their rows are no whole number of heads of hd with k's
 * heads dividing q's, or q's rows are not the given heads of hd. */
vp_status vp_forward_infer(const struct vp_safetensors_file *weights, vp_config *cfg,
                           vp_forward_options *o, vp_error *err);

/* H_kv of o: kv_heads, or heads when it is 0. */
size_t vp_forward_kv_heads(const vp_forward_options *o);

/* hd of o: head_dim, or width / heads when it is 0 (0 when heads is). */
size_t vp_forward_head_dim(const vp_forward_options *o);

/* "gain", "torch". */
const char *vp_init_name(vp_init init);

/* The MLP's hidden width of o: ffn_width, or ffn_mult times width. */
size_t vp_forward_ffn_width(const vp_forward_options *o);

/* Checks cfg and options: every size in its range (ffn_width 0 or 1 ..
 * VP_FORWARD_MAX_FFN_WIDTH; ffn_mult d is bounded by ffn_mult's range and
 * memory alone), an MLP kind in range, H dividing d when head_dim is 0,
 * kv_heads 0 or dividing H, head_dim 0 or 1 .. VP_FORWARD_MAX_WIDTH with H
 * head_dim at most VP_FORWARD_MAX_WIDTH, the network
 * within half of the machine's memory; with cfg->grad, a loss in range, at
 * least 2 tokens for next, and with weights a head of shape [V, d] where the
 * loss needs one and a final norm agreeing with cfg->final_norm (unless
 * VP_FINAL_NORM_DEFAULT); positions in range, rope with attention, an even
 * head width and a finite theta > 0 (rope_local_theta 0 or so too,
 * rope_linear 0 or from 1 to 1e6 and not beside rope_scaling), no
 * sliding_window beside MLP-only layers, layer_kinds entries each a
 * vp_layer_kind, window_pattern 0 or from 2 to VP_MAX_LAYERS and not beside
 * layer_kinds, learned positions from a file at least
 * as many as the tokens, alibi with attention; an embedding norm in range,
 * and none beside an embedding narrower than the stream. VP_EINVAL or
 * VP_ENOMEM, with a message naming the limit; nothing is allocated. */
vp_status vp_forward_check(const vp_config *cfg, const vp_forward_options *options, vp_error *err);

/* Fills *out with the header vp_forward_profile gives the profile of cfg
 * and options, without building the network: the engine, the norm, a copy
 * of cfg (its final norm the weights file's where options->weights is set),
 * the VP_HAS_* fields the rows will carry, how the network is shaped and
 * sampled (vp_sampling) and sub_blocks; rows and n_rows are left as they
 * are. A writer heads a run with it before the run ends. Fails with
 * VP_EINVAL, *out untouched, when out, cfg or options is NULL or
 * options->width is 0; nothing else is checked (vp_forward_check does), so
 * options it would reject are written as they are. */
vp_status vp_forward_header(vp_profile *out, const vp_config *cfg,
                            const vp_forward_options *options);

/* Builds the network, runs it and returns the measured profile in *out
 * (vp_profile_free), with VP_HAS_MEASURED and VP_HAS_STREAM_NORM. With
 * cfg->grad it also runs the backward pass of options->loss: grad_var and
 * weight_grad in every row, VP_HAS_GRAD, the loss in profile->loss, each
 * parameter's gradient to options->on_param_grad; a float gradient that
 * overflows stops the rows' gradients at that sub-block
 * (VP_OVERFLOW_FLOAT_GRAD). Fails as
 * vp_forward_check does, VP_ENOMEM when an allocation fails, VP_ETHREAD when
 * a thread cannot start, VP_EINVAL when a gain cannot be reached (GSL's
 * integration failed). A figure that overflows stops the profile there.
 * With options->weights the profile's config.embedding_var is the measured
 * v_0, rows[0].stream_var: the stream's size is relative to the embedding
 * the file gives, not to a variance no weight was drawn to. */
vp_status vp_forward_profile(const vp_config *cfg, const vp_forward_options *options,
                             vp_profile **out, vp_error *err);

#endif
