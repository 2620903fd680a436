/* The architecture's axes: the MLP's kind, the projections' biases, the
 * positions and the loss, each an enum with one table row per value.
 *
 * Each axis is a table in the library sized by the enum's count, with a
 * static assertion on the count, so that a new value fails to compile until
 * every table has its row. Engines read the rows' facts instead of testing
 * for named values. forward.h and profile.h include
 * this header; it needs no engine.
 */
#ifndef VARPROF_ARCHITECTURE_H
#define VARPROF_ARCHITECTURE_H

#include <stddef.h>

#include "varprof/status.h"

/* Which projections carry a bias. The norms' biases are the norm's
 * (LayerNorm has one, RMSNorm none) and do not depend on this. */
typedef enum {
    VP_BIAS_ALL,  /* every projection and the head: GPT-2's layers */
    VP_BIAS_NONE, /* none: Llama's, Mistral's */
    VP_BIAS_QKV,  /* the attention's q, k and v alone: Qwen2's */
    VP_BIAS_MLP,  /* the MLP's projections and the head, none in attention: GPT-J's */
    VP_BIAS_COUNT
} vp_bias;

/* The MLP's kind (varprof-maths(7), THE MLP KINDS). The two-matrix kinds
 * are fc2(act(fc1 h)); the gated ones down(act(gate h) * up h), three
 * matrices, the product elementwise. */
typedef enum {
    VP_MLP_GELU,       /* x Phi(x), erf's: PyTorch's F.gelu default */
    VP_MLP_GELU_TANH,  /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): GPT-2's,
                         PyTorch's gelu(approximate='tanh') */
    VP_MLP_RELU,       /* max(x, 0) */
    VP_MLP_SWIGLU,     /* gated, silu(a) b, silu(a) = a / (1 + exp(-a)): Llama's */
    VP_MLP_GEGLU,      /* gated, gelu(a) b with erf's GELU */
    VP_MLP_GEGLU_TANH, /* gated, gelu_tanh(a) b: Gemma's (gelu_pytorch_tanh) */
    VP_MLP_COUNT
} vp_mlp;

/* The elementwise function of an MLP kind (its gate's, for a gated kind). */
typedef enum {
    VP_ACTIVATION_GELU_ERF,  /* x Phi(x) */
    VP_ACTIVATION_GELU_TANH, /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    VP_ACTIVATION_RELU,      /* max(x, 0) */
    VP_ACTIVATION_SILU,      /* x / (1 + exp(-x)) */
    VP_ACTIVATION_COUNT
} vp_activation;

/* The loss the backward pass (cfg->grad) differentiates, on the batch's B T
 * tokens; varprof-maths(7), THE NETWORK'S BACKWARD PASS. */
typedef enum {
    VP_LOSS_COPY,   /* the head's logits at position t against token t: mean
                       cross-entropy over B T (the seed's task) */
    VP_LOSS_NEXT,   /* logits at t against token t + 1: mean over B (T - 1) */
    VP_LOSS_RANDOM, /* sum over tokens of <r_t, y_t>, y_t the head's input (the
                       final norm's output where there is one), r_t iid N(0, 1):
                       vp_gauss_fill(seed, token b T + t, sub-block
                       VP_LOSS_RANDOM_STREAM); needs no head */
    VP_LOSS_COUNT
} vp_loss;

/* The positional information the network gets (varprof(1), --positions). */
typedef enum {
    VP_POSITIONS_NONE,             /* none: attention sees no order but the causal mask */
    VP_POSITIONS_LEARNED,          /* GPT-2's wpe: pos_embed.weight [n_ctx, d] row t added to
                             the token embedding at position t (0-based in each
                             sequence); vp_forward_infer sets it when a file has
                             pos_embed.weight, and leaves none or rope otherwise */
    VP_POSITIONS_ROPE,             /* rotary, Hugging Face Llama's and GPT-NeoX's rotate-half
                             pairing: for i < r/2, (q_i, q_{i+r/2}) of every head (and
                             k's) rotated by t rope_theta^(-2i/r) after the projections
                             and QK-norm, r the rotated width (hd, or hd times
                             vp_forward_options.rope_fraction), the rest of the head
                             left as it is */
    VP_POSITIONS_ROPE_INTERLEAVED, /* rotary with GPT-J's and Meta's original pairing:
                             (q_{2i}, q_{2i+1}) rotated by t rope_theta^(-2i/r), the
                             same angles as rope's on other pairs of coordinates */
    VP_POSITIONS_ALIBI,            /* ALiBi, BLOOM's: no table, no rotation; head h's
                             score of query t for key s gets slope_h s added
                             (vp_alibi_slopes), the same as slope_h (s - t) under
                             the softmax, BLOOM's alibi + scale q.k */
    VP_POSITIONS_COUNT
} vp_positions;

/* A norm on the token embedding before the first block (HACKING.md, "The
 * next axes"): BLOOM's word_embeddings_layernorm. */
typedef enum {
    VP_EMBEDDING_NORM_NONE,      /* the looked-up rows are the stream */
    VP_EMBEDDING_NORM_LAYERNORM, /* a LayerNorm of the looked-up rows (after any learned
                                    positions), weight and bias embed_norm.*, the blocks'
                                    eps, whatever the blocks' norm */
    VP_EMBEDDING_NORM_COUNT
} vp_embedding_norm;

/* An embedding norm's row. */
typedef struct {
    const char *name;   /* "none", "layernorm" */
    int norm;           /* a norm runs on the embedding's rows */
    const char *prefix; /* its tensors' names, PREFIX.weight and PREFIX.bias; NULL for none */
} vp_embedding_norm_traits;

/* Which coordinates of a head rotary positions rotate together
   (vp_positions_traits.rotary). */
typedef enum {
    VP_ROTARY_NONE,        /* no rotation */
    VP_ROTARY_HALF,        /* (i, i + r/2): rotate-half */
    VP_ROTARY_INTERLEAVED, /* (2i, 2i + 1): every two */
} vp_rotary_pairing;

/* How a layer's branches meet the stream: HACKING.md, "The next axes". A
 * parallel form runs attention and the MLP side by side on the same stream
 * and adds both outputs in one sub-block. */
typedef enum {
    VP_RESIDUAL_SEQUENTIAL,           /* attention, then the MLP: two sub-blocks */
    VP_RESIDUAL_PARALLEL_SHARED_NORM, /* x + attn(N x) + mlp(N x): GPT-J's, Phi-1/2's,
                                         Falcon-7B's one norm (attn_norm) */
    VP_RESIDUAL_PARALLEL_TWO_NORMS,   /* x + attn(N1 x) + mlp(N2 x): GPT-NeoX's
                                         use_parallel_residual, Falcon's new decoder
                                         (attn_norm, mlp_norm) */
    VP_RESIDUAL_COUNT
} vp_residual;

/* A residual form's row. */
typedef struct {
    const char *name;              /* "sequential", "parallel-shared-norm", ... */
    size_t branches_per_sub_block; /* 2 where attention and the MLP are summed */
    size_t sub_blocks_per_layer;   /* 1 for the parallel forms, 2 otherwise */
    size_t norms_per_sub_block;    /* input norms of a sub-block: 2 where each branch of a
                                      parallel block has its own */
} vp_residual_traits;

/* An MLP kind's row: every fact the engines read about it. */
typedef struct {
    const char *name;         /* "gelu", "swiglu" */
    int gated;                /* three matrices, down(act(gate h) * up h) */
    vp_activation activation; /* act, the gate's for a gated kind */
    int keeps_cdf;            /* the forward keeps Phi(a) for the backward
                                 (the erf GELU of a two-matrix MLP) */
} vp_mlp_traits;

/* An activation's row: its name and its second moment under a Gaussian
 * input, E[act(z)^2] for z ~ N(0, s^2), as the closed form and the forward
 * pass's gain init use it. */
typedef struct {
    const char *name; /* "gelu-erf", "gelu-tanh", "relu", "silu" */
    /* act(z) / z at z (its limit at 0): E[act(z)^2] / s^2 is the integral of
       t^2 ratio(s t)^2 phi(t) dt over the line */
    double (*ratio)(double z);
    /* > 0: that integral in closed form, the same for every s (ReLU's 1/2);
       0: it is integrated numerically */
    double exact_moment;
} vp_activation_traits;

/* A positions setting's row. */
typedef struct {
    const char *name; /* "none", "learned", "rope" */
    int table;        /* a learned table pos_embed.weight [n_ctx, d] added to
                            the token embedding */
    int rotary;       /* a vp_rotary_pairing: q and k rotated after the projections
                         and QK-norm (0: not); needs attention and an even rotated
                         width */
    int score_bias;   /* a per-head slope times the key's position added to the
                         attention's scores (ALiBi); needs attention */
} vp_positions_traits;

/* A bias setting's row. */
typedef struct {
    const char *name;  /* "yes", "no", "qkv", "mlp" */
    const char *gloss; /* "every projection", for the "one of" message */
    int qkv;           /* the attention's q, k and v projections carry one */
    int others;        /* the MLP's projections and the head do */
    int attn_out;      /* the attention's output projection does */
} vp_bias_traits;

/* A loss's row. */
typedef struct {
    const char *name; /* "copy", "next", "random" */
    int needs_head;   /* against tokens, through the head's logits; random's
                         reads the head's input and needs no head */
    int seeded;       /* draws r_t from the seed, so the seed is said */
} vp_loss_traits;

/* The rows for a value; pointers to static storage, never to be freed.
 * NULL for a value out of range. */
const vp_mlp_traits *vp_mlp_traits_of(vp_mlp mlp);
const vp_activation_traits *vp_activation_traits_of(vp_activation activation);
const vp_positions_traits *vp_positions_traits_of(vp_positions positions);
const vp_bias_traits *vp_bias_traits_of(vp_bias bias);
const vp_loss_traits *vp_loss_traits_of(vp_loss loss);

/* "gelu", "gelu-tanh", "relu", "swiglu", "geglu", "geglu-tanh"; NULL for a value out of
 * range. */
const char *vp_mlp_name(vp_mlp mlp);

/* The MLP kind of that name; VP_EINVAL naming the kinds there are. */
vp_status vp_mlp_parse(const char *name, vp_mlp *out, vp_error *err);

/* 1 for the gated kinds (three matrices), 0 for the others and out of range. */
int vp_mlp_gated(vp_mlp mlp);

/* "gelu-erf", "gelu-tanh", "relu", "silu"; NULL for a value out of range. */
const char *vp_activation_name(vp_activation activation);

/* "yes", "no", "qkv", "mlp"; NULL for a value out of range. */
const char *vp_bias_name(vp_bias bias);

/* The bias setting of that name; VP_EINVAL naming the settings there are. */
vp_status vp_bias_parse(const char *name, vp_bias *out, vp_error *err);

/* "copy", "next", "random"; NULL for a value out of range. */
const char *vp_loss_name(vp_loss loss);

/* The loss of that name; VP_EINVAL naming the losses there are. */
vp_status vp_loss_parse(const char *name, vp_loss *out, vp_error *err);

/* ALiBi's slopes of H heads, BLOOM's build_alibi_tensor: with P the largest
 * power of two <= H, slope_h = b^(h + 1) for h < P, b = 2^(-8 / P); the
 * remaining H - P heads take the odd powers 1, 3, 5, ... of 2^(-8 / 2P), as
 * many as there are (at most P). Each the float nearest b^(h + 1) for b
 * rounded to float, as transformers' float32 pow. Writes slopes[0 .. H - 1];
 * nothing for H = 0. */
void vp_alibi_slopes(float *slopes, size_t H);

/* "none", "learned", "rope", "rope-interleaved", "alibi"; NULL for a value out of range. */
const char *vp_positions_name(vp_positions positions);

/* The positions of that name; VP_EINVAL naming the ones there are. */
vp_status vp_positions_parse(const char *name, vp_positions *out, vp_error *err);

/* VP_OK for a value of the enum, else VP_EINVAL naming the values there
 * are ("MLP kind 9 is not one of: gelu, ..."): for options a caller set by
 * hand, which no parse has checked. */
vp_status vp_mlp_check(vp_mlp mlp, vp_error *err);
vp_status vp_bias_check(vp_bias bias, vp_error *err);
vp_status vp_loss_check(vp_loss loss, vp_error *err);
vp_status vp_positions_check(vp_positions positions, vp_error *err);

/* The embedding norm's row; NULL for a value out of range. */
const vp_embedding_norm_traits *vp_embedding_norm_traits_of(vp_embedding_norm norm);

/* "none", "layernorm"; NULL for a value out of range. */
const char *vp_embedding_norm_name(vp_embedding_norm norm);

/* The embedding norm of that name; VP_EINVAL naming the ones there are. */
vp_status vp_embedding_norm_parse(const char *name, vp_embedding_norm *out, vp_error *err);

/* VP_OK for a value of the enum, else VP_EINVAL naming the values there are. */
vp_status vp_embedding_norm_check(vp_embedding_norm norm, vp_error *err);

/* The residual form's row; NULL for a value out of range. */
const vp_residual_traits *vp_residual_traits_of(vp_residual residual);

/* "sequential", "parallel-shared-norm", "parallel-two-norms"; NULL for a
 * value out of range. */
const char *vp_residual_name(vp_residual residual);

/* The residual form of that name; VP_EINVAL naming the forms there are. */
vp_status vp_residual_parse(const char *name, vp_residual *out, vp_error *err);

/* VP_OK for a residual form in range; else VP_EINVAL naming the forms there are. */
vp_status vp_residual_check(vp_residual residual, vp_error *err);

#endif
