/* Making the network: its stored weights laid out in one arena, then drawn
 * (or, in a drawn model, how each is drawn as the matmul uses it). */
#include "forward/network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sys/big_block.h"

static size_t aligned(size_t floats)
{
    return (floats + 15) & ~(size_t)15; /* 64 bytes */
}

/* W packed, W^T packed for a backward, the bias (room kept whether it has
   one or not: out floats), and W as given to train; drawn, the bias alone */
static size_t linear_floats(const fw_model *shape, const kern_table *kern, size_t in, size_t out)
{
    if (shape->drawn)
        return aligned(out);
    const size_t transposed = shape->backward ? aligned(kern->matmul_packed_floats(out, in)) : 0;
    const size_t raw = shape->keep_raw ? aligned(in * out) : 0;
    return aligned(kern->matmul_packed_floats(in, out)) + transposed + aligned(out) + raw;
}

static size_t layer_floats(const fw_model *shape, const kern_table *kern)
{
    const size_t d = shape->d;
    size_t n = 4 * 2 * aligned(d); /* four norms, weight and bias */
    if (!shape->mlp_only)
        n += linear_floats(shape, kern, d, shape->q_width) +
             2 * linear_floats(shape, kern, d, shape->kv_width) +
             linear_floats(shape, kern, shape->q_width, d) + aligned(fw_q_norm_width(shape, 0)) +
             aligned(fw_q_norm_width(shape, 1));
    n +=
        linear_floats(shape, kern, d, shape->hidden) + linear_floats(shape, kern, shape->hidden, d);
    if (shape->gated)
        n += linear_floats(shape, kern, d, shape->hidden);
    return n;
}

/* The head and the final norm. */
static size_t top_floats(const fw_model *shape, const kern_table *kern)
{
    size_t n = shape->has_final_norm ? 2 * aligned(shape->d) : 0;
    n += vp_embedding_norm_traits_of(shape->embedding_norm)->norm ? 2 * aligned(shape->d) : 0;
    if (shape->has_head)
        n += linear_floats(shape, kern, shape->embed_dim, shape->vocab);
    if (shape->embed_dim != shape->d) /* OPT's project_in and project_out */
        n += linear_floats(shape, kern, shape->embed_dim, shape->d) +
             linear_floats(shape, kern, shape->d, shape->embed_dim);
    return n;
}

/* the loss reads the head's logits (a value out of range: as if it did) */
static int loss_needs_head(vp_loss loss)
{
    const vp_loss_traits *t = vp_loss_traits_of(loss);
    return !t || t->needs_head;
}

void fw_model_parts(const vp_config *cfg, const vp_forward_options *o, int *has_head,
                    int *has_final_norm)
{
    if (o->weights) {
        /* tied, the head's weight is embed.weight: the file has the head
           when it has its bias, or the loss makes one */
        *has_head = vp_safetensors_find(o->weights, "head.weight") != NULL ||
                    (o->tie_embeddings && (vp_safetensors_find(o->weights, "head.bias") != NULL ||
                                           (cfg->grad && loss_needs_head(o->loss))));
        *has_final_norm = vp_safetensors_find(o->weights, "final_norm.weight") != NULL;
    } else {
        *has_head = cfg->grad && loss_needs_head(o->loss);
        *has_final_norm = vp_config_has_final_norm(cfg);
    }
}

size_t fw_q_norm_width(const fw_model *m, int keys)
{
    if (m->qk_norm != VP_QK_NORM_FULL && m->qk_norm != VP_QK_NORM_HEAD_LAYERNORM)
        return m->head_dim;
    return keys ? m->kv_width : m->q_width;
}

void fw_model_shape(fw_model *m, const vp_config *cfg, const vp_forward_options *o)
{
    fw_model_shape_as(m, cfg, o, fw_recomputes(cfg, o));
}

void fw_model_shape_as(fw_model *m, const vp_config *cfg, const vp_forward_options *o,
                       int recompute)
{
    m->placement = cfg->placement;
    m->traits = vp_placement_traits_of(cfg->placement);
    m->mlp_only = cfg->mlp_only;
    m->qk_norm = o->qk_norm;
    m->norm = o->norm;
    m->eps = (float)o->eps;
    m->d = o->width;
    m->heads = o->heads;
    m->head_dim = vp_forward_head_dim(o);
    m->kv_heads = vp_forward_kv_heads(o);
    m->q_width = m->heads * m->head_dim;
    m->kv_width = m->kv_heads * m->head_dim;
    m->hidden = vp_forward_ffn_width(o);
    m->mlp = o->mlp;
    m->gated = vp_mlp_gated(o->mlp);
    m->bias = o->bias;
    m->head_unbiased = o->head_unbiased;
    m->norm_unbiased = o->norm_unbiased;
    m->embed_padding = o->embed_padding;
    m->vocab = o->vocab;
    m->layers = cfg->layers;
    m->backward = cfg->grad;
    m->recompute = cfg->grad && recompute;
    fw_model_parts(cfg, o, &m->has_head, &m->has_final_norm);
    m->positions = o->positions;
    m->embedding_norm = o->embedding_norm;
    m->rope_theta = o->rope_theta;
    m->rope_scaling = o->rope_scaling;
    m->rope_dim = fw_rope_dim(o);
    fw_window_shape(m, o);
    m->residual = vp_residual_traits_of(fw_residual_of(cfg, o));
    m->tied = o->tie_embeddings && m->has_head;
    /* a checkpoint's tensors are made on demand: its layers stay there */
    m->streamed = o->weights && o->weights->source && m->layers > 1;
    m->drawn = !o->weights && !o->stored_weights; /* and not trained: model_alloc */
    m->embed_scale = o->embed_scale > 0.0 ? (float)o->embed_scale : 1.0f;
    m->attn_scale =
        o->attn_scale > 0.0 ? (float)o->attn_scale : (float)(1.0 / sqrt((double)m->head_dim));
    m->attn_softcap = (float)o->attn_softcap;
    m->logit_softcap = (float)o->logit_softcap;
    m->logit_scale = o->logit_scale > 0.0 ? (float)o->logit_scale : 1.0f;
    m->embed_dim = o->embed_dim ? o->embed_dim : o->width;
    m->position_offset = o->position_offset;
    m->n_ctx = 0;
    if (o->positions == VP_POSITIONS_LEARNED) {
        /* a file's table as long as it is (vp_forward_check: no shorter than
           the tokens); drawn, as long as the run */
        const vp_tensor_info *t =
            o->weights ? vp_safetensors_find(o->weights, "pos_embed.weight") : NULL;
        m->n_ctx = t && t->rank == 2 && t->shape[0] > 0 ? t->shape[0] : o->tokens;
    }
}

static size_t model_floats(const fw_model *shape, const kern_table *kernels)
{
    return (shape->drawn ? 0 : aligned(shape->vocab * shape->embed_dim)) +
           aligned(shape->n_ctx * shape->d) +
           (shape->streamed ? 1 : shape->layers) * layer_floats(shape, kernels) +
           top_floats(shape, kernels);
}

size_t fw_model_shape_floats(const fw_model *shape, const kern_table *kernels)
{
    return model_floats(shape, kernels);
}

size_t fw_model_floats(const vp_config *cfg, const vp_forward_options *o, const kern_table *kernels)
{
    fw_model shape = {0};
    fw_model_shape(&shape, cfg, o);
    return model_floats(&shape, kernels);
}

static float *take(fw_model *m, size_t floats)
{
    float *p = m->arena + m->arena_used;
    m->arena_used += aligned(floats);
    return p;
}

static void make_norm(fw_model *m, fw_norm *n, float weight)
{
    n->weight = take(m, m->d);
    n->bias = take(m, m->d);
    for (size_t i = 0; i < m->d; i++) {
        n->weight[i] = weight;
        n->bias[i] = 0.0f;
    }
    if (m->norm == VP_NORM_RMSNORM && n != &m->embed_norm) /* the embedding's: a LayerNorm */
        n->bias = NULL;
}

/* A projection's bias, by the setting's row: q, k and v by its qkv, the
   attention's output by its attn_out, the MLP's and the head by its others. */
enum { OTHER_PROJECTION, QKV_PROJECTION, HEAD_PROJECTION, UNBIASED_PROJECTION, OUT_PROJECTION };
static int has_bias(const fw_model *m, int kind)
{
    if (kind == UNBIASED_PROJECTION) /* OPT's project_in and project_out */
        return 0;
    if (kind == HEAD_PROJECTION && m->head_unbiased)
        return 0;
    const vp_bias_traits *t = vp_bias_traits_of(m->bias);
    return kind == QKV_PROJECTION ? t->qkv : kind == OUT_PROJECTION ? t->attn_out : t->others;
}

static void make_linear(fw_model *m, fw_linear *l, size_t in, size_t out, int kind)
{
    l->in = in;
    l->out = out;
    l->bias = take(m, out);
    if (!has_bias(m, kind))
        l->bias = NULL;
    if (m->drawn) /* W made as it is used: fw_model_init says how */
        return;
    l->packed = take(m, m->kernels->matmul_packed_floats(in, out));
    l->raw = m->keep_raw ? take(m, in * out) : NULL;
    /* the backward's dX = dY W: W^T packed, or W itself where it lies */
    const int read_raw = l->raw && m->kernels->matmul_wt_fits(out, in, in);
    l->packed_t =
        m->backward && !read_raw ? take(m, m->kernels->matmul_packed_floats(out, in)) : NULL;
}

static fw_model *model_alloc(const vp_config *cfg, const vp_forward_options *o,
                             const kern_table *kernels, int keep_raw)
{
    fw_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    fw_model_shape(m, cfg, o);
    m->keep_raw = keep_raw;
    m->drawn = m->drawn && !keep_raw;       /* a trainer updates W */
    m->streamed = m->streamed && !keep_raw; /* a trainer updates every layer */
    m->kernels = kernels;
    m->arena_size = model_floats(m, kernels);
    m->layers_ = calloc(m->layers, sizeof *m->layers_);
    m->arena = big_block_alloc(m->arena_size * sizeof(float));
    if (!m->layers_ || !m->arena) {
        fw_model_free(m);
        return NULL;
    }
    memset(m->arena, 0, m->arena_size * sizeof(float));
    m->embed = m->drawn ? NULL : take(m, m->vocab * m->embed_dim);
    m->pos_embed = m->n_ctx ? take(m, m->n_ctx * m->d) : NULL;
    if (vp_embedding_norm_traits_of(m->embedding_norm)->norm)
        make_norm(m, &m->embed_norm, 1.0f);
    const float gamma = (float)cfg->gamma;
    const int out_norms = m->traits->norm_out;
    for (size_t l = 0; l < m->layers; l++) {
        fw_layer *layer = &m->layers_[l];
        if (m->streamed && l > 0) { /* one layer's memory, for each in turn */
            *layer = m->layers_[0];
            continue;
        }
        make_norm(m, &layer->attn_norm, 1.0f);
        make_norm(m, &layer->mlp_norm, 1.0f);
        /* the scale of a normalised branch output, gamma, is its norm's weight */
        make_norm(m, &layer->attn_out_norm, out_norms ? gamma : 1.0f);
        make_norm(m, &layer->mlp_out_norm, out_norms ? gamma : 1.0f);
        if (!m->mlp_only) {
            make_linear(m, &layer->q, m->d, m->q_width, QKV_PROJECTION);
            make_linear(m, &layer->k, m->d, m->kv_width, QKV_PROJECTION);
            make_linear(m, &layer->v, m->d, m->kv_width, QKV_PROJECTION);
            make_linear(m, &layer->o, m->q_width, m->d, OUT_PROJECTION);
            layer->q_norm = take(m, fw_q_norm_width(m, 0));
            layer->k_norm = take(m, fw_q_norm_width(m, 1));
            for (size_t i = 0; i < fw_q_norm_width(m, 0); i++)
                layer->q_norm[i] = 1.0f;
            for (size_t i = 0; i < fw_q_norm_width(m, 1); i++)
                layer->k_norm[i] = 1.0f;
        }
        make_linear(m, &layer->fc1, m->d, m->hidden, OTHER_PROJECTION);
        make_linear(m, &layer->fc2, m->hidden, m->d, OTHER_PROJECTION);
        if (m->gated)
            make_linear(m, &layer->up, m->d, m->hidden, OTHER_PROJECTION);
    }
    if (m->has_final_norm)
        make_norm(m, &m->final_norm, 1.0f);
    if (m->has_head)
        make_linear(m, &m->head, m->embed_dim, m->vocab, HEAD_PROJECTION);
    if (m->embed_dim != m->d) {
        make_linear(m, &m->project_in, m->embed_dim, m->d, UNBIASED_PROJECTION);
        make_linear(m, &m->project_out, m->d, m->embed_dim, UNBIASED_PROJECTION);
    }
    if (m->tied && !m->drawn) /* packed from the embedding, after every change to it */
        m->head.raw = m->embed;
    return m;
}

fw_model *fw_model_alloc(const vp_config *cfg, const vp_forward_options *o,
                         const kern_table *kernels)
{
    return model_alloc(cfg, o, kernels, 0);
}

fw_model *fw_model_alloc_trainable(const vp_config *cfg, const vp_forward_options *o,
                                   const kern_table *kernels)
{
    return model_alloc(cfg, o, kernels, 1);
}

void fw_model_free(fw_model *model)
{
    if (!model)
        return;
    free(model->arena);
    free(model->layers_);
    if (model->stream)
        free(model->stream->scratch);
    free(model->stream);
    free(model);
}

static void pack(const fw_model *m, fw_linear *linear, const float *w)
{
    m->kernels->matmul_pack(linear->packed, w, linear->in, linear->out);
    if (linear->packed_t) /* W^T [in][out] as a layer of `in` outputs, packed from W */
        m->kernels->matmul_pack_transposed(linear->packed_t, w, linear->in, linear->out,
                                           linear->in);
}

void fw_linear_set(const fw_model *m, fw_linear *linear, const float *w, const float *bias)
{
    if (linear->raw)
        memcpy(linear->raw, w, linear->in * linear->out * sizeof *w);
    pack(m, linear, w);
    for (size_t j = 0; linear->bias && j < linear->out; j++)
        linear->bias[j] = bias ? bias[j] : 0.0f;
}

void fw_linear_pack(const fw_model *m, fw_linear *linear)
{
    if (linear->raw)
        pack(m, linear, linear->raw);
}
