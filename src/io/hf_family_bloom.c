/* BLOOM's config.json (BloomConfig): pre-norm LayerNorm blocks with biases
 * everywhere, a LayerNorm on the embedding (word_embeddings_layernorm), ALiBi
 * in place of positions, query_key_value fused head by head, BLOOM's tanh
 * GELU on an MLP four times the width, and the head tied to the embedding. */
#include <string.h>

#include "hf_config_keys.h"
#include "hf_families.h"

static const char NOT_READ[] = "not read by transformers' BLOOM (modeling_bloom.py)";

const hf_key hf_bloom_keys[] = {
    {"hidden_size", HF_KEY_READ, NULL},
    {"n_embed", HF_KEY_READ, NULL},
    {"n_head", HF_KEY_READ, NULL},
    {"num_attention_heads", HF_KEY_READ, NULL},
    {"n_layer", HF_KEY_READ, NULL},
    {"num_hidden_layers", HF_KEY_READ, NULL},
    {"vocab_size", HF_KEY_READ, NULL},
    {"layer_norm_epsilon", HF_KEY_READ, NULL},
    {"tie_word_embeddings", HF_KEY_READ, NULL},
    {"apply_residual_connection_post_layernorm", HF_KEY_REFUSED,
     "the normalised stream as the residual, in place of the stream itself, is a block varprof "
     "does not build; it reads BLOOM with false"},
    {"pretraining_tp", HF_KEY_HARMLESS,
     "with slow_but_exact, the output projections summed in that many slices: the same "
     "numbers to rounding"},
    {"slow_but_exact", HF_KEY_HARMLESS,
     "the output projections summed in pretraining_tp slices: the same numbers to rounding"},
    {"pad_token_id", HF_KEY_HARMLESS,
     "BLOOM's embedding has no padding row: every lookup gets its gradient"},
    {"unk_token_id", HF_KEY_HARMLESS, "a special token's id: the batch is the ids given"},
    {"n_inner", HF_KEY_HARMLESS, "not read: BLOOM's MLP is four times the width"},
    {"seq_length", HF_KEY_HARMLESS, "the training context: ALiBi has no table to size"},
    {"masked_softmax_fusion", HF_KEY_HARMLESS, NOT_READ},
    {"attention_softmax_in_fp32", HF_KEY_HARMLESS, NOT_READ},
    {"bias_dropout_fusion", HF_KEY_HARMLESS, NOT_READ},
    {"skip_bias_add", HF_KEY_HARMLESS, NOT_READ},
    {"skip_bias_add_qkv", HF_KEY_HARMLESS, NOT_READ},
    {"offset_alibi", HF_KEY_HARMLESS, NOT_READ},
    {NULL, HF_KEY_READ, NULL},
};

/* A size under either of its names (BloomConfig's attribute_map, and its
   n_embed for hidden_size); both given, they must agree */
static vp_status either(hf_json *c, const char *key, const char *other, size_t fallback, size_t hi,
                        size_t *out)
{
    size_t a = fallback, b = fallback;
    vp_status s = hf_whole(c, key, 0, fallback, 1, hi, &a);
    if (s == VP_OK)
        s = hf_whole(c, other, 0, fallback, 1, hi, &b);
    if (s != VP_OK)
        return s;
    if (hf_present(c, key) && hf_present(c, other) && a != b)
        return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' %zu and '%s' %zu disagree", key, a,
                       other, b);
    *out = hf_present(c, other) ? b : a;
    return VP_OK;
}

vp_status hf_read_bloom(hf_json *c, vp_hf_architecture *a)
{
    /* BloomConfig's defaults: 64 wide, 8 heads, 2 layers, 250880 tokens */
    vp_status s = either(c, "hidden_size", "n_embed", 64, VP_FORWARD_MAX_WIDTH, &a->width);
    if (s == VP_OK)
        s = either(c, "n_head", "num_attention_heads", 8, VP_FORWARD_MAX_WIDTH, &a->heads);
    if (s == VP_OK)
        s = either(c, "n_layer", "num_hidden_layers", 2, VP_MAX_LAYERS, &a->layers);
    if (s == VP_OK)
        s = hf_whole(c, "vocab_size", 0, 250880, 1, VP_FORWARD_MAX_VOCAB, &a->vocab);
    if (s == VP_OK)
        s = hf_real(c, "layer_norm_epsilon", 1e-5, &a->eps);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 1, &a->tied);
    if (s != VP_OK)
        return s;
    if (a->width % a->heads != 0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: %zu heads do not divide the width %zu; BLOOM's heads "
                       "are width / n_head wide",
                       a->heads, a->width);
    a->kv_heads = a->heads;
    a->head_dim = a->width / a->heads;
    a->ffn_width = 4 * a->width;
    /* bloom_gelu_forward: 0.5 x (1 + tanh(0.79788456 x (1 + 0.044715 x^2))) */
    a->mlp = VP_MLP_GELU_TANH;
    a->bias = VP_BIAS_ALL;
    a->norm = VP_NORM_LAYERNORM;
    a->placement = VP_PRE_NORM;
    a->positions = VP_POSITIONS_ALIBI;
    return VP_OK;
}
