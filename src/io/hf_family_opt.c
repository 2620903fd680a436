/* OPT's config.json (OPTConfig): LayerNorm, learned positions read two rows
 * on, ReLU, biases (enable_bias), a tied head; Post-LN where
 * do_layer_norm_before is false (OPT-350m), pre-norm with a final norm
 * otherwise; project_in and project_out where word_embed_proj_dim is not the
 * width. */

#include "hf_families.h"

/* OPTLearnedPositionalEmbedding: max_position_embeddings + 2 rows, position
   p at row p + 2 (fairseq's padding offset) */
#define OPT_POSITION_OFFSET 2

/* The keys whose other values varprof does not run, each named. */
static vp_status refusals(hf_json *c, int norm_before, int removed, int affine)
{
    if (!affine)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'layer_norm_elementwise_affine' is false; varprof's "
                       "LayerNorms have a weight and a bias");
    if (norm_before && removed)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: '_remove_final_layer_norm' is true with "
                       "'do_layer_norm_before'; varprof's pre-norm stack ends with a norm");
    return VP_OK;
}

static vp_status shape(hf_json *c, vp_hf_architecture *a)
{
    size_t positions = 0;
    vp_status s = hf_decoder_sizes(c, 0, "ffn_dim", a);
    if (s == VP_OK)
        s = hf_whole(c, "max_position_embeddings", 1, 0, 1,
                     VP_FORWARD_MAX_TOKENS - OPT_POSITION_OFFSET, &positions);
    /* OPTDecoder's embedding is word_embed_proj_dim wide, the width by default */
    if (s == VP_OK)
        s = hf_whole(c, "word_embed_proj_dim", 0, a->width, 1, VP_FORWARD_MAX_WIDTH, &a->embed_dim);
    if (s == VP_OK && a->embed_dim > a->width) /* OPT-350m's is 512 on 1024 */
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'word_embed_proj_dim' %zu is above 'hidden_size' %zu; "
                       "varprof reads an embedding as wide as the stream or narrower",
                       a->embed_dim, a->width);
    a->n_ctx = positions + OPT_POSITION_OFFSET;
    a->position_offset = OPT_POSITION_OFFSET;
    return s;
}

vp_status hf_read_opt(hf_json *c, vp_hf_architecture *a)
{
    int norm_before = 1, removed = 0, affine = 1, bias = 1;
    vp_status s = shape(c, a);
    if (s == VP_OK)
        s = hf_boolean(c, "do_layer_norm_before", 1, &norm_before);
    if (s == VP_OK)
        s = hf_boolean(c, "_remove_final_layer_norm", 0, &removed);
    if (s == VP_OK)
        s = hf_boolean(c, "layer_norm_elementwise_affine", 1, &affine);
    if (s == VP_OK)
        s = hf_boolean(c, "enable_bias", 1, &bias);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 1, &a->tied);
    if (s == VP_OK)
        s = hf_two_matrix_mlp(c, "activation_function", "relu", a);
    if (s == VP_OK)
        s = hf_pad_token(c, 1, a); /* OPTConfig's pad_token_id is 1 */
    if (s == VP_OK)
        s = refusals(c, norm_before, removed, affine);
    if (s != VP_OK)
        return s;
    /* Post-LN: a norm on the stream after each residual sum, none at the top */
    a->placement = norm_before ? VP_PRE_NORM : VP_POST_LN;
    a->bias = bias ? VP_BIAS_ALL : VP_BIAS_NONE; /* enable_bias: the projections' alone */
    a->head_bias = 0;                            /* OPTForCausalLM's lm_head: bias=False */
    a->norm = VP_NORM_LAYERNORM;
    a->eps = 1e-5; /* nn.LayerNorm's default: OPTConfig has no eps */
    a->positions = VP_POSITIONS_LEARNED;
    return VP_OK;
}
