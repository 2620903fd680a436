/* GPT-2's config.json (GPT2Config): LayerNorm, learned positions, biases on
 * every projection but the head, which is the tied embedding. */
#include <cjson/cJSON.h>

#include "hf_families.h"

static vp_status refuse_unscaled(hf_json *c)
{
    vp_status s = hf_refuse_set(c, "scale_attn_by_inverse_layer_idx",
                                "varprof scales attention by 1/sqrt(head width) alone");
    if (s == VP_OK && cJSON_IsFalse(hf_field(c, "scale_attn_weights")))
        s = vp_fail(c->err, VP_EFORMAT,
                    "config.json: 'scale_attn_weights' is false; varprof "
                    "scales attention by 1/sqrt(head width)");
    return s;
}

vp_status hf_read_gpt2(hf_json *c, vp_hf_architecture *a)
{
    size_t inner = 0;
    vp_status s = hf_width_and_heads(c, "n_embd", "n_head", 0, a);
    if (s == VP_OK && a->width % a->heads != 0) /* GPT-2 has no head_dim */
        return vp_fail(c->err, VP_EFORMAT, "config.json: 'n_head' %zu does not divide 'n_embd' %zu",
                       a->heads, a->width);
    if (s == VP_OK)
        s = hf_whole(c, "n_layer", 1, 0, 1, VP_MAX_LAYERS, &a->layers);
    if (s == VP_OK)
        s = hf_whole(c, "vocab_size", 1, 0, 1, VP_FORWARD_MAX_VOCAB, &a->vocab);
    if (s == VP_OK)
        s = hf_whole(c, "n_positions", 1, 0, 1, VP_FORWARD_MAX_TOKENS, &a->n_ctx);
    if (s == VP_OK)
        s = hf_whole(c, "n_inner", 0, 0, 1, VP_FORWARD_MAX_FFN_WIDTH, &inner);
    if (s == VP_OK)
        s = hf_real(c, "layer_norm_epsilon", 1e-5, &a->eps);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 1, &a->tied);
    if (s == VP_OK)
        s = refuse_unscaled(c);
    if (s == VP_OK)
        s = hf_two_matrix_mlp(c, "activation_function", "gelu_new", a);
    if (s != VP_OK)
        return s;
    a->ffn_width = inner ? inner : 4 * a->width;
    if (a->ffn_width > VP_FORWARD_MAX_FFN_WIDTH)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: the MLP's width 4 n_embd = %zu is above %u", a->ffn_width,
                       VP_FORWARD_MAX_FFN_WIDTH);
    a->bias = VP_BIAS_ALL;
    a->head_bias = 0; /* GPT2LMHeadModel's lm_head: bias=False */
    a->norm = VP_NORM_LAYERNORM;
    a->positions = VP_POSITIONS_LEARNED;
    return VP_OK;
}
