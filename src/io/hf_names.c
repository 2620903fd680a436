/* The families' tables of tensor names, and the plan that finds each tensor in the shards. */
#include "hf_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D DIM_D
#define NO DIM_NONE
static const name_row gpt2_rows[] = {
    {"wte.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"wpe.weight", "pos_embed.weight", DIM_CTX, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"h.%zu.ln_1.weight", "layers.%zu.attn_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"h.%zu.ln_1.bias", "layers.%zu.attn_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"h.%zu.attn.c_attn.weight", "layers.%zu.attn.q.weight", D, D, HOW_CONV1D, 0, 3, WHEN_ALWAYS},
    {"h.%zu.attn.c_attn.weight", "layers.%zu.attn.k.weight", D, D, HOW_CONV1D, 1, 3, WHEN_ALWAYS},
    {"h.%zu.attn.c_attn.weight", "layers.%zu.attn.v.weight", D, D, HOW_CONV1D, 2, 3, WHEN_ALWAYS},
    {"h.%zu.attn.c_attn.bias", "layers.%zu.attn.q.bias", D, NO, HOW_SLICE, 0, 3, WHEN_ALWAYS},
    {"h.%zu.attn.c_attn.bias", "layers.%zu.attn.k.bias", D, NO, HOW_SLICE, 1, 3, WHEN_ALWAYS},
    {"h.%zu.attn.c_attn.bias", "layers.%zu.attn.v.bias", D, NO, HOW_SLICE, 2, 3, WHEN_ALWAYS},
    {"h.%zu.attn.c_proj.weight", "layers.%zu.attn.o.weight", D, D, HOW_CONV1D, 0, 1, WHEN_ALWAYS},
    {"h.%zu.attn.c_proj.bias", "layers.%zu.attn.o.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"h.%zu.ln_2.weight", "layers.%zu.mlp_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"h.%zu.ln_2.bias", "layers.%zu.mlp_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"h.%zu.mlp.c_fc.weight", "layers.%zu.mlp.fc1.weight", DIM_F, D, HOW_CONV1D, 0, 1, WHEN_ALWAYS},
    {"h.%zu.mlp.c_fc.bias", "layers.%zu.mlp.fc1.bias", DIM_F, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"h.%zu.mlp.c_proj.weight", "layers.%zu.mlp.fc2.weight", D, DIM_F, HOW_CONV1D, 0, 1,
     WHEN_ALWAYS},
    {"h.%zu.mlp.c_proj.bias", "layers.%zu.mlp.fc2.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"ln_f.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"ln_f.bias", "final_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};

static const name_row llama_rows[] = {
    {"embed_tokens.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.input_layernorm.weight", "layers.%zu.attn_norm.weight", D, NO, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_proj.weight", "layers.%zu.attn.q.weight", DIM_Q, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.k_proj.weight", "layers.%zu.attn.k.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.v_proj.weight", "layers.%zu.attn.v.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_proj.bias", "layers.%zu.attn.q.bias", DIM_Q, NO, HOW_COPY, 0, 1,
     WHEN_QKV_BIAS},
    {"layers.%zu.self_attn.k_proj.bias", "layers.%zu.attn.k.bias", DIM_KV, NO, HOW_COPY, 0, 1,
     WHEN_QKV_BIAS},
    {"layers.%zu.self_attn.v_proj.bias", "layers.%zu.attn.v.bias", DIM_KV, NO, HOW_COPY, 0, 1,
     WHEN_QKV_BIAS},
    {"layers.%zu.self_attn.o_proj.weight", "layers.%zu.attn.o.weight", D, DIM_Q, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.post_attention_layernorm.weight", "layers.%zu.mlp_norm.weight", D, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    {"layers.%zu.mlp.gate_proj.weight", "layers.%zu.mlp.gate.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.up_proj.weight", "layers.%zu.mlp.up.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.down_proj.weight", "layers.%zu.mlp.down.weight", D, DIM_F, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"norm.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};
/* Gemma-2: sandwich norms, each weight stored as an offset from 1 */
static const name_row gemma2_rows[] = {
    {"embed_tokens.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.input_layernorm.weight", "layers.%zu.attn_norm.weight", D, NO, HOW_PLUS_ONE, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_proj.weight", "layers.%zu.attn.q.weight", DIM_Q, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.k_proj.weight", "layers.%zu.attn.k.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.v_proj.weight", "layers.%zu.attn.v.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.o_proj.weight", "layers.%zu.attn.o.weight", D, DIM_Q, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.post_attention_layernorm.weight", "layers.%zu.attn_out_norm.weight", D, NO,
     HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.pre_feedforward_layernorm.weight", "layers.%zu.mlp_norm.weight", D, NO,
     HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.mlp.gate_proj.weight", "layers.%zu.mlp.gate.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.up_proj.weight", "layers.%zu.mlp.up.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.down_proj.weight", "layers.%zu.mlp.down.weight", D, DIM_F, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.post_feedforward_layernorm.weight", "layers.%zu.mlp_out_norm.weight", D, NO,
     HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"norm.weight", "final_norm.weight", D, NO, HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};

/* Gemma 3: Gemma 2's, with a (1 + w) RMSNorm over each head of q and of k */
static const name_row gemma3_rows[] = {
    {"embed_tokens.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.input_layernorm.weight", "layers.%zu.attn_norm.weight", D, NO, HOW_PLUS_ONE, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_proj.weight", "layers.%zu.attn.q.weight", DIM_Q, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.k_proj.weight", "layers.%zu.attn.k.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.v_proj.weight", "layers.%zu.attn.v.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.o_proj.weight", "layers.%zu.attn.o.weight", D, DIM_Q, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_norm.weight", "layers.%zu.attn.q_norm.weight", DIM_HD, NO,
     HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.self_attn.k_norm.weight", "layers.%zu.attn.k_norm.weight", DIM_HD, NO,
     HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.post_attention_layernorm.weight", "layers.%zu.attn_out_norm.weight", D, NO,
     HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.pre_feedforward_layernorm.weight", "layers.%zu.mlp_norm.weight", D, NO,
     HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.mlp.gate_proj.weight", "layers.%zu.mlp.gate.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.up_proj.weight", "layers.%zu.mlp.up.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.down_proj.weight", "layers.%zu.mlp.down.weight", D, DIM_F, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.post_feedforward_layernorm.weight", "layers.%zu.mlp_out_norm.weight", D, NO,
     HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"norm.weight", "final_norm.weight", D, NO, HOW_PLUS_ONE, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};

/* OLMo-2: no input norms, a norm on each branch's output, and RMSNorm over
   all of q's and k's width before the heads are split */
static const name_row olmo2_rows[] = {
    {"embed_tokens.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_proj.weight", "layers.%zu.attn.q.weight", DIM_Q, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.k_proj.weight", "layers.%zu.attn.k.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.v_proj.weight", "layers.%zu.attn.v.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.o_proj.weight", "layers.%zu.attn.o.weight", D, DIM_Q, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_norm.weight", "layers.%zu.attn.q_norm.weight", DIM_Q, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    {"layers.%zu.self_attn.k_norm.weight", "layers.%zu.attn.k_norm.weight", DIM_KV, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    {"layers.%zu.post_attention_layernorm.weight", "layers.%zu.attn_out_norm.weight", D, NO,
     HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.mlp.gate_proj.weight", "layers.%zu.mlp.gate.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.up_proj.weight", "layers.%zu.mlp.up.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.down_proj.weight", "layers.%zu.mlp.down.weight", D, DIM_F, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.post_feedforward_layernorm.weight", "layers.%zu.mlp_out_norm.weight", D, NO,
     HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"norm.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};
#undef D
#undef NO

/* Buffers a checkpoint may hold that are no weights: skipped. */
static const char *const gpt2_ignored[] = {"h.%zu.attn.bias", "h.%zu.attn.masked_bias",
                                           "!lm_head.weight", NULL};
static const char *const llama_ignored[] = {"layers.%zu.self_attn.rotary_emb.inv_freq",
                                            "!lm_head.weight", NULL};

family hf_family_of(const vp_hf_architecture *a)
{
    if (strcmp(a->model_type, "gpt2") == 0)
        return (family){gpt2_rows, sizeof gpt2_rows / sizeof *gpt2_rows, gpt2_ignored};
    if (strcmp(a->model_type, "gemma2") == 0)
        return (family){gemma2_rows, sizeof gemma2_rows / sizeof *gemma2_rows, llama_ignored};
    if (strcmp(a->model_type, "gemma3_text") == 0)
        return (family){gemma3_rows, sizeof gemma3_rows / sizeof *gemma3_rows, llama_ignored};
    if (strcmp(a->model_type, "olmo2") == 0)
        return (family){olmo2_rows, sizeof olmo2_rows / sizeof *olmo2_rows, llama_ignored};
    if (strcmp(a->model_type, "opt") == 0)
        return hf_family_opt();
    if (strcmp(a->model_type, "bloom") == 0)
        return hf_family_bloom();
    family kin;
    if (hf_family_llama_kin(a, llama_ignored, &kin) || hf_family_parallel(a, &kin) ||
        hf_family_gptj_falcon(a, &kin))
        return kin;
    return (family){llama_rows, sizeof llama_rows / sizeof *llama_rows, llama_ignored};
}

static int row_applies(const name_row *r, const vp_hf_architecture *a)
{
    switch (r->when) {
    case WHEN_ALWAYS: return 1;
    case WHEN_UNTIED: return !a->tied;
    case WHEN_QKV_BIAS: return a->bias == VP_BIAS_QKV;
    case WHEN_PROJECTED: return a->embed_dim != a->width;
    case WHEN_FINAL_NORM: return vp_placement_traits_of(a->placement)->final_norm;
    case WHEN_ALL_BIAS: return a->bias == VP_BIAS_ALL;
    case WHEN_SEQUENTIAL: return a->residual == VP_RESIDUAL_SEQUENTIAL;
    case WHEN_ONE_NORM: return a->residual != VP_RESIDUAL_PARALLEL_TWO_NORMS;
    case WHEN_TWO_NORMS: return a->residual == VP_RESIDUAL_PARALLEL_TWO_NORMS;
    case WHEN_QK_NORM: return a->qk_norm != VP_QK_NORM_NONE;
    }
    return 0;
}

size_t hf_dim_size(dim d, const vp_hf_architecture *a)
{
    switch (d) {
    case DIM_NONE: return 0;
    case DIM_D: return a->width;
    case DIM_3D: return 3 * a->width;
    case DIM_V: return a->vocab;
    case DIM_F: return a->ffn_width;
    case DIM_CTX: return a->n_ctx;
    case DIM_Q: return a->heads * a->head_dim;
    case DIM_KV: return a->kv_heads * a->head_dim;
    case DIM_E: return a->embed_dim;
    case DIM_HD: return a->head_dim;
    case DIM_H: return a->heads;
    case DIM_H_KV: return a->kv_heads;
    }
    return 0;
}

size_t hf_part_offset(const name_row *r, const vp_hf_architecture *a)
{
    const size_t cols = hf_dim_size(r->cols, a), width = cols ? cols : 1;
    if (r->how == HOW_SLICE)
        return hf_dim_size(r->rows, a) * width * (size_t)r->part;
    if (r->how != HOW_QKV || r->part == 0)
        return 0;
    /* k after q's H hd rows, v after k's H_kv hd more */
    const size_t q = hf_dim_size(DIM_Q, a), kv = hf_dim_size(DIM_KV, a);
    return (q + (r->part == 2 ? kv : 0)) * width;
}

/* A pattern with its layer filled in, and the prefix before it unless it
   starts with '!'. */
static void spell(char *out, size_t size, const char *prefix, const char *pattern, size_t layer)
{
    char name[256];
    const int skip_prefix = pattern[0] == '!';
    /* the patterns are this file's own: at most one %zu */
    snprintf(name, sizeof name, pattern + skip_prefix, layer);
    snprintf(out, size, "%s%s", skip_prefix ? "" : prefix, name);
}

static int per_layer(const char *pattern)
{
    return strstr(pattern, "%zu") != NULL;
}

/* The source's stored shape for a row: Conv1D's [in, parts x out]. */
static void source_shape(const name_row *r, const vp_hf_architecture *a, size_t *rank,
                         size_t shape[2])
{
    const size_t rows = hf_dim_size(r->rows, a), cols = hf_dim_size(r->cols, a);
    *rank = cols ? 2 : 1;
    if (r->how == HOW_CONV1D) {
        shape[0] = cols;
        shape[1] = rows * (size_t)r->parts;
    } else if (r->how == HOW_QKV || r->how == HOW_QKV_GROUPS) {
        shape[0] = hf_dim_size(DIM_Q, a) + 2 * hf_dim_size(DIM_KV, a);
        shape[1] = cols;
    } else {
        shape[0] = rows * (size_t)(r->how == HOW_SLICE || r->how == HOW_QKV_HEADS ? r->parts : 1);
        shape[1] = cols;
    }
}

static vp_status plan_row(builder *b, const name_row *r, size_t layer)
{
    planned *p = &b->plan[b->n_plan++];
    *p = (planned){r, layer, NULL, 0};
    char name[300];
    spell(name, sizeof name, b->prefix, r->hf, layer);
    p->source = hf_shards_lookup(&b->c, name, &p->shard);
    if (!p->source)
        return vp_fail(b->err, VP_EFORMAT,
                       "tensor '%s' is missing (a %s checkpoint of %zu layers%s)", name,
                       b->a->model_type, b->a->layers,
                       r->when == WHEN_UNTIED ? ", tie_word_embeddings false" : "");
    size_t rank, shape[2];
    source_shape(r, b->a, &rank, shape);
    const vp_tensor_info *t = p->source;
    if (t->rank != rank || t->shape[0] != shape[0] || (rank == 2 && t->shape[1] != shape[1])) {
        char got[96] = "";
        for (size_t i = 0; i < t->rank; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu", i ? ", " : "",
                     t->shape[i]);
        if (rank == 2)
            return vp_fail(b->err, VP_EFORMAT,
                           "tensor '%s' has shape [%s]; config.json makes it [%zu, %zu]", name, got,
                           shape[0], shape[1]);
        return vp_fail(b->err, VP_EFORMAT, "tensor '%s' has shape [%s]; config.json makes it [%zu]",
                       name, got, shape[0]);
    }
    b->c.used[p->shard][t - b->c.shards[p->shard].tensors] = 1;
    return VP_OK;
}

static int ignored(const builder *b, const char *name)
{
    char spelled[300];
    for (const char *const *pattern = b->f.ignored; *pattern; pattern++) {
        const size_t layers = per_layer(*pattern) ? b->a->layers : 1;
        for (size_t i = 0; i < layers; i++) {
            spell(spelled, sizeof spelled, b->prefix, *pattern, i);
            if (strcmp(spelled, name) == 0)
                return 1;
        }
    }
    return 0;
}

/* Every row for every layer found and of its shape; every stored tensor
   used or a known buffer. */
vp_status hf_plan(builder *b)
{
    size_t most = 0, stored = 0;
    for (size_t r = 0; r < b->f.n_rows; r++)
        most += per_layer(b->f.rows[r].vp) ? b->a->layers : 1;
    for (size_t i = 0; i < b->c.n_shards; i++)
        stored += b->c.shards[i].count;
    /* each planned tensor is a stored one's, or a part of a fused one */
    if (most > 3 * stored)
        return vp_fail(b->err, VP_EFORMAT,
                       "config.json's %zu layers need more tensors than the %zu stored",
                       b->a->layers, stored);
    if (!(b->plan = calloc(most ? most : 1, sizeof *b->plan)))
        return vp_fail(b->err, VP_ENOMEM, "no memory for %zu tensors", most);
    vp_status s = VP_OK;
    /* the global rows first, then layer by layer: the loader finds them by name */
    for (size_t r = 0; r < b->f.n_rows && s == VP_OK; r++)
        if (!per_layer(b->f.rows[r].vp) && row_applies(&b->f.rows[r], b->a))
            s = plan_row(b, &b->f.rows[r], 0);
    for (size_t i = 0; i < b->a->layers && s == VP_OK; i++)
        for (size_t r = 0; r < b->f.n_rows && s == VP_OK; r++)
            if (per_layer(b->f.rows[r].vp) && row_applies(&b->f.rows[r], b->a))
                s = plan_row(b, &b->f.rows[r], i);
    for (size_t i = 0; i < b->c.n_shards && s == VP_OK; i++)
        for (size_t t = 0; t < b->c.shards[i].count && s == VP_OK; t++) {
            const char *name = b->c.shards[i].tensors[t].name;
            if (!b->c.used[i][t] && !ignored(b, name))
                s = vp_fail(b->err, VP_EFORMAT,
                            "tensor '%.200s' is not one a %s checkpoint of %zu layers has", name,
                            b->a->model_type, b->a->layers);
        }
    return s;
}
