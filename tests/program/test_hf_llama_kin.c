/* The config.json facts of qwen3, starcoder2, phi3 and cohere that the conformance
 * corpus does not vary, on copies of its cases with config.json edited:
 * each refusal names what is wrong (Phi-3's longrope, Qwen3's default
 * head_dim of 128, Phi-3's default
 * pad_token_id outside a small vocabulary, use_bias false against biased
 * tensors), and the edits transformers reads as no change give the
 * unedited case's output byte for byte and say nothing (Qwen3's window kept
 * only under use_sliding_window, and only from max_window_layers on; the
 * Hub's leftover keys; a window no shorter than the batch). The windows
 * themselves are held to PyTorch by test_pytorch_windows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "edited_case.h"
#include "run_program.h"
#include "test_filter.h"
#include "text_file.h"

/* Qwen3's layer_types, as the corpus's config.json spells them */
#define QWEN3_LAYER_TYPES                                                                          \
    "\"layer_types\": [\n    \"full_attention\",\n    \"full_attention\"\n  ],\n"

/* clang-format off */
static const kin_case refused[] = {
    /* Phi-3's 128k scaling, in either spelling and under its older name */
    {"phi3", {{"\"rope_type\": \"default\"", "\"rope_type\": \"longrope\""}},
     {"rope_parameters of type 'longrope'", "longrope scaling"}},
    {"phi3_hub_config", {{"\"rope_theta\": 10000.0", "\"rope_theta\": 10000.0, \"rope_scaling\": "
                          "{\"type\": \"su\", \"short_factor\": [1], \"long_factor\": [1]}"}},
     {"rope_scaling of type 'su'", "longrope scaling"}},
    {"phi3", {{"\"rope_type\": \"default\"", "\"rope_type\": \"linear\", \"factor\": 2.0"}},
     {"'linear'", "Phi-3 has RoPE of type default or longrope"}},
    /* Phi3Config's pad_token_id 32000 where the file is silent */
    {"phi3", {{"\"pad_token_id\": null,\n", ""}}, {"'pad_token_id' is absent", "32000"}},
    {"phi3", {{"\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\""}}, {"'hidden_act' 'gelu'"}},
    /* use_bias false: the file's biases are of no such checkpoint */
    {"starcoder2", {{"\"use_bias\": true", "\"use_bias\": false"}},
     {".bias' is not one a starcoder2 checkpoint"}},
    /* Qwen3Config's head_dim 128 where the file is silent */
    {"qwen3", {{"\"head_dim\": 16,", ""}}, {"q_proj.weight' has shape [64, 32]", "[512, 32]"}},
    {"starcoder2", {{"\"hidden_act\": \"gelu_pytorch_tanh\"", "\"hidden_act\": \"silu\""}},
     {"'hidden_act' 'silu'"}},
    /* use_qk_norm read, not ignored: its q_norm and k_norm asked of a file
       without them (tests/program/test_pytorch_cohere_qk.c runs them); its
       attention-only biases, a null logit_scale (CohereForCausalLM cannot
       run it), another MLP, part of each head rotated (its rotate_half
       turns every coordinate) */
    {"cohere", {{"\"use_qk_norm\": false", "\"use_qk_norm\": true"}},
     {"self_attn.q_norm.weight' is missing"}},
    {"cohere", {{"\"attention_bias\": false", "\"attention_bias\": true"}},
     {"'attention_bias'", "not the MLP"}},
    {"cohere", {{"\"logit_scale\": 0.125", "\"logit_scale\": null"}},
     {"'logit_scale' is null", "0.0625"}},
    {"cohere", {{"\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\""}},
     {"'hidden_act' 'gelu'", "Cohere"}},
    {"cohere_hub_config", {{"\"rope_theta\": 500000.0", "\"rope_theta\": 500000.0, "
                            "\"partial_rotary_factor\": 0.5"}},
     {"partial_rotary_factor 0.5", "cohere"}},
};

static const kin_case unchanged[] = {
    /* Qwen3Config drops the window without use_sliding_window */
    {"qwen3", {{"\"sliding_window\": null", "\"sliding_window\": 8"},
               {QWEN3_LAYER_TYPES, ""}}, {NULL}},
    /* and with it, no layer from max_window_layers (2) on */
    {"qwen3", {{"\"use_sliding_window\": false", "\"use_sliding_window\": true"},
               {"\"sliding_window\": null", "\"sliding_window\": 8"},
               {QWEN3_LAYER_TYPES, ""},
               {"\"max_window_layers\": 28", "\"max_window_layers\": 2"}}, {NULL}},
    /* the window no batch here reaches, and longrope's context */
    {"starcoder2", {{"\"sliding_window\": 4096", "\"sliding_window\": 11"}}, {NULL}},
    {"phi3", {{"\"original_max_position_embeddings\": 4096",
               "\"original_max_position_embeddings\": 131072"}}, {NULL}},
    /* keys the Hub's configs carry that transformers passes over, silently */
    {"phi3", {{"\"embd_pdrop\": 0.0,", "\"embd_pdrop\": 0.0, \"attention_bias\": false, "
               "\"auto_map\": {\"AutoConfig\": \"configuration_phi3.Phi3Config\"},"}}, {NULL}},
    {"starcoder2", {{"\"use_bias\": true,", "\"use_bias\": true, \"norm_type\": \"layer_norm\", "
                     "\"mlp_type\": \"default\","}}, {NULL}},
    /* CohereConfig's defaults, spelt out or left out */
    {"cohere", {{"\"tie_word_embeddings\": true,", ""},
                {"\"use_qk_norm\": false,", ""},
                {"\"attention_bias\": false,", ""}}, {NULL}},
};
/* clang-format on */

static void refusals_name_what_is_wrong(void **state)
{
    (void)state;
    if (edited_cases_expect("kin", refused, sizeof refused / sizeof *refused))
        fail();
}

static void edits_transformers_reads_as_none_change_nothing(void **state)
{
    (void)state;
    if (edited_cases_expect("kin", unchanged, sizeof unchanged / sizeof *unchanged))
        fail();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refusals_name_what_is_wrong),
        cmocka_unit_test(edits_transformers_reads_as_none_change_nothing),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("qwen3, starcoder2 and phi3 config.json", tests,
                                       test_scratch_setup, test_scratch_teardown);
}
