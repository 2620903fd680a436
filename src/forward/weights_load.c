/* Loading the forward pass's weights from a safetensors file, by PyTorch's
 * names and layouts, every tensor checked: none missing, none unexpected,
 * each of the shape the options give. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/network.h"
#include "varprof/safetensors.h"

typedef struct {
    const vp_safetensors *file;
    unsigned char *used; /* per tensor of the file */
    float *scratch;
    vp_error *err;
} loader;

/* The tensor called name, checked to have the given shape (rank 1 or 2;
 * cols 0 for rank 1), converted to floats in l->scratch. */
static vp_status fetch(loader *l, const char *name, size_t rows, size_t cols, const float **out)
{
    const vp_tensor_info *t = vp_safetensors_find(l->file, name);
    if (!t)
        return vp_fail(l->err, VP_EFORMAT, "tensor '%s' is missing", name);
    const size_t rank = cols ? 2 : 1;
    if (t->rank != rank || t->shape[0] != rows || (cols && t->shape[1] != cols)) {
        char got[96] = "", want[64];
        for (size_t i = 0; i < t->rank; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu", i ? ", " : "",
                     t->shape[i]);
        if (cols)
            snprintf(want, sizeof want, "[%zu, %zu]", rows, cols);
        else
            snprintf(want, sizeof want, "[%zu]", rows);
        return vp_fail(l->err, VP_EFORMAT, "tensor '%s' has shape [%s]; the options make it %s",
                       name, got, want);
    }
    l->used[t - l->file->tensors] = 1;
    vp_safetensors_to_float(l->file, t, l->scratch);
    for (size_t i = 0; i < t->elements; i++)
        if (!isfinite(l->scratch[i]))
            return vp_fail(l->err, VP_EFORMAT,
                           "tensor '%s' holds %s at element %zu: a network's "
                           "weights must be finite",
                           name, isnan(l->scratch[i]) ? "NaN" : "an infinity", i);
    *out = l->scratch;
    return VP_OK;
}

static vp_status load_vector(loader *l, const char *name, float *dest, size_t n)
{
    const float *v;
    vp_status status = fetch(l, name, n, 0, &v);
    if (status == VP_OK)
        memcpy(dest, v, n * sizeof *dest);
    return status;
}

static vp_status load_norm(loader *l, const fw_model *m, const char *prefix, fw_norm *n)
{
    char name[128];
    snprintf(name, sizeof name, "%s.weight", prefix);
    vp_status status = load_vector(l, name, n->weight, m->d);
    if (status == VP_OK && n->bias) {
        snprintf(name, sizeof name, "%s.bias", prefix);
        status = load_vector(l, name, n->bias, m->d);
    }
    return status;
}

static vp_status load_linear(loader *l, const fw_model *m, const char *prefix, fw_linear *lin)
{
    char name[128];
    const float *w;
    snprintf(name, sizeof name, "%s.weight", prefix);
    vp_status status = fetch(l, name, lin->out, lin->in, &w);
    if (status != VP_OK)
        return status;
    /* the weights are packed straight from scratch (W^T too, for a
       backward); the bias goes in after */
    fw_linear_set(m, lin, w, NULL);
    snprintf(name, sizeof name, "%s.bias", prefix);
    return load_vector(l, name, lin->bias, lin->out);
}

/* Which norms a layer has, as the placement table says: one per sub-block on
 * the branch inputs or the stream (attn_norm, mlp_norm; a block of summed
 * branches has one, attn_norm), and one per branch on the outputs
 * (attn_out_norm, mlp_out_norm). */
static int has_input_norms(const vp_placement_traits *t)
{
    return t->norm_in || t->norm_stream;
}

static vp_status load_layer(loader *l, const fw_model *m, size_t i, fw_layer *layer)
{
    char prefix[96];
    vp_status status = VP_OK;
#define PREFIX(...) (snprintf(prefix, sizeof prefix, __VA_ARGS__), prefix)
    const int attention = !m->mlp_only;
    const vp_placement_traits *t = m->traits;
    if (attention && has_input_norms(t))
        status = load_norm(l, m, PREFIX("layers.%zu.attn_norm", i), &layer->attn_norm);
    if (status == VP_OK && has_input_norms(t) && t->branches_per_sub_block == 1)
        status = load_norm(l, m, PREFIX("layers.%zu.mlp_norm", i), &layer->mlp_norm);
    if (status == VP_OK && attention && t->norm_out)
        status = load_norm(l, m, PREFIX("layers.%zu.attn_out_norm", i), &layer->attn_out_norm);
    if (status == VP_OK && t->norm_out)
        status = load_norm(l, m, PREFIX("layers.%zu.mlp_out_norm", i), &layer->mlp_out_norm);
    if (attention) {
        if (status == VP_OK)
            status = load_linear(l, m, PREFIX("layers.%zu.attn.q", i), &layer->q);
        if (status == VP_OK)
            status = load_linear(l, m, PREFIX("layers.%zu.attn.k", i), &layer->k);
        if (status == VP_OK)
            status = load_linear(l, m, PREFIX("layers.%zu.attn.v", i), &layer->v);
        if (status == VP_OK)
            status = load_linear(l, m, PREFIX("layers.%zu.attn.o", i), &layer->o);
        if (status == VP_OK && m->qk_norm)
            status = load_vector(l, PREFIX("layers.%zu.attn.q_norm.weight", i), layer->q_norm,
                                 m->head_dim);
        if (status == VP_OK && m->qk_norm)
            status = load_vector(l, PREFIX("layers.%zu.attn.k_norm.weight", i), layer->k_norm,
                                 m->head_dim);
    }
    if (status == VP_OK)
        status = load_linear(l, m, PREFIX("layers.%zu.mlp.fc1", i), &layer->fc1);
    if (status == VP_OK)
        status = load_linear(l, m, PREFIX("layers.%zu.mlp.fc2", i), &layer->fc2);
#undef PREFIX
    return status;
}

vp_status fw_model_load(fw_model *m, const vp_safetensors *file, vp_error *err)
{
    /* the embedding and the head are both [V, d] */
    const size_t biggest = m->vocab * m->d > m->d * m->hidden ? m->vocab * m->d : m->d * m->hidden;
    loader l = {file, calloc(file->count ? file->count : 1, 1),
                malloc((biggest + m->hidden) * sizeof(float)), err};
    vp_status status = VP_OK;
    if (!l.used || !l.scratch)
        status = vp_fail(err, VP_ENOMEM, "no memory to load the weights");
    if (status == VP_OK) {
        const float *e;
        status = fetch(&l, "embed.weight", m->vocab, m->d, &e);
        if (status == VP_OK)
            memcpy(m->embed, e, m->vocab * m->d * sizeof(float));
    }
    for (size_t i = 0; i < m->layers && status == VP_OK; i++)
        status = load_layer(&l, m, i, &m->layers_[i]);
    if (status == VP_OK && m->has_final_norm)
        status = load_norm(&l, m, "final_norm", &m->final_norm);
    if (status == VP_OK && m->has_head)
        status = load_linear(&l, m, "head", &m->head);
    for (size_t t = 0; t < file->count && status == VP_OK; t++)
        if (!l.used[t])
            status = vp_fail(err, VP_EFORMAT,
                             "tensor '%s' is not one this network has (%s, %zu "
                             "layers%s)",
                             file->tensors[t].name, vp_placement_name(m->placement), m->layers,
                             m->mlp_only ? " of MLPs alone" : "");
    free(l.used);
    free(l.scratch);
    return status;
}

/* The highest layer index + 1 among names "layers.<i>.". */
static size_t count_layers(const vp_safetensors *file)
{
    size_t layers = 0;
    for (size_t t = 0; t < file->count; t++) {
        const char *name = file->tensors[t].name;
        if (strncmp(name, "layers.", 7) != 0)
            continue;
        char *end;
        unsigned long long i = strtoull(name + 7, &end, 10);
        if (end != name + 7 && *end == '.' && i < VP_MAX_LAYERS && i + 1 > layers)
            layers = (size_t)i + 1;
    }
    return layers;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

vp_status vp_forward_infer(const vp_safetensors *weights, vp_config *cfg, vp_forward_options *o,
                           vp_error *err)
{
    const vp_tensor_info *embed = vp_safetensors_find(weights, "embed.weight");
    if (!embed || embed->rank != 2 || embed->shape[0] == 0 || embed->shape[1] == 0)
        return vp_fail(err, VP_EFORMAT,
                       "tensor 'embed.weight' [vocab, width] is missing or "
                       "not two-dimensional");
    o->vocab = embed->shape[0];
    o->width = embed->shape[1];
    cfg->layers = count_layers(weights);
    if (cfg->layers == 0)
        return vp_fail(err, VP_EFORMAT, "no tensor 'layers.0....': the file has no layers");
    const vp_tensor_info *fc1 = vp_safetensors_find(weights, "layers.0.mlp.fc1.weight");
    if (!fc1 || fc1->rank != 2 || fc1->shape[0] % o->width != 0 || fc1->shape[0] == 0)
        return vp_fail(err, VP_EFORMAT,
                       "tensor 'layers.0.mlp.fc1.weight' is missing or not "
                       "[m * width, width]");
    o->ffn_mult = fc1->shape[0] / o->width;
    cfg->mlp_only = vp_safetensors_find(weights, "layers.0.attn.q.weight") == NULL;
    const vp_tensor_info *q_norm = vp_safetensors_find(weights, "layers.0.attn.q_norm.weight");
    o->qk_norm = q_norm != NULL;
    if (q_norm && q_norm->rank == 1 && q_norm->shape[0] > 0 && o->width % q_norm->shape[0] == 0)
        o->heads = o->width / q_norm->shape[0];
    /* LayerNorm's norms carry biases; RMSNorm's do not */
    int norms = 0, biases = 0;
    for (size_t t = 0; t < weights->count; t++) {
        const char *name = weights->tensors[t].name;
        if (strstr(name, "_norm.") && !strstr(name, "q_norm.") && !strstr(name, "k_norm.")) {
            norms += ends_with(name, ".weight");
            biases += ends_with(name, ".bias");
        }
    }
    if (norms > 0)
        o->norm = biases > 0 ? VP_NORM_LAYERNORM : VP_NORM_RMSNORM;
    return VP_OK;
}
