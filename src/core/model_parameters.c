/* The parameter count of a model's shape (vp_model_parameters): the network
 * description the models table gives, counted matrix by matrix. */
#include "varprof/models.h"

/* Norms in one layer: each sub-block's input, output and stream norms as the
 * placement has them (sandwich 4, parallel 1 shared by both branches), an
 * input norm per branch where the residual form gives each its own
 * (parallel-two-norms 2). */
static double norms_per_layer(vp_placement placement, vp_residual residual)
{
    const vp_placement_traits *t = vp_placement_traits_of(placement);
    const vp_residual_traits *r = vp_residual_traits_of(residual);
    const double inputs = (double)t->norm_in * (double)(r ? r->norms_per_sub_block : 1);
    return (double)t->sub_blocks_per_layer * (inputs + t->norm_out + t->norm_stream);
}

static double attention_parameters(const vp_model_shape *s)
{
    const double d = (double)s->width, q_width = (double)(s->heads * s->head_dim),
                 kv_width = (double)(s->kv_heads * s->head_dim);
    double weights = d * q_width + 2.0 * d * kv_width + q_width * d;
    double biases = 0.0;
    if (s->biases == VP_MODEL_BIASES_YES || s->biases == VP_MODEL_BIASES_QKV)
        biases += q_width + 2.0 * kv_width;
    if (s->biases == VP_MODEL_BIASES_YES)
        biases += d;
    return weights + biases;
}

static double mlp_parameters(const vp_model_shape *s)
{
    const double d = (double)s->width, m = (double)s->ffn_width;
    const int gated = vp_mlp_gated(s->activation);
    double weights = (gated ? 3.0 : 2.0) * d * m;
    /* a gated MLP's biases, where it has them, sit on gate and up alike */
    double biases = s->biases == VP_MODEL_BIASES_YES || s->biases == VP_MODEL_BIASES_MLP
                        ? (gated ? 2.0 : 1.0) * m + d
                        : 0.0;
    return weights + biases;
}

vp_status vp_model_parameters(const vp_model *m, double *parameters)
{
    if (!m || !parameters || !m->shape.known || !vp_placement_traits_of(m->placement))
        return VP_EINVAL;
    const vp_model_shape *s = &m->shape;
    const double d = (double)s->width, vocab = (double)s->vocab;
    /* LayerNorm has a weight and a bias (Cohere's none), RMSNorm a weight only */
    const double per_norm = m->norm == VP_NORM_LAYERNORM && !s->norm_unbiased ? 2.0 : 1.0;
    double layer = attention_parameters(s) + mlp_parameters(s) +
                   per_norm * d * norms_per_layer(m->placement, s->residual);
    if (m->qk_norm)
        layer += 2.0 * per_norm * (double)s->head_dim; /* one norm over a head, for q and k */
    double total = vocab * d + (double)m->layers * layer;
    if (s->positions == VP_MODEL_POSITIONS_LEARNED)
        total += (double)s->max_positions * d;
    if (s->final_norm)
        total += per_norm * d;
    if (s->embedding_norm != VP_EMBEDDING_NORM_NONE)
        total += 2.0 * d; /* a LayerNorm whatever the blocks' norm: BLOOM's */
    if (!s->tied_embeddings)
        total += vocab * d;
    *parameters = total;
    return VP_OK;
}
