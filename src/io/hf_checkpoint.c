/* A Hugging Face checkpoint directory presented under varprof's names: the
 * shards read and cross-checked against the index, then one table per
 * family, a row per tensor varprof wants, saying where it comes from and
 * how it is reshaped. */
/* realpath is XSI: _XOPEN_SOURCE 700 declares it under glibc. */
#define _XOPEN_SOURCE 700 // NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
#include "varprof/hf_checkpoint.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hf_config.h"

#define MOST_SHARDS 4096u
/* Most tensors a checkpoint may hold, all shards together: the lookups by
   name are linear, so this bounds their time (Llama-2-70B has 723) */
#define MOST_TENSORS 32768u

/* ---- the shards ---- */

typedef struct {
    vp_safetensors *shards;
    char **shard_names; /* as the index spells them */
    size_t n_shards;
    unsigned char **used; /* per shard, per tensor */
} checkpoint;

static void checkpoint_free(checkpoint *c)
{
    for (size_t i = 0; i < c->n_shards; i++) {
        vp_safetensors_free(&c->shards[i]);
        free(c->shard_names[i]);
        free(c->used[i]);
    }
    free(c->shards);
    free(c->shard_names);
    free(c->used);
    memset(c, 0, sizeof *c);
}

int vp_hf_is_checkpoint_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dir/name, refused unless it stays inside dir once every symlink is
   resolved, and is not the index itself. *real gets the resolved path. */
static vp_status shard_path(const char *dir_real, const char *dir, const char *name, char *real,
                            vp_error *err)
{
    if (!name[0] || name[0] == '/')
        return vp_fail(err, VP_EFORMAT, "index: shard path '%.200s' is %s", name,
                       name[0] ? "absolute" : "empty");
    for (const char *p = name; p; p = strchr(p, '/')) {
        p += *p == '/';
        if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0'))
            return vp_fail(err, VP_EFORMAT, "index: shard path '%.200s' has a '..' component",
                           name);
    }
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return vp_fail(err, VP_EFORMAT, "index: shard path '%.200s' is too long", name);
    if (!realpath(path, real))
        return vp_fail(err, VP_EFORMAT, "index: shard '%.200s' is listed but %s%s", name,
                       errno == ENOENT ? "missing" : "cannot be resolved: ",
                       errno == ENOENT ? "" : strerror(errno));
    const size_t n = strlen(dir_real);
    if (strncmp(real, dir_real, n) != 0 || real[n] != '/')
        return vp_fail(err, VP_EFORMAT, "index: shard '%.200s' leads outside the directory (to %s)",
                       name, real);
    if (strcmp(real + n, "/model.safetensors.index.json") == 0)
        return vp_fail(err, VP_EFORMAT, "index: shard '%.200s' is the index itself", name);
    return VP_OK;
}

/* The index of the shard called name, adding it (read) when new. */
static vp_status add_shard(checkpoint *c, const char *dir_real, const char *dir, const char *name,
                           size_t *index, vp_error *err)
{
    for (size_t i = 0; i < c->n_shards; i++)
        if (strcmp(c->shard_names[i], name) == 0) {
            *index = i;
            return VP_OK;
        }
    char real[PATH_MAX];
    vp_status s = shard_path(dir_real, dir, name, real, err);
    if (s != VP_OK)
        return s;
    if (c->n_shards == MOST_SHARDS)
        return vp_fail(err, VP_EFORMAT, "index: more than %u shards", MOST_SHARDS);
    /* two spellings of one file would read its tensors twice */
    for (size_t i = 0; i < c->n_shards; i++) {
        char other[PATH_MAX], path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, c->shard_names[i]);
        if (realpath(path, other) && strcmp(other, real) == 0)
            return vp_fail(err, VP_EFORMAT, "index: shards '%.200s' and '%.200s' are one file",
                           c->shard_names[i], name);
    }
    const size_t n = c->n_shards + 1;
    vp_safetensors *shards = realloc(c->shards, n * sizeof *shards);
    if (shards)
        c->shards = shards;
    char **names = realloc(c->shard_names, n * sizeof *names);
    if (names)
        c->shard_names = names;
    unsigned char **used = realloc(c->used, n * sizeof *used);
    if (used)
        c->used = used;
    if (!shards || !names || !used)
        return vp_fail(err, VP_ENOMEM, "no memory for the shards");
    memset(&c->shards[c->n_shards], 0, sizeof *c->shards);
    c->used[c->n_shards] = NULL;
    if (!(c->shard_names[c->n_shards] = strdup(name)))
        return vp_fail(err, VP_ENOMEM, "no memory for the shards");
    c->n_shards++;
    vp_safetensors *f = &c->shards[n - 1];
    if ((s = vp_safetensors_map(real, f, err)) != VP_OK)
        return s;
    if (!(c->used[n - 1] = calloc(f->count ? f->count : 1, 1)))
        return vp_fail(err, VP_ENOMEM, "no memory for the shards");
    *index = n - 1;
    return VP_OK;
}

/* model.safetensors.index.json: every name mapped once to a shard inside
   dir that holds it, and every shard's tensors mapped to it. */
static vp_status read_index(checkpoint *c, const char *dir_real, const char *dir, const char *path,
                            vp_error *err)
{
    char *json = NULL;
    size_t length = 0;
    vp_status s = hf_read_text(path, &json, &length, err);
    if (s != VP_OK)
        return s;
    cJSON *root = cJSON_ParseWithLength(json, length);
    free(json);
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(root) || !cJSON_IsObject(map)) {
        cJSON_Delete(root);
        return vp_fail(err, VP_EFORMAT, "index: not a JSON object with a 'weight_map' object");
    }
    size_t mapped = 0, stored = 0;
    if (cJSON_GetArraySize(map) > (int)MOST_TENSORS)
        s = vp_fail(err, VP_EFORMAT, "index: 'weight_map' maps more than %u tensors", MOST_TENSORS);
    for (const cJSON *e = map->child; e && s == VP_OK; e = e->next) {
        size_t shard = 0;
        if (!cJSON_IsString(e))
            s = vp_fail(err, VP_EFORMAT, "index: tensor '%.200s' maps to no file name", e->string);
        if (s == VP_OK)
            s = add_shard(c, dir_real, dir, e->valuestring, &shard, err);
        if (s == VP_OK && !vp_safetensors_find(&c->shards[shard], e->string))
            s = vp_fail(err, VP_EFORMAT,
                        "index: tensor '%.200s' is mapped to '%.200s', which lacks it", e->string,
                        e->valuestring);
        mapped++;
    }
    /* a tensor in a shard the map does not send it to: in two shards, or unlisted */
    for (size_t i = 0; i < c->n_shards && s == VP_OK; i++) {
        stored += c->shards[i].count;
        if (stored > MOST_TENSORS)
            s = vp_fail(err, VP_EFORMAT, "the shards hold more than %u tensors", MOST_TENSORS);
        for (size_t t = 0; t < c->shards[i].count && s == VP_OK; t++) {
            const char *name = c->shards[i].tensors[t].name;
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(map, name);
            if (!e || strcmp(e->valuestring, c->shard_names[i]) != 0)
                s = vp_fail(
                    err, VP_EFORMAT,
                    "index: shard '%.200s' holds tensor '%.200s', which the index maps %s%.200s",
                    c->shard_names[i], name, e ? "to " : "nowhere", e ? e->valuestring : "");
        }
    }
    if (s == VP_OK && mapped == 0)
        s = vp_fail(err, VP_EFORMAT, "index: 'weight_map' is empty");
    /* every entry found in its shard, every tensor mapped to its own: only a
       name given twice leaves more entries than tensors */
    if (s == VP_OK && mapped != stored)
        s = vp_fail(err, VP_EFORMAT,
                    "index: 'weight_map' has %zu entries for %zu stored tensors: a tensor is "
                    "mapped twice",
                    mapped, stored);
    cJSON_Delete(root);
    return s;
}

static vp_status read_shards(checkpoint *c, const char *dir, vp_error *err)
{
    char dir_real[PATH_MAX], index[PATH_MAX], single[PATH_MAX];
    if (!realpath(dir, dir_real))
        return vp_fail(err, VP_EIO, "%s: %s", dir, strerror(errno));
    if ((size_t)snprintf(index, sizeof index, "%s/model.safetensors.index.json", dir) >=
            sizeof index ||
        (size_t)snprintf(single, sizeof single, "%s/model.safetensors", dir) >= sizeof single)
        return vp_fail(err, VP_EFORMAT, "%s: the path is too long", dir);
    vp_error why;
    vp_status s;
    if (access(index, F_OK) == 0)
        s = read_index(c, dir_real, dir, index, &why);
    else if (access(single, F_OK) == 0) {
        size_t shard;
        s = add_shard(c, dir_real, dir, "model.safetensors", &shard, &why);
        if (s == VP_OK && c->shards[0].count > MOST_TENSORS)
            s = vp_fail(&why, VP_EFORMAT, "model.safetensors holds more than %u tensors",
                        MOST_TENSORS);
    } else
        return vp_fail(err, VP_EFORMAT,
                       "%s: neither model.safetensors nor model.safetensors.index.json is there",
                       dir);
    if (s != VP_OK)
        vp_fail(err, s, "%s: %s", dir, why.message);
    return s;
}

/* The tensor called name in any shard (the index made them disjoint). */
static const vp_tensor_info *lookup(const checkpoint *c, const char *name, size_t *shard)
{
    for (size_t i = 0; i < c->n_shards; i++) {
        const vp_tensor_info *t = vp_safetensors_find(&c->shards[i], name);
        if (t) {
            *shard = i;
            return t;
        }
    }
    return NULL;
}

/* ---- the families' tables ---- */

/* A dimension of a tensor, in config.json's terms. */
/* DIM_Q: the query heads' width H hd; DIM_KV the key and value heads' H_kv hd */
typedef enum { DIM_NONE, DIM_D, DIM_3D, DIM_V, DIM_F, DIM_CTX, DIM_Q, DIM_KV } dim;

typedef enum {
    HOW_COPY,     /* as stored, [out, in] */
    HOW_CONV1D,   /* Conv1D's [in, parts x out]: part `part` of the columns, transposed */
    HOW_SLICE,    /* a fused bias [parts x out]: part `part` */
    HOW_PLUS_ONE, /* Gemma's RMSNorm weight w, stored as an offset: 1 + w, one float sum
                     as Hugging Face's (1.0 + self.weight.float()) */
} how;

typedef enum { WHEN_ALWAYS, WHEN_UNTIED, WHEN_QKV_BIAS } when;

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

typedef struct {
    const name_row *rows;
    size_t n_rows;
    const char *const *ignored;
} family;

static family family_of(const vp_hf_architecture *a)
{
    if (strcmp(a->model_type, "gpt2") == 0)
        return (family){gpt2_rows, sizeof gpt2_rows / sizeof *gpt2_rows, gpt2_ignored};
    if (strcmp(a->model_type, "gemma2") == 0)
        return (family){gemma2_rows, sizeof gemma2_rows / sizeof *gemma2_rows, llama_ignored};
    if (strcmp(a->model_type, "olmo2") == 0)
        return (family){olmo2_rows, sizeof olmo2_rows / sizeof *olmo2_rows, llama_ignored};
    return (family){llama_rows, sizeof llama_rows / sizeof *llama_rows, llama_ignored};
}

static int row_applies(const name_row *r, const vp_hf_architecture *a)
{
    switch (r->when) {
    case WHEN_ALWAYS: return 1;
    case WHEN_UNTIED: return !a->tied;
    case WHEN_QKV_BIAS: return a->bias == VP_BIAS_QKV;
    }
    return 0;
}

static size_t dim_size(dim d, const vp_hf_architecture *a)
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
    }
    return 0;
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
    const size_t rows = dim_size(r->rows, a), cols = dim_size(r->cols, a);
    *rank = cols ? 2 : 1;
    if (r->how == HOW_CONV1D) {
        shape[0] = cols;
        shape[1] = rows * (size_t)r->parts;
    } else {
        shape[0] = rows * (size_t)(r->how == HOW_SLICE ? r->parts : 1);
        shape[1] = cols;
    }
}

/* One planned tensor of the output. */
typedef struct {
    const name_row *row;
    size_t layer;
    const vp_tensor_info *source; /* the stored tensor it is made from */
    size_t shard;
} planned;

typedef struct {
    checkpoint c;
    const vp_hf_architecture *a;
    family f;
    const char *prefix;
    planned *plan;
    size_t n_plan;
    vp_error *err;
} builder;

static vp_status plan_row(builder *b, const name_row *r, size_t layer)
{
    planned *p = &b->plan[b->n_plan++];
    *p = (planned){r, layer, NULL, 0};
    char name[300];
    spell(name, sizeof name, b->prefix, r->hf, layer);
    p->source = lookup(&b->c, name, &p->shard);
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
static vp_status plan(builder *b)
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
    if (!(b->plan = calloc(most, sizeof *b->plan)))
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

/* ---- the tensors, made on demand ---- */

/* The shards and the plan, kept for as long as the file: each tensor is
   converted (and reshaped) from its shard when the loader asks for it, so
   that no float copy of the model is ever made whole. */
typedef struct {
    vp_tensor_source base;
    checkpoint c;
    vp_hf_architecture a;
    planned *plan;
    float scratch[]; /* a Conv1D's or a fused bias's whole stored tensor */
} lazy_source;

static void lazy_to_float(vp_tensor_source *source, size_t index, float *out)
{
    lazy_source *l = (lazy_source *)(void *)source;
    const planned *p = &l->plan[index];
    const name_row *r = p->row;
    const size_t rows = dim_size(r->rows, &l->a), cols = dim_size(r->cols, &l->a);
    const size_t elements = rows * (cols ? cols : 1);
    const vp_safetensors *shard = p->source ? &l->c.shards[p->shard] : NULL;
    switch (r->how) {
    case HOW_COPY:
    case HOW_PLUS_ONE:
        vp_safetensors_to_float(shard, p->source, out);
        for (size_t e = 0; r->how == HOW_PLUS_ONE && e < elements; e++)
            out[e] = 1.0f + out[e];
        return;
    case HOW_CONV1D: {
        /* stored [in = cols][parts x rows]; out [rows][cols] */
        vp_safetensors_to_float(shard, p->source, l->scratch);
        const size_t stride = rows * (size_t)r->parts, offset = rows * (size_t)r->part;
        for (size_t o = 0; o < rows; o++)
            for (size_t in = 0; in < cols; in++)
                out[o * cols + in] = l->scratch[in * stride + offset + o];
        return;
    }
    case HOW_SLICE:
        vp_safetensors_to_float(shard, p->source, l->scratch);
        memcpy(out, l->scratch + elements * (size_t)r->part, elements * sizeof *out);
        return;
    }
}

int vp_hf_stored_tensor(const vp_safetensors *weights, const char *name,
                        const vp_tensor_info **stored)
{
    if (!weights->source || weights->source->to_float != lazy_to_float)
        return 0;
    const vp_tensor_info *t = vp_safetensors_find(weights, name);
    if (!t)
        return 0;
    const lazy_source *l = (const lazy_source *)(const void *)weights->source;
    *stored = l->plan[t - weights->tensors].source;
    return *stored != NULL;
}

static void lazy_free(vp_tensor_source *source)
{
    lazy_source *l = (lazy_source *)(void *)source;
    checkpoint_free(&l->c);
    free(l->plan);
    free(l);
}

/* The planned tensors' names and shapes into *out, their data made on
   demand by a source that takes the shards and the plan from b. The source
   is the file's from the start, so vp_safetensors_free undoes a failure. */
static vp_status build(builder *b, vp_safetensors *out)
{
    size_t biggest = 1;
    for (size_t i = 0; i < b->n_plan; i++)
        if ((b->plan[i].row->how == HOW_CONV1D || b->plan[i].row->how == HOW_SLICE) &&
            b->plan[i].source->elements > biggest)
            biggest = b->plan[i].source->elements;
    lazy_source *l = calloc(1, sizeof *l + biggest * sizeof *l->scratch);
    if (!l)
        return vp_fail(b->err, VP_ENOMEM, "no memory for a checkpoint");
    l->base = (vp_tensor_source){lazy_to_float, lazy_free};
    l->a = *b->a;
    /* base is the first member: the source is the lazy_source itself */
    out->source = (vp_tensor_source *)(void *)l;
    /* at least one: an empty plan allocates nothing of zero size */
    out->tensors = calloc(b->n_plan ? b->n_plan : 1, sizeof *out->tensors);
    if (!out->tensors)
        return vp_fail(b->err, VP_ENOMEM, "no memory for %zu tensors", b->n_plan);
    for (size_t i = 0; i < b->n_plan; i++) {
        const name_row *r = b->plan[i].row;
        char name[300];
        snprintf(name, sizeof name, r->vp, b->plan[i].layer);
        char *owned = strdup(name); /* the file's from here: vp_safetensors_free frees it */
        if (!owned)
            return vp_fail(b->err, VP_ENOMEM, "no memory for a tensor's name");
        vp_tensor_info *t = &out->tensors[out->count++];
        t->name = owned;
        const size_t rows = dim_size(r->rows, b->a), cols = dim_size(r->cols, b->a);
        t->dtype = VP_DTYPE_F32;
        t->rank = cols ? 2 : 1;
        t->shape[0] = rows;
        t->shape[1] = cols;
        t->elements = rows * (cols ? cols : 1);
    }
    l->c = b->c; /* the source's now */
    memset(&b->c, 0, sizeof b->c);
    l->plan = b->plan;
    b->plan = NULL;
    return VP_OK;
}

vp_status vp_hf_checkpoint_read(const char *dir, vp_safetensors *weights, vp_hf_architecture *arch,
                                vp_error *err)
{
    memset(weights, 0, sizeof *weights);
    vp_status s = hf_config_read(dir, arch, err);
    if (s != VP_OK)
        return s;
    builder b = {{0}, arch, family_of(arch), "", NULL, 0, err};
    s = read_shards(&b.c, dir, err);
    if (s == VP_OK && strcmp(arch->model_type, "gpt2") == 0) {
        size_t shard;
        b.prefix = lookup(&b.c, "transformer.wte.weight", &shard) ? "transformer." : "";
    } else if (s == VP_OK) {
        b.prefix = "model.";
    }
    vp_error why;
    b.err = &why;
    if (s == VP_OK && (s = plan(&b)) != VP_OK)
        vp_fail(err, s, "%s: %s", dir, why.message);
    if (s == VP_OK && (s = build(&b, weights)) != VP_OK)
        vp_fail(err, s, "%s: %s", dir, why.message);
    free(b.plan);
    checkpoint_free(&b.c);
    if (s != VP_OK)
        vp_safetensors_free(weights);
    return s;
}
