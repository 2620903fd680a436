/* The tensor names of GPT-J (q, k, v and out_proj apart, fc_in/fc_out) and Falcon
 * (query_key_value fused group by group, dense, dense_h_to_4h/dense_4h_to_h,
 * input_layernorm or the new decoder's ln_attn and ln_mlp). */
#include <string.h>

#include "hf_names.h"

#define D DIM_D
#define NO DIM_NONE
#define GPTJ(hf, vp, rows, cols)                                                                   \
    {                                                                                              \
        "!transformer.h.%zu." hf, "layers.%zu." vp, rows, cols, HOW_COPY, 0, 1, WHEN_ALWAYS        \
    }
/* GPT-J: ln_1 shared by both branches; the MLP's and the head's biases alone */
static const name_row gptj_rows[] = {
    {"!transformer.wte.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    GPTJ("ln_1.weight", "attn_norm.weight", D, NO),
    GPTJ("ln_1.bias", "attn_norm.bias", D, NO),
    GPTJ("attn.q_proj.weight", "attn.q.weight", DIM_Q, D),
    GPTJ("attn.k_proj.weight", "attn.k.weight", DIM_KV, D),
    GPTJ("attn.v_proj.weight", "attn.v.weight", DIM_KV, D),
    GPTJ("attn.out_proj.weight", "attn.o.weight", D, DIM_Q),
    GPTJ("mlp.fc_in.weight", "mlp.fc1.weight", DIM_F, D),
    GPTJ("mlp.fc_in.bias", "mlp.fc1.bias", DIM_F, NO),
    GPTJ("mlp.fc_out.weight", "mlp.fc2.weight", D, DIM_F),
    GPTJ("mlp.fc_out.bias", "mlp.fc2.bias", D, NO),
    {"!transformer.ln_f.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!transformer.ln_f.bias", "final_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
    {"!lm_head.bias", "head.bias", DIM_V, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
};
#undef GPTJ

#define FALCON(hf, vp, rows, cols, when)                                                           \
    {                                                                                              \
        "!transformer.h.%zu." hf, "layers.%zu." vp, rows, cols, HOW_COPY, 0, 1, when               \
    }
#define QKV(part, name, rows)                                                                      \
    {"!transformer.h.%zu.self_attention.query_key_value.weight",                                   \
     "layers.%zu.attn." name ".weight",                                                            \
     rows,                                                                                         \
     D,                                                                                            \
     HOW_QKV_GROUPS,                                                                               \
     part,                                                                                         \
     3,                                                                                            \
     WHEN_ALWAYS},                                                                                 \
    {                                                                                              \
        "!transformer.h.%zu.self_attention.query_key_value.bias", "layers.%zu.attn." name ".bias", \
            rows, NO, HOW_QKV_GROUPS, part, 3, WHEN_ALL_BIAS                                       \
    }
/* Falcon: input_layernorm, shared in a parallel layer; post_attention_layernorm
   on the MLP's input in a sequential one; the new decoder's ln_attn and ln_mlp
   in its place with num_ln_in_parallel_attn 2; bias on every projection or
   none, never on the head */
static const name_row falcon_rows[] = {
    {"!transformer.word_embeddings.weight", "embed.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    FALCON("input_layernorm.weight", "attn_norm.weight", D, NO, WHEN_ONE_NORM),
    FALCON("input_layernorm.bias", "attn_norm.bias", D, NO, WHEN_ONE_NORM),
    FALCON("ln_attn.weight", "attn_norm.weight", D, NO, WHEN_TWO_NORMS),
    FALCON("ln_attn.bias", "attn_norm.bias", D, NO, WHEN_TWO_NORMS),
    FALCON("ln_mlp.weight", "mlp_norm.weight", D, NO, WHEN_TWO_NORMS),
    FALCON("ln_mlp.bias", "mlp_norm.bias", D, NO, WHEN_TWO_NORMS),
    QKV(0, "q", DIM_Q),
    QKV(1, "k", DIM_KV),
    QKV(2, "v", DIM_KV),
    FALCON("self_attention.dense.weight", "attn.o.weight", D, DIM_Q, WHEN_ALWAYS),
    FALCON("self_attention.dense.bias", "attn.o.bias", D, NO, WHEN_ALL_BIAS),
    FALCON("post_attention_layernorm.weight", "mlp_norm.weight", D, NO, WHEN_SEQUENTIAL),
    FALCON("post_attention_layernorm.bias", "mlp_norm.bias", D, NO, WHEN_SEQUENTIAL),
    FALCON("mlp.dense_h_to_4h.weight", "mlp.fc1.weight", DIM_F, D, WHEN_ALWAYS),
    FALCON("mlp.dense_h_to_4h.bias", "mlp.fc1.bias", DIM_F, NO, WHEN_ALL_BIAS),
    FALCON("mlp.dense_4h_to_h.weight", "mlp.fc2.weight", D, DIM_F, WHEN_ALWAYS),
    FALCON("mlp.dense_4h_to_h.bias", "mlp.fc2.bias", D, NO, WHEN_ALL_BIAS),
    {"!transformer.ln_f.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!transformer.ln_f.bias", "final_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"!lm_head.weight", "head.weight", DIM_V, D, HOW_COPY, 0, 1, WHEN_UNTIED},
};
#undef QKV
#undef FALCON
#undef D
#undef NO

/* buffers older GPT-J checkpoints kept (the causal mask); Falcon's tied
   head where a file stores it all the same */
static const char *const gptj_ignored[] = {"!transformer.h.%zu.attn.bias",
                                           "!transformer.h.%zu.attn.masked_bias", NULL};
static const char *const falcon_ignored[] = {"!lm_head.weight", NULL};

int hf_family_gptj_falcon(const vp_hf_architecture *a, family *f)
{
    if (strcmp(a->model_type, "gptj") == 0) {
        *f = (family){gptj_rows, sizeof gptj_rows / sizeof *gptj_rows, gptj_ignored};
        return 1;
    }
    if (strcmp(a->model_type, "falcon") == 0) {
        *f = (family){falcon_rows, sizeof falcon_rows / sizeof *falcon_rows, falcon_ignored};
        return 1;
    }
    return 0;
}
