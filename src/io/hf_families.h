/* The families' config.json readers: each fills vp_hf_architecture from its
 * keys (hf_config_keys.c lists them) with its config class's defaults. */
#ifndef VARPROF_IO_HF_FAMILIES_H
#define VARPROF_IO_HF_FAMILIES_H

#include "hf_json.h"

/* The width and the heads under the family's names; a second name for the
   width (hidden_size) must agree. The heads must divide the width unless
   the family has a head_dim and the file gives one. */
vp_status hf_width_and_heads(hf_json *c, const char *width_key, const char *heads_key,
                             int has_head_dim, vp_hf_architecture *a);

/* The sizes every Llama-like config names alike: hidden_size and
   num_attention_heads (hf_width_and_heads, has_head_dim as there),
   num_hidden_layers, vocab_size, and the MLP's width under ffn_key
   (intermediate_size; OPT's ffn_dim), each required and in its range. */
vp_status hf_decoder_sizes(hf_json *c, int has_head_dim, const char *ffn_key,
                           vp_hf_architecture *a);

/* After hf_decoder_sizes: num_key_value_heads (kv_heads where absent; 0
   for the heads) and head_dim (head_dim where absent; 0 for width /
   heads), the kv heads dividing the heads and heads x head_dim within
   VP_FORWARD_MAX_WIDTH, each failure VP_EFORMAT naming the keys. */
vp_status hf_grouped_heads(hf_json *c, size_t kv_heads, size_t head_dim, vp_hf_architecture *a);

/* gpt2 */
vp_status hf_read_gpt2(hf_json *c, vp_hf_architecture *a);

/* opt: Post-LN or pre-norm by do_layer_norm_before */
vp_status hf_read_opt(hf_json *c, vp_hf_architecture *a);

/* gpt_neox (hf_family_neox.c) */
vp_status hf_read_gpt_neox(hf_json *c, vp_hf_architecture *a);

/* phi, Phi-1 and Phi-2 (hf_family_phi.c) */
vp_status hf_read_phi(hf_json *c, vp_hf_architecture *a);

/* gptj: one shared norm, every-two RoPE on rotary_dim, the MLP's and the
   head's biases alone (hf_family_gptj.c) */
vp_status hf_read_gptj(hf_json *c, vp_hf_architecture *a);

/* falcon: multi-query, one k and v per head or the new decoder's groups,
   parallel_attn on one norm or two (ln_attn, ln_mlp) or sequential; alibi
   refused by name (hf_family_falcon.c) */
vp_status hf_read_falcon(hf_json *c, vp_hf_architecture *a);

/* llama, mistral, qwen2, olmo2 and gemma2 */
vp_status hf_read_llama(hf_json *c, vp_hf_architecture *a);

/* Which layers slide (hf_layer_types.c): config.json's layer_types where
   given and not null, else the family's rule, layer l sliding when l >=
   from and, with period > 0, (l + 1) % period != 0 (Qwen2's
   max_window_layers, Gemma 2's 2, Gemma 3's sliding_window_pattern).
   Sets a->layer_kinds (a->layer_kinds_given where they differ), and
   has[VP_LAYER_FULL], has[VP_LAYER_SLIDING] to whether any layer is of
   that kind. VP_EFORMAT: layer_types not a list of a->layers entries, each
   full_attention or sliding_attention, or both kinds over more than
   VP_HF_MOST_LAYER_KINDS layers. */
vp_status hf_layer_types(hf_json *c, vp_hf_architecture *a, size_t from, size_t period, int has[2]);

/* pad_token_id into a->pad_token_id (nn.Embedding's padding_idx, a
   negative id counted from the end); absent, fallback (-1: none); null,
   none. VP_EFORMAT when not a whole number within the vocabulary. */
vp_status hf_pad_token(hf_json *c, long fallback, vp_hf_architecture *a);

/* qwen3: Llama's reader, then per-head QK-norm, head_dim 128 by default
   and Qwen3's sliding-window rule (hf_family_qwen3.c) */
vp_status hf_read_qwen3(hf_json *c, vp_hf_architecture *a);

/* starcoder2: LayerNorm with bias, use_bias, a two-matrix MLP */
vp_status hf_read_starcoder2(hf_json *c, vp_hf_architecture *a);

/* phi3: Llama's blocks under Phi-3's keys; longrope refused by name */
vp_status hf_read_phi3(hf_json *c, vp_hf_architecture *a);

/* The two-matrix MLP config.json's `key` names (fallback where absent), as
   transformers' ACT2FN spells it: gelu_new and gelu_pytorch_tanh the tanh
   GELU, gelu the exact one, relu (hf_activation.c). VP_EFORMAT naming the
   key for any other. */
vp_status hf_two_matrix_mlp(hf_json *c, const char *key, const char *fallback,
                            vp_hf_architecture *a);

/* Gemma's gated MLP from hidden_activation (gelu_pytorch_tanh where absent,
   Gemma2Config's and Gemma3TextConfig's default): the tanh GeGLU, or erf's
   for gelu; VP_EFORMAT naming the key for any other (hf_activation.c). */
vp_status hf_gemma_mlp(hf_json *c, vp_hf_architecture *a);

/* bloom: pre-norm LayerNorm blocks, ALiBi, the embedding's LayerNorm, a tied
   head (hf_family_bloom.c) */
vp_status hf_read_bloom(hf_json *c, vp_hf_architecture *a);

/* cohere: parallel branches on one LayerNorm without bias, interleaved RoPE,
   logit_scale, use_qk_norm's LayerNorm per head; attention_bias refused by name */
vp_status hf_read_cohere(hf_json *c, vp_hf_architecture *a);

/* gemma3_text: Gemma 2's blocks, a (1 + w) QK-norm per head, the sliding
   layers' local RoPE base and the full layers' global one with its linear
   scaling; another RoPE type refused by name (hf_family_gemma3.c) */
vp_status hf_read_gemma3(hf_json *c, vp_hf_architecture *a);

#endif
