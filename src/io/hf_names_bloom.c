/* BLOOM's table of tensor names: word_embeddings and its LayerNorm, h.N's
 * blocks with query_key_value fused head by head ((heads, 3, head_dim), as
 * GPT-NeoX's), ln_f, and lm_head where the head is not tied. */
#include "hf_names.h"

#define D DIM_D
#define NO DIM_NONE
#define LAYER(hf, vp, rows, cols)                                                                  \
    {                                                                                              \
        "h.%zu." hf, "layers.%zu." vp, rows, cols, HOW_COPY, 0, 1, WHEN_ALWAYS                     \
    }
#define QKV(part, name)                                                                            \
    {"h.%zu.self_attention.query_key_value.weight",                                                \
     "layers.%zu.attn." name ".weight",                                                            \
     DIM_Q,                                                                                        \
     D,                                                                                            \
     HOW_QKV_HEADS,                                                                                \
     part,                                                                                         \
     3,                                                                                            \
     WHEN_ALWAYS},                                                                                 \
    {                                                                                              \
        "h.%zu.self_attention.query_key_value.bias", "layers.%zu.attn." name ".bias", DIM_Q, NO,   \
            HOW_QKV_HEADS, part, 3, WHEN_ALWAYS                                                    \
    }
static const name_row bloom_rows[] = {
    {"word_embeddings.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"word_embeddings_layernorm.weight", "embed_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"word_embeddings_layernorm.bias", "embed_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    LAYER("input_layernorm.weight", "attn_norm.weight", D, NO),
    LAYER("input_layernorm.bias", "attn_norm.bias", D, NO),
    QKV(0, "q"),
    QKV(1, "k"),
    QKV(2, "v"),
    LAYER("self_attention.dense.weight", "attn.o.weight", D, DIM_Q),
    LAYER("self_attention.dense.bias", "attn.o.bias", D, NO),
    LAYER("post_attention_layernorm.weight", "mlp_norm.weight", D, NO),
    LAYER("post_attention_layernorm.bias", "mlp_norm.bias", D, NO),
    LAYER("mlp.dense_h_to_4h.weight", "mlp.fc1.weight", DIM_F, D),
    LAYER("mlp.dense_h_to_4h.bias", "mlp.fc1.bias", DIM_F, NO),
    LAYER("mlp.dense_4h_to_h.weight", "mlp.fc2.weight", D, DIM_F),
    LAYER("mlp.dense_4h_to_h.bias", "mlp.fc2.bias", D, NO),
    {"ln_f.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"ln_f.bias", "final_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};
#undef QKV
#undef LAYER

/* a tied checkpoint may still store lm_head.weight, the embedding's copy */
static const char *const bloom_ignored[] = {"!lm_head.weight", NULL};

family hf_family_bloom(void)
{
    return (family){bloom_rows, sizeof bloom_rows / sizeof *bloom_rows, bloom_ignored};
}
