/* OPT's table of tensor names: model.decoder's embeddings, learned positions
 * (two rows past the positions, OPT's offset), project_in and project_out
 * where the embedding is narrower than the stream, and its layers. */
#include "hf_names.h"

#define D DIM_D
#define NO DIM_NONE
#define LAYER(hf, vp, rows, cols, when)                                                            \
    {                                                                                              \
        "decoder.layers.%zu." hf, "layers.%zu." vp, rows, cols, HOW_COPY, 0, 1, when               \
    }
/* The per-layer norms sit where do_layer_norm_before says: on the branches'
   inputs (pre-norm) or on the stream after each residual sum (Post-LN); in
   either, self_attn_layer_norm is the attention sub-block's and the layer's
   final_layer_norm the MLP's. */
static const name_row opt_rows[] = {
    {"decoder.embed_tokens.weight", "embed.weight", DIM_V, DIM_E, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"decoder.embed_positions.weight", "pos_embed.weight", DIM_CTX, D, HOW_COPY, 0, 1, WHEN_ALWAYS},
    {"decoder.project_in.weight", "project_in.weight", D, DIM_E, HOW_COPY, 0, 1, WHEN_PROJECTED},
    {"decoder.project_out.weight", "project_out.weight", DIM_E, D, HOW_COPY, 0, 1, WHEN_PROJECTED},
    LAYER("self_attn_layer_norm.weight", "attn_norm.weight", D, NO, WHEN_ALWAYS),
    LAYER("self_attn_layer_norm.bias", "attn_norm.bias", D, NO, WHEN_ALWAYS),
    LAYER("self_attn.q_proj.weight", "attn.q.weight", D, D, WHEN_ALWAYS),
    LAYER("self_attn.k_proj.weight", "attn.k.weight", D, D, WHEN_ALWAYS),
    LAYER("self_attn.v_proj.weight", "attn.v.weight", D, D, WHEN_ALWAYS),
    LAYER("self_attn.q_proj.bias", "attn.q.bias", D, NO, WHEN_ALL_BIAS),
    LAYER("self_attn.k_proj.bias", "attn.k.bias", D, NO, WHEN_ALL_BIAS),
    LAYER("self_attn.v_proj.bias", "attn.v.bias", D, NO, WHEN_ALL_BIAS),
    LAYER("self_attn.out_proj.weight", "attn.o.weight", D, D, WHEN_ALWAYS),
    LAYER("self_attn.out_proj.bias", "attn.o.bias", D, NO, WHEN_ALL_BIAS),
    LAYER("final_layer_norm.weight", "mlp_norm.weight", D, NO, WHEN_ALWAYS),
    LAYER("final_layer_norm.bias", "mlp_norm.bias", D, NO, WHEN_ALWAYS),
    LAYER("fc1.weight", "mlp.fc1.weight", DIM_F, D, WHEN_ALWAYS),
    LAYER("fc1.bias", "mlp.fc1.bias", DIM_F, NO, WHEN_ALL_BIAS),
    LAYER("fc2.weight", "mlp.fc2.weight", D, DIM_F, WHEN_ALWAYS),
    LAYER("fc2.bias", "mlp.fc2.bias", D, NO, WHEN_ALL_BIAS),
    {"decoder.final_layer_norm.weight", "final_norm.weight", D, NO, HOW_COPY, 0, 1,
     WHEN_FINAL_NORM},
    {"decoder.final_layer_norm.bias", "final_norm.bias", D, NO, HOW_COPY, 0, 1, WHEN_FINAL_NORM},
    {"!lm_head.weight", "head.weight", DIM_V, DIM_E, HOW_COPY, 0, 1, WHEN_UNTIED},
};
#undef LAYER
#undef D
#undef NO

/* a tied checkpoint may still store the head, the embedding's copy */
static const char *const opt_ignored[] = {"!lm_head.weight", NULL};

family hf_family_opt(void)
{
    return (family){opt_rows, sizeof opt_rows / sizeof *opt_rows, opt_ignored};
}
