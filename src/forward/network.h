/* The forward pass's network: its shapes and its weights, packed once for the
 * matmul kernel of the instruction set in use. */
#ifndef VARPROF_FORWARD_MODEL_H
#define VARPROF_FORWARD_MODEL_H

#include <stdint.h>

#include "forward/weight_draw.h"
#include "kernels/kern_table.h"
#include "varprof/forward.h"
#include "varprof/safetensors.h"

typedef struct {
    float *weight, *bias; /* [d]; bias NULL for RMSNorm */
} fw_norm;

typedef struct {
    size_t in, out;
    float *packed;   /* W [out][in] packed for the matmul */
    float *packed_t; /* W^T [in][out] packed, for the backward's dX = dY W;
                        NULL when the model runs no backward, or when it
                        reads raw in place (matmul_wt_fits) */
    float *bias;     /* [out]; NULL for a projection without one (vp_bias) */
    float *raw;      /* W [out][in] as given, for a model that trains (keep_raw);
                        else NULL: the packed copies are all there is */
    fw_draw draw;    /* a drawn model's: how W is made as it is used (packed
                        and packed_t NULL); kind FW_DRAW_NONE otherwise */
} fw_linear;

typedef struct {
    fw_norm attn_norm, mlp_norm;         /* on the branch input or the stream */
    fw_norm attn_out_norm, mlp_out_norm; /* sandwich and output-norm: on the branch output */
    fw_linear q, k, v, o;                /* q: d -> H hd; k, v: d -> H_kv hd; o: H hd -> d */
    float *q_norm, *k_norm;              /* with QK-norm: [hd] each per head; [H hd] and [H_kv hd]
                               over the full width (VP_QK_NORM_FULL) or one [hd] per head
                               (VP_QK_NORM_HEAD_LAYERNORM) */
    /* the two-matrix MLP: fc2(act(fc1 h)); the gated one: fc1 is the gate,
       up the second input projection, fc2 down: fc2(act(fc1 h) * up h) */
    fw_linear fc1, fc2, up; /* up: gated MLPs only */
} fw_layer;

/* A model whose layers stay in their file (a checkpoint, whose tensors are
 * made on demand): one layer's weights in memory at a time, converted and
 * packed right before the layer runs, forward and backward. */
typedef struct {
    struct fw_model *model; /* whose one layer of memory this fills */
    const vp_safetensors *file;
    size_t resident;  /* the layer in memory; SIZE_MAX: none yet */
    float *scratch;   /* one tensor's floats */
    vp_status status; /* the first fetch that failed, with err */
    vp_error err;
} fw_layer_stream;

typedef struct fw_model {
    vp_placement placement;
    const vp_placement_traits *traits; /* where its norms sit, from the placement table */
    int mlp_only;
    int qk_norm; /* a vp_qk_norm */
    vp_mlp mlp;
    int gated;            /* vp_mlp_gated(mlp) */
    vp_bias bias;         /* which projections carry a bias (fw_linear.bias NULL when not) */
    int head_unbiased;    /* the head has none even with VP_BIAS_ALL (GPT-2's) */
    int norm_unbiased;    /* LayerNorm's bias stays 0 and is no tensor (Cohere's) */
    size_t embed_padding; /* 1 + the id whose row the lookups leave alone; 0 */
    vp_norm norm;
    float eps;
    size_t d, heads, head_dim, hidden, vocab, layers;
    size_t kv_heads;          /* H_kv, dividing heads: query head h reads kv head h / (H / H_kv) */
    size_t q_width, kv_width; /* H hd: q's and the heads' output; H_kv hd: k's and v's */
    float *embed;             /* [V][d]; NULL in a drawn model, whose rows embed_draw makes */
    int drawn;                /* weights made as they are used (fw_draw), none stored whole */
    int recompute;            /* with backward: only each sub-block's input kept, the rest
                      made again before its backward (VP_ACTIVATIONS_RECOMPUTE) */
    fw_draw embed_draw;
    fw_layer *layers_;
    /* the output head and the final norm before it (head.*, final_norm.*) */
    int has_head, has_final_norm, backward;
    int keep_raw;            /* each linear keeps W as given (raw), to be updated and repacked */
    int tied;                /* the head's W is the embedding: head.raw is embed, packed from it */
    int streamed;            /* one layer in memory at a time (weights made on demand, no keep_raw):
                     every layers_[l] names the same memory, stream fills it */
    fw_layer_stream *stream; /* fw_model_load's, for a streamed model; else NULL */
    fw_norm final_norm;
    fw_linear head; /* d -> V */
    /* positions (vp_positions): learned's table, rope's base */
    vp_positions positions;
    size_t n_ctx;           /* learned: pos_embed's rows; else 0 */
    size_t position_offset; /* the row position 0 reads (OPT's 2); 0 */
    /* the token embedding's width e (embed and a tied head [V][e]); below
       d, project_in (e -> d) after the lookup and project_out (d -> e)
       before the head, neither with a bias (OPT-350m's) */
    size_t embed_dim;
    fw_linear project_in, project_out;
    float *pos_embed; /* [n_ctx][d] with learned positions; else NULL */
    double rope_theta;
    vp_rope_scaling rope_scaling; /* Llama 3's, factor 0 for none */
    size_t rope_dim;              /* rotary: each head's first rope_dim coordinates turn
                                     (vp_forward_options.rope_fraction); else 0 */
    double rope_linear;           /* linear RoPE scaling's factor; 0: none */
    double rope_local_theta;      /* the sliding layers' own RoPE base; 0: none */
    /* sliding-window attention (vp_forward_options): the window (0: none)
       and which layers slide, [layers] vp_layer_kind (NULL: every layer),
       the options' list, which outlives the model; fw_layer_window and
       fw_rope read them */
    size_t window;
    const unsigned char *layer_kinds;
    size_t window_pattern; /* or by the options' rule: l full where (l + 1) % it is 0 */
    vp_embedding_norm embedding_norm;
    fw_norm embed_norm; /* the embedding's LayerNorm (embedding_norm); its weight NULL
                           for none */
    /* the residual form: the parallel placement's shared norm, or
       vp_forward_options.residual's two norms (attn_norm, mlp_norm) */
    const vp_residual_traits *residual;
    /* Gemma-2's (vp_forward_options): the embedding's factor (1: none), the
       attention scores' factor (1/sqrt(hd) by default), their soft cap and
       the logits' (0: none) */
    float embed_scale, attn_scale, attn_softcap, logit_softcap;
    float logit_scale; /* Cohere's: the head's logits' factor (1: none) */
    const kern_table *kernels;
    float *arena; /* every weight, one allocation */
    size_t arena_used, arena_size;
} fw_model;

/* Which of the optional parts a model of cfg and o has: the head and the
 * final norm, and whether it keeps what its backward pass needs. With
 * weights, the file decides: head.weight and final_norm.weight present or
 * not; otherwise a head when the loss needs one (cfg->grad, loss copy or
 * next) and the final norm vp_config_has_final_norm says. */
void fw_model_parts(const vp_config *cfg, const vp_forward_options *o, int *has_head,
                    int *has_final_norm);

/* The length of a QK-norm's weight: q's (keys 0) or k's (keys 1), hd per
 * head, H hd or H_kv hd over the full width (and for a LayerNorm per head,
 * a weight per head). */
size_t fw_q_norm_width(const fw_model *m, int keys);

/* Floats of weights a model of that shape (fw_model_shape's) holds. */
size_t fw_model_shape_floats(const fw_model *shape, const kern_table *kernels);

/* Floats of weights the model holds (packed sizes included). */
size_t fw_model_floats(const vp_config *cfg, const vp_forward_options *o,
                       const kern_table *kernels);

/* Allocates a model of cfg's and o's shapes, weights zero and norms 1/0.
 * NULL when memory runs out. */
fw_model *fw_model_alloc(const vp_config *cfg, const vp_forward_options *o,
                         const kern_table *kernels);
void fw_model_free(fw_model *model);

/* fw_model_alloc's model with keep_raw set: each linear layer keeps W as
 * given beside its packed copies, for a trainer to update in place and then
 * repack (fw_linear_pack). NULL when memory runs out. */
fw_model *fw_model_alloc_trainable(const vp_config *cfg, const vp_forward_options *o,
                                   const kern_table *kernels);

/* One tensor of the model, named as a weights file names it: rows x cols
 * floats at data, row-major (cols 0: a vector of rows), and for a linear
 * layer's W (data its raw copy, NULL without keep_raw) the layer. */
#define FW_TENSOR_NAME_MAX 128
typedef struct {
    const char *name;
    size_t rows, cols;
    float *data;
    fw_linear *linear;
} fw_tensor;
typedef vp_status (*fw_tensor_fn)(void *ctx, const fw_tensor *t);

/* Calls fn for every tensor of the model in the weights' order
 * (include/varprof/forward.h: embed.weight, project_in, pos_embed.weight,
 * each layer's norms, attention and MLP, final_norm, project_out, head), a
 * linear's weight before its bias; stops at and returns the first status
 * that is not VP_OK. */
vp_status fw_model_tensors(fw_model *m, fw_tensor_fn fn, void *ctx);

/* Packs a head tied to the embedding again, after a trainer changed
 * embed.weight: the one linear layer no tensor of fw_model_tensors holds
 * (the others a trainer repacks with fw_linear_pack as it updates them). */
void fw_model_repack_tied(fw_model *m);

/* Packs W [out][in] into a linear layer (and W^T, when the model runs a
 * backward); copies bias [out] (NULL: zero). */
void fw_linear_set(const fw_model *m, fw_linear *linear, const float *w, const float *bias);

/* Packs the layer's raw W again (and W^T for a backward); the bias stays. */
void fw_linear_pack(const fw_model *m, fw_linear *linear);

/* Draws the weights as o->init says (see vp_init), from o->seed. */
vp_status fw_model_init(fw_model *m, const vp_config *cfg, const vp_forward_options *o,
                        vp_error *err);

/* Loads every weight from a safetensors file by PyTorch's names (see
 * include/varprof/forward.h), each checked against the model's shapes.
 * VP_EFORMAT naming a tensor missing, unexpected or of the wrong shape. A
 * streamed model (m->streamed) loads all but the layers', whose names and
 * shapes are checked here and whose values fw_model_use_layer reads, the
 * file kept until the model is freed. */
vp_status fw_model_load(fw_model *m, const vp_safetensors *file, vp_error *err);

/* Makes layer l's weights the ones in memory: nothing unless the model is
 * streamed and another layer is there; else converted from the file and
 * packed, on the calling thread. VP_EFORMAT (a weight not finite, named)
 * or VP_ENOMEM, kept in m->stream with its message: the run stops there. */
vp_status fw_model_use_layer(const fw_model *m, size_t l);

/* Calls fn for every tensor of layer l, as fw_model_tensors would. */
vp_status fw_model_layer_tensors(fw_model *m, size_t l, fw_tensor_fn fn, void *ctx);

/* The bytes one run of `rows` token rows takes beyond the weights. */
size_t fw_run_bytes(const fw_model *m, size_t rows, size_t threads, size_t tokens);

/* What a forward-pass profile says of itself before its rows
 * (profile_set_header); published as vp_forward_header, which heads a run
 * not yet made. */
void fw_set_header(vp_profile *profile, const vp_config *cfg, const vp_forward_options *o);

/* The profile's sampling method of a model that draws its weights as init
 * says (forward_options.c; vp_init_name names it). */
vp_sampling_method fw_init_method(vp_init init);

/* The rotated width of o's heads (positions.c): hd rope_fraction rounded
 * down, as Hugging Face's int(head_dim * partial_rotary_factor), hd for a
 * fraction of 0 or 1; 0 without rotary positions. */
size_t fw_rope_dim(const vp_forward_options *o);

/* Layer l's attention window (positions.c): m->window where the layer
 * slides, else 0 (every earlier key); and whether it slides. fw_window_shape
 * sets the model's window, layer kinds and RoPE bases from o. */
size_t fw_layer_window(const fw_model *m, size_t l);
/* How many of cfg's layers attend through o's window: those o's list or
   rule says slide, every layer without either; 0 without a window. */
size_t fw_sliding_layers(const vp_config *cfg, const vp_forward_options *o);
int fw_layer_slides(const fw_model *m, size_t l);
void fw_window_shape(fw_model *m, const vp_forward_options *o);

/* The residual form of cfg and o (residual_form.c): o->residual, or the
 * placement's own (the parallel placement's shared norm) where o's is
 * sequential; and its check for vp_forward_check: a form whose
 * sub-blocks per layer are not the placement's is refused (VP_EINVAL,
 * naming both). */
vp_residual fw_residual_of(const vp_config *cfg, const vp_forward_options *o);
vp_status fw_residual_check(const vp_config *cfg, const vp_forward_options *o, vp_error *err);

/* Every buffer and the thread pool of a run (forward/workspace.h). */
typedef struct fw_workspace fw_workspace;

/* Runs the network on token_ids [o->batch][o->tokens] on o->threads and
 * fills profile's rows (its sub_blocks set, the rest by the caller),
 * reporting each sub-block done to o->progress (NULL for none); with
 * cfg->grad and a model made for it, the backward pass of o->loss too.
 * Its buffers and threads are ws's, made by fw_workspace_create for m and
 * o's batch, tokens and threads (VP_EINVAL otherwise), and nothing is
 * allocated; ws NULL: a workspace made and freed for this run. The result
 * does not depend on ws's earlier runs. */
vp_status fw_run_network(const fw_model *m, const vp_config *cfg, const vp_forward_options *o,
                         const uint32_t *token_ids, vp_profile *profile, fw_workspace *ws,
                         vp_error *err);

/* The shape fields of a model of cfg and o, as fw_model_alloc sets them
 * (no weights); recompute resolved as o->activations says, AUTO by the
 * memory a run would need keeping everything (fw_memory_needed). */
void fw_model_shape(fw_model *m, const vp_config *cfg, const vp_forward_options *o);
/* The same with recompute given (as fw_recomputes would resolve it). */
void fw_model_shape_as(fw_model *m, const vp_config *cfg, const vp_forward_options *o,
                       int recompute);
/* Whether a model of cfg and o recomputes its activations: with cfg->grad,
   as o->activations says; AUTO when keeping them all would take a run past
   half of the machine's memory and recomputing would not. */
int fw_recomputes(const vp_config *cfg, const vp_forward_options *o);

/* Bytes of weights and activations the network would take, and of those
 * the weights' (a drawn model's: its norms and biases alone). VP_EOVERFLOW
 * when that does not fit in size_t. */
vp_status fw_memory_needed(const vp_config *cfg, const vp_forward_options *options, size_t *bytes,
                           size_t *weight_bytes, vp_error *err);

/* The gain-init scales of one MLP branch of kind mlp: fc1 ~ N(0, fc1_var)
 * (a gated MLP's gate and up both), fc2 ~ N(0, fc2_var), so that a Gaussian
 * input of mean square input_ms comes out with RMS gain times its own:
 * fc2_var = gain^2 input_ms / (hidden M), z ~ N(0, s^2), s^2 = fc1_var d
 * input_ms, M = E[act(z)^2] for the two-matrix kinds and E[(act(a) b)^2] =
 * E[act(a)^2] s^2 for the gated ones (a, b independent, each as z). E[act^2]
 * integrated with GSL, as s^2 E[(act(z)/z)^2 z^2/s^2]; ReLU's is s^2 / 2
 * exactly. VP_EINVAL when the integration fails. */
vp_status fw_mlp_scales(vp_mlp mlp, size_t d, size_t hidden, double input_ms, double gain,
                        double fc1_scale, double *fc1_var, double *fc2_var, vp_error *err);

/* The MLP's activation of n floats: out = act(a) for the two-matrix kinds,
 * act(a) * b for the gated ones (b NULL otherwise); out may be a. */
void fw_activate(const kern_table *kern, vp_mlp mlp, float *out, const float *a, const float *b,
                 size_t n);

/* The activation's backward, from dy = dL/d(its output): da of act(a) for
 * the two-matrix kinds (cdf the erf GELU's kept Phi(a), vp_mlp_traits.keeps_cdf;
 * db unused), da and db of act(a) * b for the gated ones. da may be dy. */
void fw_activate_backward(const kern_table *kern, vp_mlp mlp, float *da, float *db, const float *dy,
                          const float *a, const float *b, const float *cdf, size_t n);

#endif
