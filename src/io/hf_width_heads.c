/* The width and heads under a family's names, and the sizes and grouped
   heads Llama-like configs share. */
#include <cjson/cJSON.h>
#include <string.h>

#include "hf_families.h"

vp_status hf_width_and_heads(hf_json *c, const char *width_key, const char *heads_key,
                             int has_head_dim, vp_hf_architecture *a)
{
    vp_status s = hf_whole(c, width_key, 1, 0, 1, VP_FORWARD_MAX_WIDTH, &a->width);
    if (s == VP_OK)
        s = hf_whole(c, heads_key, 1, 0, 1, VP_FORWARD_MAX_WIDTH, &a->heads);
    size_t other = a->width;
    if (s == VP_OK && strcmp(width_key, "hidden_size") != 0)
        s = hf_whole(c, "hidden_size", 0, a->width, 1, VP_FORWARD_MAX_WIDTH, &other);
    if (s == VP_OK && other != a->width)
        return vp_fail(c->err, VP_EFORMAT, "config.json: '%s' %zu and 'hidden_size' %zu disagree",
                       width_key, a->width, other);
    if (s != VP_OK)
        return s;
    if (a->width % a->heads != 0 && !(has_head_dim && cJSON_IsNumber(hf_field(c, "head_dim"))))
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: '%s' %zu does not divide the width '%s' %zu", heads_key,
                       a->heads, width_key, a->width);
    a->kv_heads = a->heads;
    a->head_dim = a->width / a->heads; /* the family's reader reads head_dim where given */
    return VP_OK;
}

vp_status hf_decoder_sizes(hf_json *c, int has_head_dim, const char *ffn_key, vp_hf_architecture *a)
{
    vp_status s = hf_width_and_heads(c, "hidden_size", "num_attention_heads", has_head_dim, a);
    if (s == VP_OK)
        s = hf_whole(c, "num_hidden_layers", 1, 0, 1, VP_MAX_LAYERS, &a->layers);
    if (s == VP_OK)
        s = hf_whole(c, "vocab_size", 1, 0, 1, VP_FORWARD_MAX_VOCAB, &a->vocab);
    if (s == VP_OK)
        s = hf_whole(c, ffn_key, 1, 0, 1, VP_FORWARD_MAX_FFN_WIDTH, &a->ffn_width);
    return s;
}

vp_status hf_grouped_heads(hf_json *c, size_t kv_heads, size_t head_dim, vp_hf_architecture *a)
{
    vp_status s = hf_whole(c, "num_key_value_heads", 0, kv_heads ? kv_heads : a->heads, 1,
                           VP_FORWARD_MAX_WIDTH, &a->kv_heads);
    if (s == VP_OK)
        s = hf_whole(c, "head_dim", 0, head_dim ? head_dim : a->width / a->heads, 1,
                     VP_FORWARD_MAX_WIDTH, &a->head_dim);
    if (s != VP_OK)
        return s;
    if (a->kv_heads > a->heads || a->heads % a->kv_heads != 0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'num_key_value_heads' %zu does not divide "
                       "'num_attention_heads' %zu",
                       a->kv_heads, a->heads);
    if (a->heads * a->head_dim > VP_FORWARD_MAX_WIDTH)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'num_attention_heads' %zu x 'head_dim' %zu is above %u",
                       a->heads, a->head_dim, VP_FORWARD_MAX_WIDTH);
    return VP_OK;
}
