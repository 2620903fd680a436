/* A Hugging Face checkpoint directory presented under varprof's names:
 * config.json read (hf_config.c), the shards mapped (hf_shards.c), each
 * tensor planned from its family's table (hf_names.c) and made on demand
 * by a source that converts and reshapes it from its shard. */
#include "varprof/hf_checkpoint.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hf_config.h"
#include "hf_names.h"

int vp_hf_is_checkpoint_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- the tensors, made on demand ---- */

/* The shards and the plan, kept for as long as the file: each tensor is
   converted (and reshaped) from its shard when the loader asks for it, so
   that no float copy of the model is ever made whole. */
typedef struct {
    vp_tensor_source base;
    hf_shards c;
    vp_hf_architecture a;
    planned *plan;
    float scratch[]; /* a Conv1D's or a fused tensor's whole stored tensor */
} lazy_source;

static void lazy_to_float(vp_tensor_source *source, size_t index, float *out)
{
    lazy_source *l = (lazy_source *)(void *)source;
    const planned *p = &l->plan[index];
    const name_row *r = p->row;
    const size_t rows = hf_dim_size(r->rows, &l->a), cols = hf_dim_size(r->cols, &l->a);
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
    case HOW_QKV:
        vp_safetensors_to_float(shard, p->source, l->scratch);
        memcpy(out, l->scratch + hf_part_offset(r, &l->a), elements * sizeof *out);
        return;
    case HOW_QKV_HEADS: {
        /* head h's part at rows (h parts + part) hd of the stored tensor */
        vp_safetensors_to_float(shard, p->source, l->scratch);
        const size_t hd = l->a.head_dim, heads = rows / hd, row = cols ? cols : 1;
        for (size_t h = 0; h < heads; h++)
            memcpy(out + h * hd * row,
                   l->scratch + (h * (size_t)r->parts + (size_t)r->part) * hd * row,
                   hd * row * sizeof *out);
        return;
    }
    case HOW_QKV_GROUPS: {
        /* out's head o is stored block g (G + 2) + j: a query head's group
           g = o / G at j = o mod G, a kv head's g = o at j = G (k) or G + 1 (v) */
        vp_safetensors_to_float(shard, p->source, l->scratch);
        const size_t hd = l->a.head_dim, heads = rows / hd, row = cols ? cols : 1;
        const size_t group = l->a.heads / l->a.kv_heads;
        for (size_t o = 0; o < heads; o++) {
            const size_t g = r->part == 0 ? o / group : o;
            const size_t j = r->part == 0 ? o % group : group + (size_t)r->part - 1;
            memcpy(out + o * hd * row, l->scratch + (g * (group + 2) + j) * hd * row,
                   hd * row * sizeof *out);
        }
        return;
    }
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
    hf_shards_free(&l->c);
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
        if ((b->plan[i].row->how == HOW_CONV1D || b->plan[i].row->how == HOW_SLICE ||
             b->plan[i].row->how == HOW_QKV || b->plan[i].row->how == HOW_QKV_HEADS ||
             b->plan[i].row->how == HOW_QKV_GROUPS) &&
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
        const size_t rows = hf_dim_size(r->rows, b->a), cols = hf_dim_size(r->cols, b->a);
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
    builder b = {{0}, arch, hf_family_of(arch), "", NULL, 0, err};
    s = hf_shards_read(&b.c, dir, err);
    if (s == VP_OK && strcmp(arch->model_type, "gpt2") == 0) {
        size_t shard;
        b.prefix = hf_shards_lookup(&b.c, "transformer.wte.weight", &shard) ? "transformer." : "";
    } else if (s == VP_OK && strcmp(arch->model_type, "bloom") == 0) {
        size_t shard; /* BloomForCausalLM's, or a BloomModel's saved bare */
        b.prefix = hf_shards_lookup(&b.c, "transformer.word_embeddings.weight", &shard)
                       ? "transformer."
                       : "";
    } else if (s == VP_OK) {
        b.prefix = "model.";
    }
    vp_error why;
    b.err = &why;
    if (s == VP_OK && (s = hf_plan(&b)) != VP_OK)
        vp_fail(err, s, "%s: %s", dir, why.message);
    if (s == VP_OK && (s = build(&b, weights)) != VP_OK)
        vp_fail(err, s, "%s: %s", dir, why.message);
    free(b.plan);
    hf_shards_free(&b.c);
    if (s != VP_OK)
        vp_safetensors_free(weights);
    return s;
}
