/* Drawing the network's weights at init: each stored tensor drawn whole
 * and packed, or, in a drawn model, how each is drawn as the matmul uses
 * it (network.c lays the tensors out). */
#include <math.h>
#include <stdlib.h>

#include "forward/network.h"
#include "forward/weight_draw.h"
#include "sys/thread_pool.h"
#include "varprof/closed.h"

/* What every tensor's draw at init shares. */
typedef struct {
    const vp_forward_options *o;
    float *scratch;    /* scratch_floats(m): a stored tensor drawn whole, or a bias */
    thread_pool *pool; /* the init's threads for stored tensors; NULL: this thread */
} drawing;

/* Standard deviation sd, the whole of a [rows][cols] tensor. */
static void fill_normal(float *out, size_t rows, size_t cols, const drawing *dr, uint32_t stream,
                        double sd)
{
    const fw_draw d = {FW_DRAW_NORMAL, dr->o->seed, stream, sd, 1.0, rows, cols, 0};
    fw_draw_whole(&d, out, rows * cols, dr->pool);
}

/* One linear layer's weights: normal with standard deviation sd for the
 * gain init; for the torch init, PyTorch's uniform weight and bias, both
 * then multiplied by torch_scale (DeepNet's beta, as torchscale divides
 * those parameters by (8N)^(1/4)). A drawn model keeps how W is made and
 * stores the bias alone; else W is drawn whole into scratch and packed. */
static void draw_linear(fw_model *m, fw_linear *l, const drawing *dr, uint32_t stream, double sd,
                        double torch_scale)
{
    const vp_forward_options *o = dr->o;
    float *scratch = dr->scratch;
    fw_draw w = {FW_DRAW_NORMAL, o->seed, stream, sd, 1.0, l->out, l->in, 0};
    float *bias = NULL;
    if (o->init == VP_INIT_TORCH) {
        w.kind = FW_DRAW_UNIFORM;
        w.scale = 1.0 / sqrt((double)l->in);
        w.factor = torch_scale;
        fw_draw b = w;
        b.stream = stream | 0x80000000u;
        b.rows = 1;
        b.cols = l->out;
        bias = scratch + (m->drawn ? 0 : l->in * l->out);
        fw_draw_values(&b, bias, l->out, 0);
    }
    if (!m->drawn) {
        fw_draw_whole(&w, scratch, l->in * l->out, dr->pool);
        fw_linear_set(m, l, scratch, bias);
        return;
    }
    l->draw = w;
    for (size_t j = 0; l->bias && j < l->out; j++)
        l->bias[j] = bias ? bias[j] : 0.0f;
}

/* Floats of scratch to draw the largest tensor whole (with its bias), or
   of a drawn model's largest bias */
static size_t scratch_floats(const fw_model *m)
{
    const size_t d = m->d;
    if (m->drawn) { /* the biases alone */
        const size_t widths[] = {d, m->hidden, m->q_width, m->has_head ? m->vocab : d};
        size_t biggest = 0;
        for (size_t i = 0; i < sizeof widths / sizeof *widths; i++)
            biggest = widths[i] > biggest ? widths[i] : biggest;
        return biggest;
    }
    size_t biggest = d * m->hidden + d > d * m->hidden + m->hidden ? d * m->hidden + d
                                                                   : d * m->hidden + m->hidden;
    if (m->has_head && m->vocab * d + m->vocab > biggest)
        biggest = m->vocab * d + m->vocab;
    /* q and its bias, o and its */
    const size_t attn_most = m->q_width * d + (m->q_width > d ? m->q_width : d);
    if (!m->mlp_only && attn_most > biggest)
        biggest = attn_most;
    return biggest;
}

/* The stream's expected mean square before each sub-block, for the gains
   where no norm sits on a branch's input; *expected NULL elsewhere */
static vp_status expected_stream(const fw_model *m, const vp_config *cfg,
                                 const vp_forward_options *o, vp_profile **expected, vp_error *err)
{
    *expected = NULL;
    if (o->init != VP_INIT_GAIN || m->traits->norm_in)
        return VP_OK;
    /* learned positions add a second row of the embedding's variance */
    vp_config stream_cfg = *cfg;
    if (m->pos_embed)
        stream_cfg.embedding_var *= 2.0;
    vp_status status = vp_closed_profile(&stream_cfg, expected, err);
    if (status == VP_OK && (*expected)->overflow_at)
        status = vp_fail(err, VP_EOVERFLOW,
                         "the stream overflows at sub-block %zu, so no "
                         "weights give the gain there",
                         (*expected)->overflow_at);
    return status;
}

static void draw_embeddings(fw_model *m, const vp_config *cfg, const drawing *dr)
{
    const vp_forward_options *o = dr->o;
    const size_t d = m->d;
    const fw_draw embed = {FW_DRAW_NORMAL,
                           o->seed,
                           FW_STREAM_EMBEDDING,
                           o->init == VP_INIT_TORCH ? 1.0 : sqrt(cfg->embedding_var),
                           1.0,
                           m->vocab,
                           d,
                           0};
    if (m->drawn) /* its rows made for the tokens that run */
        m->embed_draw = embed;
    else
        fw_draw_whole(&embed, m->embed, m->vocab * d, dr->pool);
    /* learned positions drawn as the token embedding is, from their own
       stream: the stream at sub-block 0 has twice its variance */
    if (m->pos_embed)
        fill_normal(m->pos_embed, m->n_ctx, d, dr, FW_STREAM_POSITIONS,
                    o->init == VP_INIT_TORCH ? 1.0 : sqrt(cfg->embedding_var));
}

/* Layer l's projections; expected the stream's mean squares, or NULL */
static vp_status draw_layer(fw_model *m, const vp_config *cfg, const drawing *dr, size_t l,
                            const vp_profile *expected, vp_error *err)
{
    const vp_forward_options *o = dr->o;
    const size_t d = m->d;
    const double beta = m->traits->branch_beta ? cfg->beta : 1.0;
    const size_t per_layer = cfg->mlp_only ? 1 : m->traits->sub_blocks_per_layer;
    fw_layer *layer = &m->layers_[l];
    /* the attention's sub-block, then the MLP's (a parallel layer: both the one) */
    const size_t k_attn = 1 + l * per_layer, k_mlp = k_attn + (per_layer - 1);
    const double in_mlp = expected ? expected->rows[k_mlp - 1].stream_var : 1.0;
    /* DeepNet multiplies both of a branch's matrices by beta */
    const double g_attn = beta * beta * vp_config_gain(cfg, cfg->mlp_only ? k_mlp : k_attn);
    const double g_mlp = beta * beta * vp_config_gain(cfg, k_mlp);
    if (!m->mlp_only) { /* attention's gain does not depend on its input's size */
        draw_linear(m, &layer->q, dr, fw_layer_stream_of(l, 0), 1.0 / sqrt((double)d), 1.0);
        draw_linear(m, &layer->k, dr, fw_layer_stream_of(l, 1), 1.0 / sqrt((double)d), 1.0);
        draw_linear(m, &layer->v, dr, fw_layer_stream_of(l, 2), beta / sqrt((double)d), beta);
        /* as if each token attended to itself: o sums H hd coordinates of v,
           each of h's mean square times beta^2, so gain = sqrt(H hd) sd_o beta */
        const double sd_o =
            beta > 0.0 ? g_attn / (beta * sqrt((double)m->q_width)) : 0.0; /* not 0/0 */
        draw_linear(m, &layer->o, dr, fw_layer_stream_of(l, 3), sd_o, beta);
    }
    double fc1_var = 1.0 / (double)d, fc2_var = 1.0 / (double)m->hidden;
    if (o->init == VP_INIT_GAIN) {
        const vp_status status =
            fw_mlp_scales(m->mlp, d, m->hidden, in_mlp, g_mlp, beta, &fc1_var, &fc2_var, err);
        if (status != VP_OK)
            return status;
    }
    draw_linear(m, &layer->fc1, dr, fw_layer_stream_of(l, 4), sqrt(fc1_var), beta);
    draw_linear(m, &layer->fc2, dr, fw_layer_stream_of(l, 5), sqrt(fc2_var), beta);
    if (m->gated) /* the up projection: drawn as the gate, its own stream */
        draw_linear(m, &layer->up, dr, fw_layer_stream_of(l, 6), sqrt(fc1_var), beta);
    return VP_OK;
}

/* One pool for the whole init where a stored tensor fills two threads or
   more (fw_draw_whole), as many threads as the largest fills, o's at most;
   else NULL, and where the threads cannot be started the init draws on
   this thread, the same bits. */
static thread_pool *init_pool(const fw_model *m, const vp_forward_options *o)
{
    size_t largest = m->drawn ? 0 : scratch_floats(m);
    if (!m->drawn && m->embed && m->vocab * m->d > largest)
        largest = m->vocab * m->d;
    size_t threads = largest / FW_DRAWS_PER_THREAD;
    if (threads > o->threads)
        threads = o->threads;
    return threads > 1 ? thread_pool_create(threads, NULL) : NULL;
}

vp_status fw_model_init(fw_model *m, const vp_config *cfg, const vp_forward_options *o,
                        vp_error *err)
{
    drawing dr = {o, malloc(scratch_floats(m) * sizeof(float)), NULL};
    if (!dr.scratch)
        return vp_fail(err, VP_ENOMEM, "no memory to draw the weights");
    dr.pool = init_pool(m, o);
    vp_profile *expected = NULL;
    vp_status status = expected_stream(m, cfg, o, &expected, err);
    if (status == VP_OK)
        draw_embeddings(m, cfg, &dr);
    for (size_t l = 0; l < m->layers && status == VP_OK; l++)
        status = draw_layer(m, cfg, &dr, l, expected, err);
    /* the head after the layers, as nn.Sequential(Embedding, blocks...,
       Linear) draws it: nn.Linear's default, or N(0, 1/d) with no bias */
    if (status == VP_OK && m->has_head && !m->tied)
        draw_linear(m, &m->head, &dr, fw_layer_stream_of(m->layers, 0), 1.0 / sqrt((double)m->d),
                    1.0);
    if (m->tied && m->drawn) /* the embedding's own draws; a bias stays 0 */
        m->head.draw = m->embed_draw;
    else if (m->tied)
        fw_linear_pack(m, &m->head);
    vp_profile_free(expected);
    thread_pool_free(dr.pool);
    free(dr.scratch);
    return status;
}
