/* The network's tensors by name, in the one order the weights' names are
 * written in (include/varprof/forward.h): the loader, the trainer and the
 * checkpoint writer all walk this list, so a name is spelled once. */
#include <stdio.h>

#include "forward/network.h"
#include "forward/qk_layernorm.h"

typedef struct {
    fw_model *m;
    fw_tensor_fn fn;
    void *ctx;
    vp_status status;
} walker;

static void visit(walker *w, const char *name, size_t rows, size_t cols, float *data,
                  fw_linear *linear)
{
    if (w->status != VP_OK)
        return;
    const fw_tensor t = {name, rows, cols, data, linear};
    w->status = w->fn(w->ctx, &t);
}

static void visit_norm(walker *w, const char *prefix, fw_norm *n)
{
    char name[FW_TENSOR_NAME_MAX];
    snprintf(name, sizeof name, "%s.weight", prefix);
    visit(w, name, w->m->d, 0, n->weight, NULL);
    if (n->bias && !w->m->norm_unbiased) { /* Cohere's: zeros, no tensor */
        snprintf(name, sizeof name, "%s.bias", prefix);
        visit(w, name, w->m->d, 0, n->bias, NULL);
    }
}

/* W before its bias: loading W (fw_linear_set) zeroes the bias */
static void visit_linear(walker *w, const char *prefix, fw_linear *l)
{
    char name[FW_TENSOR_NAME_MAX];
    snprintf(name, sizeof name, "%s.weight", prefix);
    visit(w, name, l->out, l->in, l->raw, l);
    if (!l->bias)
        return;
    snprintf(name, sizeof name, "%s.bias", prefix);
    visit(w, name, l->out, 0, l->bias, NULL);
}

/* Which norms a layer has, as the placement table says: one per sub-block on
 * the branch inputs or the stream (attn_norm, mlp_norm; a block of summed
 * branches has one, attn_norm, or two in the residual form
 * parallel-two-norms), and one per branch on the outputs
 * (attn_out_norm, mlp_out_norm). */
static void visit_layer(walker *w, size_t i, fw_layer *layer)
{
    const fw_model *m = w->m;
    const vp_placement_traits *t = m->traits;
    const int attention = !m->mlp_only, input_norms = t->norm_in || t->norm_stream;
    char p[FW_TENSOR_NAME_MAX - 16];
#define PREFIX(...) (snprintf(p, sizeof p, __VA_ARGS__), p)
    if (attention && input_norms)
        visit_norm(w, PREFIX("layers.%zu.attn_norm", i), &layer->attn_norm);
    if (input_norms && (t->branches_per_sub_block == 1 || m->residual->norms_per_sub_block > 1))
        visit_norm(w, PREFIX("layers.%zu.mlp_norm", i), &layer->mlp_norm);
    if (attention && t->norm_out)
        visit_norm(w, PREFIX("layers.%zu.attn_out_norm", i), &layer->attn_out_norm);
    if (t->norm_out)
        visit_norm(w, PREFIX("layers.%zu.mlp_out_norm", i), &layer->mlp_out_norm);
    if (attention) {
        visit_linear(w, PREFIX("layers.%zu.attn.q", i), &layer->q);
        visit_linear(w, PREFIX("layers.%zu.attn.k", i), &layer->k);
        visit_linear(w, PREFIX("layers.%zu.attn.v", i), &layer->v);
        visit_linear(w, PREFIX("layers.%zu.attn.o", i), &layer->o);
        for (int keys = 0; m->qk_norm && keys < 2; keys++) {
            size_t rows, cols;
            fw_q_norm_shape(m, keys, &rows, &cols);
            visit(w, PREFIX("layers.%zu.attn.%c_norm.weight", i, keys ? 'k' : 'q'), rows, cols,
                  keys ? layer->k_norm : layer->q_norm, NULL);
        }
    }
    if (m->gated) {
        visit_linear(w, PREFIX("layers.%zu.mlp.gate", i), &layer->fc1);
        visit_linear(w, PREFIX("layers.%zu.mlp.up", i), &layer->up);
        visit_linear(w, PREFIX("layers.%zu.mlp.down", i), &layer->fc2);
    } else {
        visit_linear(w, PREFIX("layers.%zu.mlp.fc1", i), &layer->fc1);
        visit_linear(w, PREFIX("layers.%zu.mlp.fc2", i), &layer->fc2);
    }
#undef PREFIX
}

vp_status fw_model_layer_tensors(fw_model *m, size_t l, fw_tensor_fn fn, void *ctx)
{
    walker w = {m, fn, ctx, VP_OK};
    visit_layer(&w, l, &m->layers_[l]);
    return w.status;
}

vp_status fw_model_tensors(fw_model *m, fw_tensor_fn fn, void *ctx)
{
    walker w = {m, fn, ctx, VP_OK};
    visit(&w, "embed.weight", m->vocab, m->embed_dim, m->embed, NULL);
    if (m->embed_dim != m->d) /* OPT's, unbiased */
        visit_linear(&w, "project_in", &m->project_in);
    if (m->pos_embed)
        visit(&w, "pos_embed.weight", m->n_ctx, m->d, m->pos_embed, NULL);
    if (m->embed_norm.weight) /* BLOOM's word_embeddings_layernorm */
        visit_norm(&w, "embed_norm", &m->embed_norm);
    for (size_t i = 0; i < m->layers; i++)
        visit_layer(&w, i, &m->layers_[i]);
    if (m->has_final_norm)
        visit_norm(&w, "final_norm", &m->final_norm);
    if (m->embed_dim != m->d)
        visit_linear(&w, "project_out", &m->project_out);
    if (m->has_head && !m->tied)
        visit_linear(&w, "head", &m->head);
    if (m->tied && m->head.bias) /* the weight is embed.weight's */
        visit(&w, "head.bias", m->vocab, 0, m->head.bias, NULL);
    return w.status;
}

void fw_model_repack_tied(fw_model *m)
{
    if (m->tied)
        fw_linear_pack(m, &m->head);
}
