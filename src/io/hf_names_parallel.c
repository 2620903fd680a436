/* The tensor names of the families whose layers can run attention and the MLP side by
 * side: GPT-NeoX (query_key_value fused head by head), Phi-1/2 and Cohere. */
#include <string.h>

#include "hf_names.h"

#define D DIM_D
#define NO DIM_NONE
#define QKV(part, name)                                                                            \
    {"!gpt_neox.layers.%zu.attention.query_key_value.weight",                                      \
     "layers.%zu.attn." name ".weight",                                                            \
     DIM_Q,                                                                                        \
     D,                                                                                            \
     HOW_QKV_HEADS,                                                                                \
     part,                                                                                         \
     3,                                                                                            \
     WHEN_ALWAYS},                                                                                 \
    {                                                                                              \
        "!gpt_neox.layers.%zu.attention.query_key_value.bias", "layers.%zu.attn." name ".bias",    \
            DIM_Q, NO, HOW_QKV_HEADS, part, 3, WHEN_ALWAYS                                         \
    }
/* GPT-NeoX: input_layernorm on attention's input, post_attention_layernorm on the
   MLP's (beside it in a parallel layer, after attention in a sequential one) */
static const name_row gpt_neox_rows[] = {
    {"!gpt_neox.embed_in.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!gpt_neox.layers.%zu.input_layernorm.weight", "layers.%zu.attn_norm.weight", D, NO, HOW_COPY,
     0, 1, WHEN_ALWAYS},
    {"!gpt_neox.layers.%zu.input_layernorm.bias", "layers.%zu.attn_norm.bias", D, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    QKV(0, "q"),
    QKV(1, "k"),
    QKV(2, "v"),
    {"!gpt_neox.layers.%zu.attention.dense.weight", "layers.%zu.attn.o.weight", D, DIM_Q, HOW_COPY,
     0, 1, WHEN_ALWAYS},
    {"!gpt_neox.layers.%zu.attention.dense.bias", "layers.%zu.attn.o.bias", D, NO, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"!gpt_neox.layers.%zu.post_attention_layernorm.weight", "layers.%zu.mlp_norm.weight", D, NO,
     HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!gpt_neox.layers.%zu.post_attention_layernorm.bias", "layers.%zu.mlp_norm.bias", D, NO,
     HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!gpt_neox.layers.%zu.mlp.dense_h_to_4h.weight", "layers.%zu.mlp.fc1.weight", DIM_F, D,
     HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!gpt_neox.layers.%zu.mlp.dense_h_to_4h.bias", "layers.%zu.mlp.fc1.bias", DIM_F, NO, HOW_COPY,
     0, 1, WHEN_ALWAYS},
    {"!gpt_neox.layers.%zu.mlp.dense_4h_to_h.weight", "layers.%zu.mlp.fc2.weight", D, DIM_F,
     HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!gpt_neox.layers.%zu.mlp.dense_4h_to_h.bias", "layers.%zu.mlp.fc2.bias", D, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    {"!gpt_neox.final_layer_norm.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!gpt_neox.final_layer_norm.bias", "final_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!embed_out.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};
#undef QKV

/* Phi-1 and Phi-2: one input_layernorm shared by both branches, dense the
   attention's output, biases everywhere and on the head */
#define PHI(hf, vp, rows, cols)                                                                    \
    {                                                                                              \
        "layers.%zu." hf, "layers.%zu." vp, rows, cols, HOW_COPY, 0, 1, WHEN_ALWAYS                \
    }
static const name_row phi_rows[] = {
    {"embed_tokens.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    PHI("input_layernorm.weight", "attn_norm.weight", D, NO),
    PHI("input_layernorm.bias", "attn_norm.bias", D, NO),
    PHI("self_attn.q_proj.weight", "attn.q.weight", DIM_Q, D),
    PHI("self_attn.q_proj.bias", "attn.q.bias", DIM_Q, NO),
    PHI("self_attn.k_proj.weight", "attn.k.weight", DIM_KV, D),
    PHI("self_attn.k_proj.bias", "attn.k.bias", DIM_KV, NO),
    PHI("self_attn.v_proj.weight", "attn.v.weight", DIM_KV, D),
    PHI("self_attn.v_proj.bias", "attn.v.bias", DIM_KV, NO),
    PHI("self_attn.dense.weight", "attn.o.weight", D, DIM_Q),
    PHI("self_attn.dense.bias", "attn.o.bias", D, NO),
    PHI("mlp.fc1.weight", "mlp.fc1.weight", DIM_F, D),
    PHI("mlp.fc1.bias", "mlp.fc1.bias", DIM_F, NO),
    PHI("mlp.fc2.weight", "mlp.fc2.weight", D, DIM_F),
    PHI("mlp.fc2.bias", "mlp.fc2.bias", D, NO),
    {"final_layernorm.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"final_layernorm.bias", "final_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
    {"!lm_head.bias", "head.bias", DIM_V, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
};
#undef PHI

/* Cohere: one input_layernorm (a weight, no bias) shared by both branches,
   Llama's projections, with use_qk_norm q_norm and k_norm (a weight per head,
   [heads, head_dim]), model.norm; the head tied unless lm_head is stored */
#define COHERE(hf, vp, rows, cols)                                                                 \
    {                                                                                              \
        "layers.%zu." hf, "layers.%zu." vp, rows, cols, HOW_COPY, 0, 1, WHEN_ALWAYS                \
    }
static const name_row cohere_rows[] = {
    {"embed_tokens.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    COHERE("input_layernorm.weight", "attn_norm.weight", D, NO),
    COHERE("self_attn.q_proj.weight", "attn.q.weight", DIM_Q, D),
    COHERE("self_attn.k_proj.weight", "attn.k.weight", DIM_KV, D),
    COHERE("self_attn.v_proj.weight", "attn.v.weight", DIM_KV, D),
    COHERE("self_attn.o_proj.weight", "attn.o.weight", D, DIM_Q),
    {"layers.%zu.self_attn.q_norm.weight", "layers.%zu.attn.q_norm.weight", DIM_H, DIM_HD, HOW_COPY,
     0, 1, WHEN_QK_NORM},
    {"layers.%zu.self_attn.k_norm.weight", "layers.%zu.attn.k_norm.weight", DIM_H_KV, DIM_HD,
     HOW_COPY, 0, 1, WHEN_QK_NORM},
    COHERE("mlp.gate_proj.weight", "mlp.gate.weight", DIM_F, D),
    COHERE("mlp.up_proj.weight", "mlp.up.weight", DIM_F, D),
    COHERE("mlp.down_proj.weight", "mlp.down.weight", D, DIM_F),
    {"norm.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};
#undef COHERE
#undef D
#undef NO

static const char *const phi_ignored[] = {"layers.%zu.self_attn.rotary_emb.inv_freq", NULL};

/* a tied checkpoint's copy of the embedding, as Llama's */
static const char *const cohere_ignored[] = {"layers.%zu.self_attn.rotary_emb.inv_freq",
                                             "!lm_head.weight", NULL};

/* buffers older checkpoints kept: the causal mask and the rotary frequencies */
static const char *const gpt_neox_ignored[] = {
    "!gpt_neox.layers.%zu.attention.bias", "!gpt_neox.layers.%zu.attention.masked_bias",
    "!gpt_neox.layers.%zu.attention.rotary_emb.inv_freq", NULL};

int hf_family_parallel(const vp_hf_architecture *a, family *f)
{
    if (strcmp(a->model_type, "gpt_neox") == 0) {
        *f =
            (family){gpt_neox_rows, sizeof gpt_neox_rows / sizeof *gpt_neox_rows, gpt_neox_ignored};
        return 1;
    }
    if (strcmp(a->model_type, "phi") == 0) {
        *f = (family){phi_rows, sizeof phi_rows / sizeof *phi_rows, phi_ignored};
        return 1;
    }
    if (strcmp(a->model_type, "cohere") == 0) {
        *f = (family){cohere_rows, sizeof cohere_rows / sizeof *cohere_rows, cohere_ignored};
        return 1;
    }
    return 0;
}
