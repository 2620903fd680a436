/* config.json's keys, family by family: read, harmless (with why) or
 * refused (with why). varprof-maths(7) and varprof(1) print these lists. */
#include "hf_config_keys.h"

#include <stdio.h>
#include <string.h>

#define READ(name)                                                                                 \
    {                                                                                              \
        name, HF_KEY_READ, NULL                                                                    \
    }
#define HARMLESS(name, why)                                                                        \
    {                                                                                              \
        name, HF_KEY_HARMLESS, why                                                                 \
    }
#define REFUSED(name, why)                                                                         \
    {                                                                                              \
        name, HF_KEY_REFUSED, why                                                                  \
    }

static const char GENERATION[] = "a generation setting: no forward or backward number uses it";
static const char DROPOUT[] = "dropout: off, as transformers runs a model in evaluation";
static const char PROVENANCE[] = "where and how the file was made";
static const char HEADS_OF_OTHER_TASKS[] = "a setting of another task's head, not the language "
                                           "model's";

/* Keys of every configuration class (transformers' PretrainedConfig). */
const hf_key hf_common_keys[] = {
    READ("model_type"),
    HARMLESS("architectures", "the model class; model_type decides the family"),
    HARMLESS("transformers_version", PROVENANCE),
    HARMLESS("_name_or_path", PROVENANCE),
    HARMLESS("_commit_hash", PROVENANCE),
    HARMLESS("torch_dtype", "the dtype the tensors were saved in: varprof reads each tensor's "
                            "own dtype and computes in float32"),
    HARMLESS("dtype", "the dtype the tensors were saved in: varprof reads each tensor's own "
                      "dtype and computes in float32"),
    HARMLESS("bos_token_id", "a special token's id: the batch is the ids given"),
    HARMLESS("eos_token_id", "a special token's id: the batch is the ids given"),
    HARMLESS("sep_token_id", "a special token's id: the batch is the ids given"),
    HARMLESS("decoder_start_token_id", "a special token's id: the batch is the ids given"),
    HARMLESS("use_cache", "the generation cache"),
    HARMLESS("cache_implementation", "the generation cache"),
    HARMLESS("initializer_range", "the scale of a fresh model's weights; a checkpoint's are read"),
    HARMLESS("init_std", "the scale of a fresh model's weights; a checkpoint's are read"),
    HARMLESS("attention_dropout", DROPOUT),
    HARMLESS("hidden_dropout", DROPOUT),
    HARMLESS("dropout", DROPOUT),
    HARMLESS("attn_pdrop", DROPOUT),
    HARMLESS("embd_pdrop", DROPOUT),
    HARMLESS("resid_pdrop", DROPOUT),
    HARMLESS("classifier_dropout", DROPOUT),
    HARMLESS("embedding_dropout", DROPOUT),
    HARMLESS("residual_dropout", DROPOUT),
    HARMLESS("_attn_implementation", "which attention kernel: the same numbers to rounding"),
    HARMLESS("_attn_implementation_autoset", "which attention kernel"),
    HARMLESS("attn_implementation", "which attention kernel: the same numbers to rounding"),
    HARMLESS("gradient_checkpointing", "recomputation in training: the same numbers"),
    HARMLESS("chunk_size_feed_forward", "feed-forward chunking: the same numbers"),
    HARMLESS("return_dict", "the outputs' packaging"),
    HARMLESS("output_hidden_states", "the outputs' packaging"),
    HARMLESS("output_attentions", "the outputs' packaging"),
    HARMLESS("torchscript", "the outputs' packaging"),
    HARMLESS("use_bfloat16", "a TensorFlow setting"),
    HARMLESS("tf_legacy_loss", "a TensorFlow setting"),
    HARMLESS("is_decoder", "the model is a decoder either way"),
    HARMLESS("tie_encoder_decoder", "an encoder-decoder's setting"),
    HARMLESS("cross_attention_hidden_size", "an encoder-decoder's setting"),
    HARMLESS("finetuning_task", HEADS_OF_OTHER_TASKS),
    HARMLESS("id2label", HEADS_OF_OTHER_TASKS),
    HARMLESS("label2id", HEADS_OF_OTHER_TASKS),
    HARMLESS("num_labels", HEADS_OF_OTHER_TASKS),
    HARMLESS("problem_type", HEADS_OF_OTHER_TASKS),
    HARMLESS("task_specific_params", HEADS_OF_OTHER_TASKS),
    HARMLESS("tokenizer_class", "the tokenizer: the batch is the ids given"),
    HARMLESS("prefix", "the tokenizer: the batch is the ids given"),
    HARMLESS("max_length", GENERATION),
    HARMLESS("min_length", GENERATION),
    HARMLESS("do_sample", GENERATION),
    HARMLESS("early_stopping", GENERATION),
    HARMLESS("num_beams", GENERATION),
    HARMLESS("num_beam_groups", GENERATION),
    HARMLESS("diversity_penalty", GENERATION),
    HARMLESS("temperature", GENERATION),
    HARMLESS("top_k", GENERATION),
    HARMLESS("top_p", GENERATION),
    HARMLESS("typical_p", GENERATION),
    HARMLESS("repetition_penalty", GENERATION),
    HARMLESS("length_penalty", GENERATION),
    HARMLESS("no_repeat_ngram_size", GENERATION),
    HARMLESS("encoder_no_repeat_ngram_size", GENERATION),
    HARMLESS("bad_words_ids", GENERATION),
    HARMLESS("num_return_sequences", GENERATION),
    HARMLESS("output_scores", GENERATION),
    HARMLESS("return_dict_in_generate", GENERATION),
    HARMLESS("forced_bos_token_id", GENERATION),
    HARMLESS("forced_eos_token_id", GENERATION),
    HARMLESS("remove_invalid_values", GENERATION),
    HARMLESS("exponential_decay_length_penalty", GENERATION),
    HARMLESS("suppress_tokens", GENERATION),
    HARMLESS("begin_suppress_tokens", GENERATION),
    REFUSED("quantization_config", "the weights are quantised; varprof reads float weights"),
    REFUSED("pruned_heads", "heads were pruned; varprof runs every head of every layer"),
    REFUSED("is_encoder_decoder", "varprof runs decoders alone"),
    REFUSED("add_cross_attention", "cross-attention needs an encoder; varprof runs decoders alone"),
    REFUSED("use_bidirectional_attention", "varprof's attention is causal"),
    {NULL, HF_KEY_READ, NULL},
};

/* The sizes hf_decoder_sizes reads, required, for every family whose
   reader calls it (or reads the four as it does, Falcon's); the MLP's
   width key is each family's own (intermediate_size, OPT's ffn_dim). A
   family that does not read all four keeps its own rows (GPT-2's n_embd,
   BLOOM's two spellings). */
const hf_key hf_decoder_size_keys[] = {
    READ("hidden_size"), READ("num_attention_heads"), READ("num_hidden_layers"),
    READ("vocab_size"),  {NULL, HF_KEY_READ, NULL},
};

const hf_key hf_gpt2_keys[] = {
    READ("n_embd"),
    READ("hidden_size"),
    READ("n_head"),
    READ("n_layer"),
    READ("vocab_size"),
    READ("n_positions"),
    READ("n_inner"),
    READ("layer_norm_epsilon"),
    READ("activation_function"),
    READ("tie_word_embeddings"),
    READ("scale_attn_by_inverse_layer_idx"),
    READ("scale_attn_weights"),
    HARMLESS("n_ctx", "the context length; the positions' rows come from n_positions"),
    HARMLESS("reorder_and_upcast_attn",
             "upcasts half-precision attention to float32; varprof computes in float32"),
    HARMLESS("pad_token_id", "GPT-2's embedding has no padding row"),
    HARMLESS("summary_type", HEADS_OF_OTHER_TASKS),
    HARMLESS("summary_use_proj", HEADS_OF_OTHER_TASKS),
    HARMLESS("summary_activation", HEADS_OF_OTHER_TASKS),
    HARMLESS("summary_proj_to_labels", HEADS_OF_OTHER_TASKS),
    HARMLESS("summary_first_dropout", HEADS_OF_OTHER_TASKS),
    {NULL, HF_KEY_READ, NULL},
};

/* OPT (OPTConfig): Post-LN or pre-norm, learned positions, project_in/out. */
const hf_key hf_opt_keys[] = {
    READ("ffn_dim"),
    READ("max_position_embeddings"),
    READ("word_embed_proj_dim"),
    READ("do_layer_norm_before"),
    READ("_remove_final_layer_norm"),
    READ("layer_norm_elementwise_affine"),
    READ("enable_bias"),
    READ("activation_function"),
    READ("tie_word_embeddings"),
    READ("pad_token_id"),
    HARMLESS("layerdrop", "drops whole layers in training only; every layer runs in evaluation"),
    HARMLESS("activation_dropout", DROPOUT),
    {NULL, HF_KEY_READ, NULL},
};

/* Llama, Mistral, Qwen2 and OLMo-2, and Gemma-2 under its own keys. */
const hf_key hf_llama_keys[] = {
    READ("intermediate_size"),
    READ("num_key_value_heads"),
    READ("head_dim"),
    READ("rms_norm_eps"),
    READ("rope_theta"),
    READ("rope_scaling"),
    READ("rope_parameters"),
    READ("partial_rotary_factor"),
    READ("hidden_act"),
    READ("tie_word_embeddings"),
    READ("attention_bias"),
    READ("mlp_bias"),
    READ("sliding_window"),
    READ("use_sliding_window"),
    READ("max_window_layers"),
    READ("layer_types"),
    READ("pad_token_id"),
    HARMLESS("max_position_embeddings",
             "the longest context trained: RoPE's frequencies do not depend on it (llama3's "
             "scaling reads its own original_max_position_embeddings)"),
    HARMLESS("pretraining_tp", "splits each projection into slices summed back: the same "
                               "arithmetic"),
    {NULL, HF_KEY_READ, NULL},
};

const hf_key hf_gemma2_keys[] = {
    READ("hidden_activation"),
    READ("query_pre_attn_scalar"),
    READ("attn_logit_softcapping"),
    READ("final_logit_softcapping"),
    HARMLESS("hidden_act", "Gemma 2's MLP reads hidden_activation"),
    {NULL, HF_KEY_READ, NULL},
};

const hf_key *hf_key_find(const hf_key *const *tables, const char *name)
{
    for (; *tables; tables++)
        for (const hf_key *k = *tables; k->name; k++)
            if (strcmp(k->name, name) == 0)
                return k;
    return NULL;
}

static void add_unknown(vp_hf_architecture *a, const char *name)
{
    if (a->n_unknown_keys < VP_HF_MOST_UNKNOWN_KEYS)
        snprintf(a->unknown_keys[a->n_unknown_keys], sizeof a->unknown_keys[0], "%s", name);
    a->n_unknown_keys++;
}

vp_status hf_keys_check(hf_json *c, const hf_key *const *tables, vp_hf_architecture *a)
{
    for (size_t i = 0; i < c->n_read; i++) {
        const hf_key *k = hf_key_find(tables, c->read[i]);
        if (!k || k->kind != HF_KEY_READ)
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: '%s' is read for model_type '%s' but not listed as "
                           "read (varprof's own tables disagree)",
                           c->read[i], a->model_type);
    }
    for (const cJSON *e = c->root->child; e; e = e->next) {
        /* cJSON finds the first of two, Python's json (transformers') the last */
        for (const cJSON *before = c->root->child; before != e; before = before->next)
            if (strcmp(before->string, e->string) == 0)
                return vp_fail(c->err, VP_EFORMAT,
                               "config.json: '%.60s' is given twice; transformers reads the "
                               "last, and varprof refuses to guess",
                               e->string);
        const hf_key *k = hf_key_find(tables, e->string);
        if (!k) {
            add_unknown(a, e->string);
            continue;
        }
        if (k->kind == HF_KEY_REFUSED && hf_value_is_set(e))
            return vp_fail(c->err, VP_EFORMAT, "config.json: '%.60s' is set; %s", e->string,
                           k->why);
    }
    return VP_OK;
}
