/* The tensor tables of Llama's kin whose blocks need no new engine axis:
 * Qwen3 (per-head QK-norm), StarCoder2 (LayerNorm, biases, a two-matrix
 * MLP) and Phi-3 (fused qkv_proj and gate_up_proj). */
#include <string.h>

#include "hf_names.h"

#define D DIM_D
#define NO DIM_NONE
/* Qwen3: Llama's, with RMSNorm over each head of q and of k (before RoPE) */
static const name_row qwen3_rows[] = {
    {"embed_tokens.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.input_layernorm.weight", "layers.%zu.attn_norm.weight", D, NO, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_proj.weight", "layers.%zu.attn.q.weight", DIM_Q, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.k_proj.weight", "layers.%zu.attn.k.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.v_proj.weight", "layers.%zu.attn.v.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.o_proj.weight", "layers.%zu.attn.o.weight", D, DIM_Q, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_norm.weight", "layers.%zu.attn.q_norm.weight", DIM_HD, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    {"layers.%zu.self_attn.k_norm.weight", "layers.%zu.attn.k_norm.weight", DIM_HD, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    {"layers.%zu.post_attention_layernorm.weight", "layers.%zu.mlp_norm.weight", D, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    {"layers.%zu.mlp.gate_proj.weight", "layers.%zu.mlp.gate.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.up_proj.weight", "layers.%zu.mlp.up.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.down_proj.weight", "layers.%zu.mlp.down.weight", D, DIM_F, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"norm.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};

/* StarCoder2: LayerNorms with biases, every projection biased under
   use_bias, a two-matrix MLP c_fc, c_proj (nn.Linear, [out, in]) */
static const name_row starcoder2_rows[] = {
    {"embed_tokens.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.input_layernorm.weight", "layers.%zu.attn_norm.weight", D, NO, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.input_layernorm.bias", "layers.%zu.attn_norm.bias", D, NO, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_proj.weight", "layers.%zu.attn.q.weight", DIM_Q, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.q_proj.bias", "layers.%zu.attn.q.bias", DIM_Q, NO, HOW_COPY, 0, 1,
     WHEN_ALL_BIAS},
    {"layers.%zu.self_attn.k_proj.weight", "layers.%zu.attn.k.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.k_proj.bias", "layers.%zu.attn.k.bias", DIM_KV, NO, HOW_COPY, 0, 1,
     WHEN_ALL_BIAS},
    {"layers.%zu.self_attn.v_proj.weight", "layers.%zu.attn.v.weight", DIM_KV, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.v_proj.bias", "layers.%zu.attn.v.bias", DIM_KV, NO, HOW_COPY, 0, 1,
     WHEN_ALL_BIAS},
    {"layers.%zu.self_attn.o_proj.weight", "layers.%zu.attn.o.weight", D, DIM_Q, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.o_proj.bias", "layers.%zu.attn.o.bias", D, NO, HOW_COPY, 0, 1,
     WHEN_ALL_BIAS},
    {"layers.%zu.post_attention_layernorm.weight", "layers.%zu.mlp_norm.weight", D, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    {"layers.%zu.post_attention_layernorm.bias", "layers.%zu.mlp_norm.bias", D, NO, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.c_fc.weight", "layers.%zu.mlp.fc1.weight", DIM_F, D, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.c_fc.bias", "layers.%zu.mlp.fc1.bias", DIM_F, NO, HOW_COPY, 0, 1,
     WHEN_ALL_BIAS},
    {"layers.%zu.mlp.c_proj.weight", "layers.%zu.mlp.fc2.weight", D, DIM_F, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.c_proj.bias", "layers.%zu.mlp.fc2.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALL_BIAS},
    {"norm.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"norm.bias", "final_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};

/* Phi-3: Llama's blocks with q, k, v fused in qkv_proj and gate, up in
   gate_up_proj, each split by rows */
static const name_row phi3_rows[] = {
    {"embed_tokens.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"layers.%zu.input_layernorm.weight", "layers.%zu.attn_norm.weight", D, NO, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.qkv_proj.weight", "layers.%zu.attn.q.weight", DIM_Q, D, HOW_QKV, 0, 3,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.qkv_proj.weight", "layers.%zu.attn.k.weight", DIM_KV, D, HOW_QKV, 1, 3,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.qkv_proj.weight", "layers.%zu.attn.v.weight", DIM_KV, D, HOW_QKV, 2, 3,
     WHEN_ALWAYS},
    {"layers.%zu.self_attn.o_proj.weight", "layers.%zu.attn.o.weight", D, DIM_Q, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"layers.%zu.post_attention_layernorm.weight", "layers.%zu.mlp_norm.weight", D, NO, HOW_COPY, 0,
     1, WHEN_ALWAYS},
    {"layers.%zu.mlp.gate_up_proj.weight", "layers.%zu.mlp.gate.weight", DIM_F, D, HOW_SLICE, 0, 2,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.gate_up_proj.weight", "layers.%zu.mlp.up.weight", DIM_F, D, HOW_SLICE, 1, 2,
     WHEN_ALWAYS},
    {"layers.%zu.mlp.down_proj.weight", "layers.%zu.mlp.down.weight", D, DIM_F, HOW_COPY, 0, 1,
     WHEN_ALWAYS},
    {"norm.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};
#undef D
#undef NO

#define FAMILY(rows, ignored) ((family){(rows), sizeof(rows) / sizeof *(rows), (ignored)})

int hf_family_llama_kin(const vp_hf_architecture *a, const char *const *ignored, family *f)
{
    if (strcmp(a->model_type, "qwen3") == 0)
        *f = FAMILY(qwen3_rows, ignored);
    else if (strcmp(a->model_type, "starcoder2") == 0)
        *f = FAMILY(starcoder2_rows, ignored);
    else if (strcmp(a->model_type, "phi3") == 0)
        *f = FAMILY(phi3_rows, ignored);
    else
        return 0;
    return 1;
}
