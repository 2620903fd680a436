/* The models table (data/models.csv): well-known models, where they put
 * their norms, and the source of each fact. */
#ifndef VARPROF_MODELS_H
#define VARPROF_MODELS_H

#include <stddef.h>

#include "varprof/forward.h"
#include "varprof/placement.h"
#include "varprof/profile.h"
#include "varprof/status.h"

/* A model's own DeepNet alpha or beta, where it used its own rather than
 * DeepNet's defaults: a number, or (c N)^(p) in its layers N. */
typedef struct {
    char text[32];        /* as the table writes it; "" for the placement's default */
    double factor, power; /* the value (factor N)^power, or factor when !per_layer */
    int per_layer;
} vp_model_scale;

/* How a model tells positions apart. Only learned positions have parameters
 * of their own in the count (T5's relative buckets, 32 x heads in its first
 * layer, are left out: under 1e-5 of the model). */
typedef enum {
    VP_MODEL_POSITIONS_NONE,
    VP_MODEL_POSITIONS_LEARNED,      /* a table of max_positions x width (GPT-2's wpe) */
    VP_MODEL_POSITIONS_SINUSOIDAL,   /* fixed sines added to the embedding (the 2017 Transformer) */
    VP_MODEL_POSITIONS_ROPE,         /* rotary, with its base theta */
    VP_MODEL_POSITIONS_RELATIVE,     /* T5's bucketed bias on the attention logits */
    VP_MODEL_POSITIONS_ALIBI,        /* BLOOM's fixed linear bias on the attention logits */
    VP_MODEL_POSITIONS_PARTIAL_ROPE, /* rotary on part of each head's width, with its base
                                        theta: GPT-J (64 of 256), GPT-NeoX and Pythia (a
                                        quarter) */
    VP_MODEL_POSITIONS_COUNT
} vp_model_positions;

/* Which of a block's linear maps carry a bias (norm biases follow the norm:
 * LayerNorm has one, RMSNorm not). */
typedef enum {
    VP_MODEL_BIASES_NO,  /* none (Llama, T5) */
    VP_MODEL_BIASES_YES, /* every linear map in attention and MLP (GPT-2, BERT) */
    VP_MODEL_BIASES_QKV, /* the q, k and v projections only (Qwen2) */
    VP_MODEL_BIASES_MLP, /* the MLP's two matrices only (GPT-J) */
    VP_MODEL_BIASES_COUNT
} vp_model_biases;

/* What a row's shape covers of the model, and so what its parameter count
 * means. */
typedef enum {
    VP_MODEL_ARCHITECTURE_DENSE,           /* one stack: the count is the model's */
    VP_MODEL_ARCHITECTURE_ENCODER_DECODER, /* the row is the encoder, the stack its layers count:
                                        the count is the encoder's, not the model's */
    VP_MODEL_ARCHITECTURE_MOE,             /* a mixture of experts, the row a dense model of its
                                        width and dense layers' MLP: the count is not the
                                        model's */
    VP_MODEL_ARCHITECTURE_COUNT
} vp_model_architecture;

/* A model's shape, from its config.json or paper. */
typedef struct {
    int known;              /* 0: the table gives no shape for the model; the rest is 0 */
    size_t width;           /* d, the residual stream's width */
    size_t heads, kv_heads; /* H and H_kv; H_kv divides H (H_kv < H: grouped-query) */
    size_t head_dim;        /* hd: as given, else d / H */
    int head_dim_given;     /* 1 when the table sets hd apart from d / H */
    size_t ffn_width;       /* the MLP's hidden width m */
    size_t vocab;
    vp_mlp activation; /* the MLP's kind, as the forward pass builds it */
    vp_model_positions positions;
    size_t max_positions; /* rows of a learned position table; 0 for other positions */
    double rope_theta;    /* RoPE's base; NaN unless positions is rope */
    double norm_eps;      /* the norms' epsilon; NaN where neither config nor paper gives it */
    vp_model_biases biases;
    int tied_embeddings; /* 1: the head is the embedding matrix transposed */
    int final_norm;      /* 1: a norm after the last layer, before the head */
    vp_model_architecture architecture;
    char source[1024]; /* where the shape comes from */
    /* The forms, from the optional trailing columns (today's defaults where
     * a cell is empty or the table has no such column): */
    vp_residual residual;             /* how the branches meet the stream: sequential, or for
                                         the parallel placement parallel-shared-norm (empty)
                                         or parallel-two-norms */
    double rotary_fraction;           /* the share of a head's hd that RoPE turns: 1, or for
                                         partial-rope a number in (0, 1), hd times it even */
    vp_rotary_pairing rotary_pairing; /* rope's pairs: HALF (rotate-half, empty) or
                                         INTERLEAVED (GPT-J's, Cohere's); NONE without rope */
    vp_embedding_norm embedding_norm; /* a norm on the embedding (BLOOM's): none */
    double logit_scale;               /* the head's logits times it (Cohere's): 1 */
    int norm_unbiased;                /* 1: a LayerNorm has a weight alone (CohereLayerNorm;
                                         the column norm_bias no); 0: its bias too */
    /* Attention's departures, from the last optional columns (none where a
     * cell is empty or the table has no such column): */
    size_t sliding_window;   /* the sliding layers' query t sees keys t - W + 1 .. t (config.json's
                                sliding_window); 0: every earlier key */
    size_t window_pattern;   /* with a window, 0: every layer slides; N >= 2: layer l (from 0)
                                attends fully where (l + 1) % N is 0 (sliding_window_pattern:
                                Gemma 2's 2, Gemma 3's 6) */
    double rope_local_theta; /* the sliding layers' own RoPE base (Gemma 3's
                                rope_local_base_freq); 0: rope_theta's */
    double rope_linear;      /* rope_theta's frequencies divided by it (linear rope_scaling; the
                                full layers' alone where rope_local_theta is set); 1: none */
    double attn_scalar;      /* the scores times attn_scalar^(-1/2) (query_pre_attn_scalar);
                                0: hd's */
    double attn_softcap;     /* each score z becomes c tanh(z / c) (attn_logit_softcapping);
                                0: none */
    double logit_softcap;    /* the logits likewise (final_logit_softcapping); 0: none */
} vp_model_shape;

typedef struct {
    char name[64]; /* a slug: lowercase letters, digits, '.' and '-' */
    int year;
    size_t layers; /* 1 .. VP_MAX_LAYERS */
    vp_placement placement;
    vp_norm norm;               /* VP_NORM_LAYERNORM or VP_NORM_RMSNORM */
    int qk_norm;                /* 0 or 1 */
    char source[1024];          /* a paper or a configuration file */
    vp_model_scale alpha, beta; /* DeepNorm's, when the model used its own */
    char scale_source[1024];    /* where alpha and beta come from; "" without them */
    vp_model_shape shape;       /* shape.known is 0 when the table has no shape columns */
} vp_model;

typedef struct {
    vp_model *models; /* in file order */
    size_t count;
} vp_model_table;

/* Reads the table: a header `name,year,layers,placement,norm,qk_norm,source`,
 * optionally followed by `,alpha,beta,alpha_beta_source` and then by the
 * shape's `,width,heads,kv_heads,head_dim,ffn_width,vocab,activation,
 * positions,max_positions,rope_theta,norm_eps,biases,tied_embeddings,
 * final_norm,architecture,shape_source` and then by the forms'
 * `,residual,rotary_fraction,rotary_pairing,embedding_norm,logit_scale,
 * norm_bias` and then by attention's `,sliding_window,window_pattern,
 * rope_local_theta,rope_linear_factor,attn_scalar,attn_softcap,
 * logit_softcap` (7, 10, 26, 32 or 39 columns), then one model per row
 * with the header's cells. Attention's cells are empty (none) or:
 * sliding_window a whole number of keys from 1 to 2^24; window_pattern,
 * beside a window alone, a whole number from 2 to VP_MAX_LAYERS;
 * rope_local_theta, beside a window pattern and rope alone, a number > 1;
 * rope_linear_factor, for rope alone, a number from 1 to 1e6;
 * attn_scalar, attn_softcap and logit_softcap numbers > 0. The forms' cells are empty (the default in
 * vp_model_shape) or: residual sequential, parallel-shared-norm or
 * parallel-two-norms (a parallel form for the parallel placement alone,
 * sequential for the others); rotary_fraction, given for partial-rope
 * positions alone, a number in (0, 1) that makes hd times it an even whole
 * number; rotary_pairing half or interleaved, for rope and partial-rope;
 * embedding_norm none or layernorm; logit_scale a number > 0; norm_bias yes
 * or no, no for a layernorm model alone. A row without a shape has them all
 * empty. alpha and beta are empty (the placement's
 * defaults) or, for a deepnorm model only, a number > 0 or `(cN)^(p)` (c > 0,
 * N the layers, p a number or a fraction a/b), with a source when either is
 * given. A row's shape cells are all empty (shape unknown) or all given but
 * head_dim (empty: d / H, which H must then divide), max_positions (given for
 * learned positions only), rope_theta (given for rope only) and norm_eps
 * (empty where unpublished); kv_heads must divide heads. On success fills
 * *table (free with vp_model_table_free). Fails with VP_EIO (cannot read),
 * VP_EFORMAT naming the line and what is wrong in it (a wrong header or cell
 * count, a bad name, year, layer count, placement, norm, qk_norm, alpha,
 * beta, shape or form cell, with the column and its allowed values, an empty
 * source, a name given twice), VP_ENOMEM. */
vp_status vp_models_read(const char *path, vp_model_table *table, vp_error *err);

/* Frees the table's rows; NULL and an empty table are allowed. */
void vp_model_table_free(vp_model_table *table);

/* The value of a model's alpha or beta for a stack of `layers` layers:
 * (factor layers)^power, or factor. NaN when the text is empty: the
 * placement's default applies. */
double vp_model_scale_value(const vp_model_scale *scale, size_t layers);

/* The parameters of the network the model's shape describes, counted from
 * the shape alone: the embedding (vocab x d) and a learned position table;
 * per layer, attention's q (d x H hd), k and v (d x H_kv hd each) and o
 * (H hd x d), the MLP's two matrices (three for swiglu and geglu), the
 * biases the shape names, and the norms: 2 per layer (sandwich 4, parallel 1,
 * parallel-two-norms 2, none 0), each a weight of d and, for LayerNorm with
 * norm_bias, a bias of d, plus 2 hd for QK-norm; an embedding LayerNorm
 * (2 d), the final norm, and the head (vocab x d) unless tied. Unless
 * the architecture is dense, this is not the model's published total: an
 * encoder-decoder's count is its encoder's, a mixture of experts' that of a
 * dense model of its shape. The count is a
 * whole number, exact below 2^53. Fails with VP_EINVAL (*parameters
 * untouched) when m or parameters is NULL or m->shape.known is 0. */
vp_status vp_model_parameters(const vp_model *m, double *parameters);

/* The table's words for the shape's choices (the MLP's are vp_mlp_name's):
 * "none", "learned", ...; "no", "yes", "qkv", "mlp"; "dense",
 * "encoder-decoder", "moe". "?" out of range. */
const char *vp_model_positions_name(vp_model_positions positions);
const char *vp_model_biases_name(vp_model_biases biases);
const char *vp_model_architecture_name(vp_model_architecture architecture);

/* The model named `name`, or NULL. */
const vp_model *vp_model_find(const vp_model_table *table, const char *name);

#endif
