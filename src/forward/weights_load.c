/* Loading the forward pass's weights from a safetensors file, by PyTorch's
 * names and layouts, every tensor checked: none missing, none unexpected,
 * each of the shape the options give. */
#include <math.h>
#include <stdint.h> /* SIZE_MAX */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/network.h"
#include "varprof/safetensors.h"

typedef struct {
    const fw_model *m;
    const vp_safetensors *file;
    unsigned char *used; /* per tensor of the file; NULL: not counted */
    float *scratch;
    vp_error *err;
    int names_only; /* the layers' tensors checked, not read (a streamed model) */
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
    if (l->used)
        l->used[t - l->file->tensors] = 1;
    if (!out)
        return VP_OK; /* its name and shape alone */
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

/* One tensor of the network from the file: a linear layer's W packed (and
 * kept, for a model that trains), anything else copied in place. */
static vp_status load_one(void *ctx, const fw_tensor *t)
{
    loader *l = ctx;
    const float *v = NULL;
    if (l->names_only && strncmp(t->name, "layers.", 7) == 0)
        return fetch(l, t->name, t->rows, t->cols, NULL);
    vp_status status = fetch(l, t->name, t->rows, t->cols, &v);
    if (status != VP_OK)
        return status;
    if (t->linear)
        fw_linear_set(l->m, t->linear, v, NULL);
    else
        memcpy(t->data, v, t->rows * (t->cols ? t->cols : 1) * sizeof *t->data);
    return VP_OK;
}

/* Floats of the largest tensor: the embedding and the head are both [V,
   d], learned positions [n_ctx, d], q and o H hd x d; plus a bias. */
static size_t biggest_tensor(const fw_model *m)
{
    size_t biggest = m->vocab * m->d > m->d * m->hidden ? m->vocab * m->d : m->d * m->hidden;
    if (m->n_ctx * m->d > biggest)
        biggest = m->n_ctx * m->d;
    if (m->q_width * m->d > biggest)
        biggest = m->q_width * m->d;
    if (m->embed_dim * m->d > biggest) /* OPT's project_in and project_out */
        biggest = m->embed_dim * m->d;
    return biggest + (m->hidden > m->q_width ? m->hidden : m->q_width);
}

vp_status fw_model_use_layer(const fw_model *m, size_t layer)
{
    fw_layer_stream *s = m->stream;
    if (!s || s->resident == layer || s->status != VP_OK)
        return s ? s->status : VP_OK;
    loader l = {m, s->file, NULL, s->scratch, &s->err, 0};
    /* the model's one layer of memory is the stream's to fill (s->model):
       the run holds the model const, the weights of the layer in turn change */
    s->status = fw_model_layer_tensors(s->model, layer, load_one, &l);
    s->resident = s->status == VP_OK ? layer : SIZE_MAX;
    return s->status;
}

vp_status fw_model_load(fw_model *m, const vp_safetensors *file, vp_error *err)
{
    const size_t biggest = biggest_tensor(m);
    loader l = {
        m,   file,       calloc(file->count ? file->count : 1, 1), malloc(biggest * sizeof(float)),
        err, m->streamed};
    vp_status status = VP_OK;
    if (!l.used || !l.scratch)
        status = vp_fail(err, VP_ENOMEM, "no memory to load the weights");
    if (status == VP_OK)
        status = fw_model_tensors(m, load_one, &l);
    if (status == VP_OK && m->streamed) { /* the layers from the file, one at a time */
        if (!(m->stream = calloc(1, sizeof *m->stream)))
            status = vp_fail(err, VP_ENOMEM, "no memory to load the weights");
        else {
            *m->stream = (fw_layer_stream){.model = m,
                                           .file = file,
                                           .resident = SIZE_MAX,
                                           .scratch = l.scratch,
                                           .status = VP_OK};
            l.scratch = NULL;
        }
    }
    if (status == VP_OK && m->tied) /* the head from the embedding just read */
        fw_linear_pack(m, &m->head);
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

/* H hd = q's rows and H_kv hd = k's, H_kv dividing H: a reading of
   layer 0's attention with heads of hd coordinates. */
static int reading_fits(size_t q_rows, size_t k_rows, size_t hd)
{
    return hd && q_rows % hd == 0 && k_rows % hd == 0 && (q_rows / hd) % (k_rows / hd) == 0;
}

/* The file's q and k admit several head shapes and nothing chose one:
   VP_EINVAL naming the readings, the widest heads first. */
static vp_status ambiguous_heads(size_t q_rows, size_t k_rows, size_t d, vp_error *err)
{
    char list[256] = "";
    size_t n = 0;
    for (size_t hd = k_rows; hd >= 1 && n < 4; hd--)
        if (reading_fits(q_rows, k_rows, hd)) {
            const size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%zu heads of %zu (%zu kv)", n ? ", " : "",
                     q_rows / hd, hd, k_rows / hd);
            n++;
        }
    if (n == 0)
        return vp_fail(err, VP_EFORMAT,
                       "layer 0's q has %zu rows and k %zu: no head width makes both whole "
                       "heads with k's heads dividing q's",
                       q_rows, k_rows);
    return vp_fail(err, VP_EINVAL,
                   "layer 0's q has %zu rows and k %zu on a width of %zu, which more than one "
                   "head shape fits (%s%s); the file does not say which",
                   q_rows, k_rows, d, list, n == 4 ? ", ..." : "");
}

/* The heads' shape from layer 0's attention. hd from per-head QK-norm's
   weights, else from o->heads and o->head_dim as the caller gives them (0:
   not given): head_dim, hd; heads alone, q's rows / H; neither,
   VP_FORWARD_DEFAULT_HEADS heads of d / that where q is d rows and k fits,
   else VP_EINVAL (ambiguous_heads). Then H from q's rows, H_kv from k's,
   each checked; kv_heads and head_dim stay 0 where they are the defaults. */
/* A q_norm weight's kind: [hd] per head, or [H, hd] a weight per head (Cohere's
   LayerNorm); over the full width its caller tells by q's rows */
static int qk_norm_of(const vp_tensor_info *q_norm)
{
    if (!q_norm)
        return VP_QK_NORM_NONE;
    return q_norm->rank == 2 ? VP_QK_NORM_HEAD_LAYERNORM : VP_QK_NORM_HEAD;
}

static vp_status infer_heads(const vp_safetensors *weights, const vp_tensor_info *q_norm,
                             vp_forward_options *o, vp_error *err)
{
    const vp_tensor_info *q = vp_safetensors_find(weights, "layers.0.attn.q.weight");
    const vp_tensor_info *k = vp_safetensors_find(weights, "layers.0.attn.k.weight");
    if (!q || !k || q->rank != 2 || k->rank != 2 || q->shape[0] == 0 || k->shape[0] == 0)
        return vp_fail(err, VP_EFORMAT,
                       "tensors 'layers.0.attn.q.weight' and 'layers.0.attn.k.weight' must "
                       "both be [heads x head width, width]");
    const size_t q_rows = q->shape[0], k_rows = k->shape[0], d = o->width;
    const size_t defaults = VP_FORWARD_DEFAULT_HEADS;
    size_t hd = 0, given = o->heads;
    const size_t norm_hd = q_norm && q_norm->rank <= 2 ? q_norm->shape[q_norm->rank - 1] : 0;
    if (norm_hd > 0) { /* q_norm [hd], or [H, hd] a weight per head */
        hd = norm_hd;
        given = 0; /* the QK-norm's weights decide; the caller weighs its own */
    } else if (o->head_dim)
        hd = o->head_dim;
    else if (given)
        hd = q_rows % given == 0 ? q_rows / given : 0;
    else if (q_rows == d && d % defaults == 0 && reading_fits(q_rows, k_rows, d / defaults))
        hd = d / defaults;
    else
        return ambiguous_heads(q_rows, k_rows, d, err);
    if (given && q_rows != given * hd)
        return vp_fail(err, VP_EFORMAT,
                       "layer 0's q has %zu rows: not %zu heads of %zu coordinates", q_rows, given,
                       hd);
    if (!reading_fits(q_rows, k_rows, hd))
        return vp_fail(err, VP_EFORMAT,
                       "layer 0's q has %zu rows and k %zu: with heads of %zu coordinates "
                       "they must be whole heads, k's heads dividing q's",
                       q_rows, k_rows, hd);
    const size_t heads = q_rows / hd, kv_heads = k_rows / hd;
    o->heads = heads;
    o->kv_heads = kv_heads == heads ? 0 : kv_heads;
    o->head_dim = d % heads == 0 && d / heads == hd ? 0 : hd;
    return VP_OK;
}

/* The stream's width: embed.weight's, or OPT's project_in [d, e] maps a
   narrower embedding (e, embed_dim) to it. */
static vp_status infer_widths(const vp_safetensors *weights, const vp_tensor_info *embed,
                              vp_forward_options *o, vp_error *err)
{
    const size_t e = embed->shape[1];
    const vp_tensor_info *in = vp_safetensors_find(weights, "project_in.weight");
    o->width = in && in->rank == 2 ? in->shape[0] : e;
    o->embed_dim = in ? e : 0;
    if (in && (in->rank != 2 || in->shape[1] != e || in->shape[0] <= e))
        return vp_fail(err, VP_EFORMAT,
                       "tensor 'project_in.weight' must be [width, %zu], the width above "
                       "embed.weight's %zu",
                       e, e);
    return VP_OK;
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
    const vp_status widths = infer_widths(weights, embed, o, err);
    if (widths != VP_OK)
        return widths;
    cfg->layers = count_layers(weights);
    if (cfg->layers == 0)
        return vp_fail(err, VP_EFORMAT, "no tensor 'layers.0....': the file has no layers");
    /* the MLP's first projection: fc1, or a gated MLP's gate */
    const vp_tensor_info *gate = vp_safetensors_find(weights, "layers.0.mlp.gate.weight");
    const vp_tensor_info *fc1 =
        gate ? gate : vp_safetensors_find(weights, "layers.0.mlp.fc1.weight");
    if (!fc1 || fc1->rank != 2 || fc1->shape[0] == 0 || fc1->shape[1] != o->width)
        return vp_fail(err, VP_EFORMAT,
                       "tensor 'layers.0.mlp.%s.weight' is missing or not "
                       "[hidden width, width]",
                       gate ? "gate" : "fc1");
    if (fc1->shape[0] % o->width == 0) {
        o->ffn_mult = fc1->shape[0] / o->width;
        o->ffn_width = 0;
    } else {
        o->ffn_width = fc1->shape[0];
    }
    /* the names tell gated or not, never the activation */
    if (gate && !vp_mlp_gated(o->mlp))
        o->mlp = VP_MLP_SWIGLU;
    else if (!gate && vp_mlp_gated(o->mlp))
        o->mlp = VP_MLP_GELU;
    cfg->mlp_only = vp_safetensors_find(weights, "layers.0.attn.q.weight") == NULL;
    const vp_tensor_info *q_norm = vp_safetensors_find(weights, "layers.0.attn.q_norm.weight");
    const vp_tensor_info *q = vp_safetensors_find(weights, "layers.0.attn.q.weight");
    o->qk_norm = qk_norm_of(q_norm);
    /* as long as q's rows: over the full width, o's heads splitting it
       (with one head the two are the same) */
    if (q_norm && q && q_norm->rank == 1 && q->rank == 2 && q_norm->shape[0] == q->shape[0]) {
        o->qk_norm = VP_QK_NORM_FULL;
        q_norm = NULL; /* it does not tell a head's width */
    }
    if (!cfg->mlp_only) {
        const vp_status status = infer_heads(weights, q_norm, o, err);
        if (status != VP_OK)
            return status;
    }
    if (vp_safetensors_find(weights, "pos_embed.weight"))
        o->positions = VP_POSITIONS_LEARNED;
    if (vp_safetensors_find(weights, "embed_norm.weight")) /* BLOOM's */
        o->embedding_norm = VP_EMBEDDING_NORM_LAYERNORM;
    /* LayerNorm's norms carry biases, but for norm_unbiased (Cohere's); RMSNorm's do not */
    int norms = 0, biases = 0;
    for (size_t t = 0; t < weights->count; t++) {
        const char *name = weights->tensors[t].name;
        /* the blocks' norms: not QK-norm's, nor the embedding's LayerNorm */
        if (strstr(name, "_norm.") && !strstr(name, "q_norm.") && !strstr(name, "k_norm.") &&
            !strstr(name, "embed_norm.")) {
            norms += ends_with(name, ".weight");
            biases += ends_with(name, ".bias");
        }
    }
    if (norms > 0)
        o->norm = biases > 0 || o->norm_unbiased ? VP_NORM_LAYERNORM : VP_NORM_RMSNORM;
    /* the projections' biases: the MLP's first projection has one when all
       do or the MLP's alone (GPT-J's, q without one); q has one with all or
       with q, k and v alone (an MLP-only file has no q: its MLP decides) */
    const int mlp_bias = vp_safetensors_find(weights, gate ? "layers.0.mlp.gate.bias"
                                                           : "layers.0.mlp.fc1.bias") != NULL;
    const int q_bias = vp_safetensors_find(weights, "layers.0.attn.q.bias") != NULL;
    const int q_unbiased = !q_bias && vp_safetensors_find(weights, "layers.0.attn.q.weight");
    o->bias = mlp_bias ? (q_unbiased ? VP_BIAS_MLP : VP_BIAS_ALL)
              : q_bias ? VP_BIAS_QKV
                       : VP_BIAS_NONE;
    /* a head without a bias beside the MLP's: GPT-2's */
    o->head_unbiased = mlp_bias && !vp_safetensors_find(weights, "head.bias");
    return VP_OK;
}
