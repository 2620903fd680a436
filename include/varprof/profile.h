/* The result every engine fills and every writer reads: one row per sub-block.
 *
 * Writers and the plotter read only a vp_profile; they never know which engine
 * ran. A figure an engine does not produce is flagged absent in `fields` and
 * written as an empty CSV field or a JSON null, never as a number.
 */
#ifndef VARPROF_PROFILE_H
#define VARPROF_PROFILE_H

#include <stddef.h>

#include "varprof/architecture.h"
#include "varprof/config.h"

typedef enum { VP_ENGINE_CLOSED, VP_ENGINE_MC, VP_ENGINE_FORWARD, VP_ENGINE_COUNT } vp_engine;

/* The normalisation an engine ran; closed form is the same for both. */
typedef enum { VP_NORM_ANY, VP_NORM_LAYERNORM, VP_NORM_RMSNORM } vp_norm;

/* Which optional figures the rows carry. Each output column needs one of these
 * or none (varprof-maths(7), OUTPUT COLUMNS), and the CSV, JSON and
 * comparison leave a column empty without it. */
enum {
    VP_HAS_BOUNDS = 1u << 0,      /* *_lo, *_hi: 95 % bounds of sampled figures */
    VP_HAS_MEASURED = 1u << 1,    /* measured_gain, update_cosine */
    VP_HAS_STREAM_NORM = 1u << 2, /* stream_norm */
    VP_HAS_PERCENTILES = 1u << 3, /* stream_size_p05, _p50, _p95 */
    VP_HAS_GRAD = 1u << 4,        /* grad_var, grad_size, weight_grad (--grad) */
};

/* How a sampled profile's stream was drawn: the Monte Carlo's method, or the
 * forward pass's weights. */
typedef enum {
    VP_SAMPLING_NONE,       /* nothing sampled: the closed form */
    VP_SAMPLING_REDUCED,    /* Monte Carlo, the few components the recursion uses */
    VP_SAMPLING_FULL,       /* Monte Carlo, all d coordinates */
    VP_SAMPLING_GAIN_INIT,  /* forward pass, weights drawn to the configured gains */
    VP_SAMPLING_TORCH_INIT, /* forward pass, PyTorch's default init */
    VP_SAMPLING_LOADED,     /* forward pass, weights read from a file */
} vp_sampling_method;

/* How a sampled profile was sampled, for its outputs' headers. */
typedef struct {
    size_t width;  /* d */
    size_t trials; /* tokens */
    unsigned long long seed;
    const char *generator; /* e.g. "philox4x32-10" */
    vp_sampling_method method;
    double eps; /* the norms' eps */
    /* the forward pass's network; zero for the Monte Carlo */
    size_t heads, ffn_mult, vocab, batch, tokens;
    size_t kv_heads, head_dim; /* the forward pass's where not the defaults (H, d / H); else 0 */
    size_t ffn_width; /* the MLP's hidden width; ffn_mult 0 when the width does not divide it */
    vp_mlp mlp;       /* the forward pass's MLP kind; 0 for the Monte Carlo */
    vp_bias bias;     /* the forward pass's biases; 0 for the Monte Carlo */
    int qk_norm;      /* a vp_qk_norm (forward.h): 0 none, 1 per head, 2 over the full width,
                         3 a LayerNorm per head */
    /* Gemma-2's: the embedding's factor (0 or 1: none), the scores' factor
       where not 1/sqrt(hd) and the scores' and logits' soft caps (0: none) */
    double embed_scale, attn_scale, attn_softcap, logit_softcap;
    double logit_scale; /* Cohere's: the logits' factor (0 or 1: none) */
    /* the forward pass's residual form as it ran (sequential for the
       Monte Carlo), the share of each head its rotary positions rotate
       where below 1 (else 0), and its norm on the embedding */
    vp_residual residual;
    double rope_fraction;
    vp_embedding_norm embedding_norm;
    vp_loss loss;           /* the forward pass's loss, where has_loss */
    int has_loss;           /* 1: the forward pass's backward made a loss (VP_HAS_GRAD) */
    vp_positions positions; /* the forward pass's positions; none for the Monte Carlo */
    double rope_theta;      /* with positions rope; else 0 */
    double rope_factor, rope_low, rope_high, rope_context; /* Llama 3's rope scaling
                                                               (factor 0: none) */
    /* the sliding window (0: none) and how many of the layers it is on;
       with rope, the sliding layers' own base where they have one and the
       linear scaling's factor (each 0: none) */
    size_t sliding_window, sliding_layers;
    double rope_local_theta, rope_linear;
    /* the forward pass's weights: 1 drawn as the matmuls use them (none
       stored), 0 stored or loaded; and with VP_HAS_GRAD the bytes of
       activations the backward keeps (every sub-block's) */
    int weights_drawn;
    double kept_bytes;
    int recomputed;   /* with VP_HAS_GRAD: 1 when only each sub-block's input was
                       kept, the rest recomputed (VP_ACTIVATIONS_RECOMPUTE) */
    int tokens_drawn; /* the forward pass's token ids were drawn from the seed,
                         none given (vp_forward_options.token_ids NULL) */
} vp_sampling;

/* The figure that went out of range first, when a profile stops early. */
typedef enum {
    VP_OVERFLOW_NONE,
    VP_OVERFLOW_STREAM_VAR,      /* beyond double */
    VP_OVERFLOW_UPDATE_RATIO,    /* beyond double */
    VP_OVERFLOW_EMBEDDING_SHARE, /* beyond double (its estimate or standard error) */
    VP_OVERFLOW_FLOAT_STREAM,    /* the forward pass's float activations */
    VP_OVERFLOW_GRAD_VAR,        /* the gradient's mean square, beyond double */
    VP_OVERFLOW_FLOAT_GRAD,      /* the backward pass's float gradients */
} vp_overflow;

typedef struct {
    double gain;            /* g_k as configured; unused for k = 0 */
    double stream_var;      /* v_k */
    double update_ratio;    /* u_k; unused for k = 0 */
    double embedding_share; /* e_k; 0 where it underflows double, see log2_share */
    double log2_share;      /* log2(e_k), finite even where e_k underflows */
    double stream_var_lo, stream_var_hi;
    double update_ratio_lo, update_ratio_hi;
    double embedding_share_lo, embedding_share_hi;
    double stream_var_se, update_ratio_se, embedding_share_se; /* standard errors */
    double measured_gain, update_cosine, stream_norm;
    /* per-token stream size sqrt(|x_k|^2 / (d v_0)): 5th, 50th, 95th percentile */
    double stream_size_p05, stream_size_p50, stream_size_p95;
    /* the backward half (VP_HAS_GRAD), varprof-maths(7), GRADIENTS:
       grad_var G_k = mean of (dL/dx_k)^2; weight_grad = RMS(dL/do_k) RMS(h_k)
       of the branch's last linear map o = A h (branch rows); grad_size
       sqrt(G_k / G_K) is derived (vp_profile_grad_size) except its bounds */
    double grad_var, weight_grad;
    double grad_var_lo, grad_var_hi, grad_var_se;
    double grad_size_lo, grad_size_hi;
    double weight_grad_lo, weight_grad_hi, weight_grad_se;
} vp_row;

typedef struct {
    vp_engine engine;
    vp_norm norm;
    vp_config config;       /* a copy; config.gains is NULL, each row keeps its gain */
    int gains_from_file;    /* the gains were given per sub-block */
    size_t sub_blocks;      /* K */
    unsigned fields;        /* VP_HAS_* */
    vp_sampling sampling;   /* for sampled engines; zero otherwise */
    size_t overflow_at;     /* 0, or the first sub-block where a figure
                              overflowed: the rows stop before it, except
                              for VP_OVERFLOW_FLOAT_GRAD, where the forward
                              rows stay whole and the gradient figures stop
                              (NaN from overflow_at - 1 down) */
    vp_overflow overflowed; /* which figure overflowed, or VP_OVERFLOW_NONE */
    double loss;            /* the batch's loss (sampling.loss), forward with
                              VP_HAS_GRAD; 0 otherwise */
    size_t n_rows;          /* K + 1, or overflow_at when it overflowed */
    vp_row rows[];          /* rows[k] for sub-block k */
} vp_profile;

/* Allocates a zeroed profile with room for sub_blocks + 1 rows. Returns NULL
 * when memory runs out or the size would overflow. */
vp_profile *vp_profile_alloc(size_t sub_blocks);

/* Frees a profile; NULL is allowed. */
void vp_profile_free(vp_profile *profile);

/* sqrt(v_k / v_0): the stream's RMS in units of the embedding's, v_0 the
 * profile's config.embedding_var (a forward pass from loaded weights: the
 * measured one, so that row 0 is 1). */
double vp_profile_stream_size(const vp_profile *profile, size_t k);

/* sqrt(G_k / G_K), G_K the grad_var of the profile's last row: the
 * gradient's size relative to the top of the stack. NaN without VP_HAS_GRAD. */
double vp_profile_grad_size(const vp_profile *profile, size_t k);

/* The top of a stack: its last finite row, for summaries and comparisons. */
typedef struct {
    vp_engine engine;
    vp_placement placement;
    size_t sub_blocks;  /* K */
    size_t sub_block;   /* the row summarised: K, or the last before an overflow */
    double stream_size; /* sqrt(v / v_0) */
    double stream_var;
    double update_ratio; /* unused when sub_block is 0 */
    double embedding_share;
    double log2_share;
    size_t overflow_at; /* as in vp_profile */
    vp_overflow overflowed;
} vp_profile_top;

vp_profile_top vp_profile_get_top(const vp_profile *profile);

/* Whether row k is shown when a writer shows every Nth sub-block: sub-block 0,
 * every multiple of every, and always the last row. every >= 1. */
int vp_profile_shows_row(const vp_profile *profile, size_t k, size_t every);

/* "closed", "mc", "forward"; "layernorm", "rmsnorm", or "" for VP_NORM_ANY. */
const char *vp_engine_name(vp_engine engine);

/* An engine as prose and legends name it: "closed form", "Monte Carlo",
 * "forward pass"; "" for a value out of range. */
const char *vp_engine_title(vp_engine engine);
const char *vp_norm_name(vp_norm norm);

/* "reduced", "full", "gain", "torch", "loaded weights", or "" for
 * VP_SAMPLING_NONE: the words the outputs have always written. */
const char *vp_sampling_method_name(vp_sampling_method method);

/* What overflowed, as the outputs name it: "stream variance", "update
 * ratio", "embedding share", "stream (float activations out of range)",
 * "gradient variance", "gradient (float gradients out of range)", or "" for
 * VP_OVERFLOW_NONE. */
const char *vp_overflow_name(vp_overflow what);

#endif
