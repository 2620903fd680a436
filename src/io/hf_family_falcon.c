/* Falcon's config.json (FalconConfig): LayerNorm, RoPE (rotate-half) on every
 * coordinate, query_key_value fused, multi-query or one k and v per head, or
 * in the new decoder (Falcon-40B, 180B) grouped by kv head; attention and the
 * MLP side by side on one norm (parallel_attn), on one norm each (the new
 * decoder's ln_attn and ln_mlp) or one after the other; bias on every
 * projection but the head, or on none. */

#include "hf_config_keys.h"
#include "hf_families.h"
#include "hf_rope.h"

const hf_key hf_falcon_keys[] = {
    {"ffn_hidden_size", HF_KEY_READ, NULL},
    {"num_kv_heads", HF_KEY_READ, NULL},
    {"multi_query", HF_KEY_READ, NULL},
    {"new_decoder_architecture", HF_KEY_READ, NULL},
    {"parallel_attn", HF_KEY_READ, NULL},
    {"num_ln_in_parallel_attn", HF_KEY_READ, NULL},
    {"alibi", HF_KEY_READ, NULL},
    {"apply_residual_connection_post_layernorm", HF_KEY_READ, NULL},
    {"bias", HF_KEY_READ, NULL},
    {"activation", HF_KEY_READ, NULL},
    {"layer_norm_epsilon", HF_KEY_READ, NULL},
    {"rope_parameters", HF_KEY_READ, NULL},
    {"rope_theta", HF_KEY_READ, NULL},
    {"rope_scaling", HF_KEY_READ, NULL},
    {"partial_rotary_factor", HF_KEY_READ, NULL},
    {"tie_word_embeddings", HF_KEY_READ, NULL},
    {"max_position_embeddings", HF_KEY_HARMLESS,
     "the longest context trained: default RoPE's frequencies do not depend on it"},
    {"pad_token_id", HF_KEY_HARMLESS, "Falcon's embedding has no padding row"},
    {NULL, HF_KEY_READ, NULL},
};

/* The forms varprof does not run, each refused by its key. */
static vp_status refuse_forms(hf_json *c)
{
    int alibi = 0;
    vp_status s = hf_boolean(c, "alibi", 0, &alibi);
    if (s != VP_OK)
        return s;
    if (alibi)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'alibi' true biases attention by distance instead of "
                       "rotating q and k; varprof reads Falcon with alibi false (RoPE)");
    return hf_refuse_set(c, "apply_residual_connection_post_layernorm",
                         "transformers' Falcon adds the branches to the stream before the norm "
                         "whatever it says, and varprof reads it so: false");
}

/* The new decoder (Falcon-40B, 180B): num_kv_heads groups, whatever
   multi_query says; _split_heads views query_key_value as (num_kv_heads,
   H / num_kv_heads + 2, hd), so the kv heads must divide H. Else
   multi_query: one k and one v after the H query heads; else a q, k and v
   per head, where transformers' reshape of the keys to num_kv_heads holds
   only for num_kv_heads = H */
static vp_status kv_heads(hf_json *c, int new_decoder, vp_hf_architecture *a)
{
    int multi_query = 1;
    size_t kv = a->heads;
    vp_status s = hf_boolean(c, "multi_query", 1, &multi_query);
    if (s == VP_OK && (new_decoder || !multi_query))
        s = hf_whole(c, "num_kv_heads", 0, a->heads, 1, VP_FORWARD_MAX_WIDTH, &kv);
    if (s != VP_OK)
        return s;
    if (new_decoder && (kv > a->heads || a->heads % kv != 0))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'num_kv_heads' %zu does not divide 'num_attention_heads' "
                       "%zu: the new decoder's query_key_value holds each kv head's group of "
                       "query heads, then its k and v",
                       kv, a->heads);
    if (new_decoder) {
        a->kv_heads = kv;
        return VP_OK;
    }
    if (!multi_query && kv != a->heads)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'num_kv_heads' %zu with multi_query false: the fused "
                       "query_key_value then holds a k and a v for each of the %zu heads, so "
                       "num_kv_heads must be %zu",
                       kv, a->heads, a->heads);
    a->kv_heads = multi_query ? 1 : a->heads;
    return VP_OK;
}

/* parallel_attn: one input_layernorm for both branches, or, in the new
   decoder with num_ln_in_parallel_attn 2 (its default there), ln_attn and
   ln_mlp, each branch its own; with 2 the old decoder reads
   input_layernorm, which it then lacks. The new decoder adds both branches
   to the stream whatever parallel_attn says, and its layer without
   parallel_attn reads norms it does not build (ln_attn, or with 1 an MLP
   input it never sets): refused. */
static vp_status residual(hf_json *c, int new_decoder, vp_hf_architecture *a)
{
    int parallel = 1;
    size_t norms = new_decoder ? 2 : 1;
    vp_status s = hf_boolean(c, "parallel_attn", 1, &parallel);
    if (s == VP_OK)
        s = hf_whole(c, "num_ln_in_parallel_attn", 0, norms, 1, 2, &norms);
    if (s != VP_OK)
        return s;
    if (new_decoder && !parallel)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'parallel_attn' false with 'new_decoder_architecture' "
                       "true: transformers' new decoder layer then reads norms it does not "
                       "build; varprof reads the new decoder with parallel_attn true");
    if (!new_decoder && parallel && norms != 1)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'num_ln_in_parallel_attn' 2 without the new decoder leaves "
                       "transformers' parallel layer without input_layernorm; varprof reads it "
                       "null or 1");
    a->placement = parallel ? VP_PARALLEL : VP_PRE_NORM;
    a->residual = !parallel   ? VP_RESIDUAL_SEQUENTIAL
                  : norms > 1 ? VP_RESIDUAL_PARALLEL_TWO_NORMS
                              : VP_RESIDUAL_PARALLEL_SHARED_NORM;
    return VP_OK;
}

vp_status hf_read_falcon(hf_json *c, vp_hf_architecture *a)
{
    int bias = 0, new_decoder = 0;
    vp_status s = refuse_forms(c);
    if (s == VP_OK)
        s = hf_boolean(c, "new_decoder_architecture", 0, &new_decoder);
    if (s == VP_OK)
        s = hf_width_and_heads(c, "hidden_size", "num_attention_heads", 0, a);
    if (s == VP_OK)
        s = hf_whole(c, "num_hidden_layers", 1, 0, 1, VP_MAX_LAYERS, &a->layers);
    if (s == VP_OK)
        s = hf_whole(c, "vocab_size", 1, 0, 1, VP_FORWARD_MAX_VOCAB, &a->vocab);
    if (s == VP_OK) /* FalconConfig's 4 hidden_size where null */
        s = hf_whole(c, "ffn_hidden_size", 0, 4 * a->width, 1, VP_FORWARD_MAX_FFN_WIDTH,
                     &a->ffn_width);
    if (s == VP_OK)
        s = kv_heads(c, new_decoder, a);
    if (s == VP_OK)
        s = residual(c, new_decoder, a);
    if (s == VP_OK)
        s = hf_two_matrix_mlp(c, "activation", "gelu", a);
    if (s == VP_OK)
        s = hf_real(c, "layer_norm_epsilon", 1e-5, &a->eps);
    if (s == VP_OK)
        s = hf_boolean(c, "bias", 0, &bias);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 1, &a->tied);
    a->positions = VP_POSITIONS_ROPE;
    if (s == VP_OK)
        s = hf_rope_read(c, 10000.0, a);
    if (s != VP_OK)
        return s;
    if (a->ffn_width > VP_FORWARD_MAX_FFN_WIDTH)
        return vp_fail(c->err, VP_EFORMAT, "config.json: the MLP's width %zu is above %u",
                       a->ffn_width, VP_FORWARD_MAX_FFN_WIDTH);
    a->bias = bias ? VP_BIAS_ALL : VP_BIAS_NONE;
    a->head_bias = 0; /* FalconForCausalLM's lm_head: bias=False */
    a->norm = VP_NORM_LAYERNORM;
    return VP_OK;
}
