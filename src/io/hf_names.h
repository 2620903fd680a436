/* The families' tables: a row per tensor varprof wants from a Hugging Face
 * checkpoint, where it comes from and how it is reshaped, and the plan
 * that finds each in the shards. */
#ifndef VARPROF_IO_HF_NAMES_H
#define VARPROF_IO_HF_NAMES_H

#include <stddef.h>

#include "hf_shards.h"
#include "varprof/hf_checkpoint.h"

/* A dimension of a tensor, in config.json's terms. */
/* DIM_Q: the query heads' width H hd; DIM_KV the key and value heads' H_kv hd;
   DIM_HD one head's hd (a per-head QK-norm's weights) */
/* DIM_E: the token embedding's width (opt's word_embed_proj_dim) */
/* DIM_H, DIM_H_KV: the query heads' and the key heads' counts (Cohere's
   QK-norm weights [H, hd] and [H_kv, hd]) */
typedef enum {
    DIM_NONE,
    DIM_D,
    DIM_3D,
    DIM_V,
    DIM_F,
    DIM_CTX,
    DIM_Q,
    DIM_KV,
    DIM_HD,
    DIM_E,
    DIM_H,
    DIM_H_KV
} dim;

typedef enum {
    HOW_COPY,       /* as stored, [out, in] */
    HOW_CONV1D,     /* Conv1D's [in, parts x out]: part `part` of the columns, transposed */
    HOW_SLICE,      /* a fused tensor [parts x out] or [parts x out, in] of equal parts
                      (a fused bias; Phi-3's gate_up_proj): part `part` */
    HOW_QKV,        /* a fused [H hd + 2 H_kv hd, in]: the rows of q (part 0), then of
                      k (1), then of v (2), as Phi-3's qkv_proj */
    HOW_PLUS_ONE,   /* Gemma's RMSNorm weight w, stored as an offset: 1 + w, one float sum
                     as Hugging Face's (1.0 + self.weight.float()) */
    HOW_QKV_HEADS,  /* a fused [H x parts x hd (, in)] laid out head by head, GPT-NeoX's
                      query_key_value: part `part` of every head, [H hd (, in)] */
    HOW_QKV_GROUPS, /* a fused [H_kv x (H/H_kv + 2) x hd (, in)], Falcon's query_key_value in
                      each of its forms: each kv head's group of H/H_kv query heads, then
                      its k, then its v; part 0 the query heads [H hd (, in)], 1 the keys
                      and 2 the values [H_kv hd (, in)] */
} how;

typedef enum {
    WHEN_ALWAYS,
    WHEN_UNTIED,
    WHEN_QKV_BIAS,
    WHEN_ALL_BIAS,
    WHEN_PROJECTED,  /* the embedding's width is not the stream's (opt) */
    WHEN_FINAL_NORM, /* the placement ends the stack with a norm */
    WHEN_SEQUENTIAL, /* attention, then the MLP: the MLP's own norm (Falcon's
                        parallel_attn false) */
    WHEN_ONE_NORM,   /* not parallel-two-norms: one norm on the layer's input
                        (Falcon's input_layernorm) */
    WHEN_TWO_NORMS,  /* parallel-two-norms: each branch its own norm (Falcon's
                        new decoder, ln_attn and ln_mlp) */
    WHEN_QK_NORM,    /* with a QK-norm (Cohere's use_qk_norm) */
} when;

typedef struct {
    /* the source, "%zu" the layer; after the family's prefix unless it
       starts with '!' */
    const char *hf;
    const char *vp; /* varprof's name, "%zu" the layer */
    dim rows, cols; /* varprof's shape; cols DIM_NONE for rank 1 */
    how how;
    int part, parts;
    when when;
} name_row;

typedef struct {
    const name_row *rows;
    size_t n_rows;
    const char *const *ignored;
} family;

/* One planned tensor of the output. */
typedef struct {
    const name_row *row;
    size_t layer;
    const vp_tensor_info *source; /* the stored tensor it is made from */
    size_t shard;
} planned;

typedef struct {
    hf_shards c;
    const vp_hf_architecture *a;
    family f;
    const char *prefix;
    planned *plan;
    size_t n_plan;
    vp_error *err;
} builder;

/* The table of a's family (model_type). */
family hf_family_of(const vp_hf_architecture *a);

/* Qwen3's, StarCoder2's or Phi-3's table into *f, with Llama's buffers
   `ignored` (hf_names_llama_kin.c): 1, or 0 for another model_type. */
int hf_family_llama_kin(const vp_hf_architecture *a, const char *const *ignored, family *f);

/* GPT-NeoX's, Phi's or Cohere's table into *f (hf_names_parallel.c): 1, or 0 for another
   model_type. */
int hf_family_parallel(const vp_hf_architecture *a, family *f);

/* GPT-J's or Falcon's table into *f (hf_names_gptj_falcon.c): 1, or 0 for
   another model_type. */
int hf_family_gptj_falcon(const vp_hf_architecture *a, family *f);

/* OPT's table (hf_names_opt.c). */
family hf_family_opt(void);

/* BLOOM's table (hf_names_bloom.c). */
family hf_family_bloom(void);

/* A dimension's size under a's config.json; 0 for DIM_NONE. */
size_t hf_dim_size(dim d, const vp_hf_architecture *a);

/* Where row r's part starts in its stored tensor, in elements: 0 but for a
   HOW_SLICE's or a HOW_QKV's later parts. */
size_t hf_part_offset(const name_row *r, const vp_hf_architecture *a);

/* Plans every row of b's family for every layer, each found in b's shards
 * and of its shape, every stored tensor used or a known buffer. Fails with
 * VP_ENOMEM, or VP_EFORMAT naming the tensor missing, of another shape or
 * unknown (in *b->err); b->plan is then the caller's to free. */
vp_status hf_plan(builder *b);

#endif
