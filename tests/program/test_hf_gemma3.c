/* The config.json facts of gemma3_text that the conformance corpus does not
 * vary, on copies of its two cases with config.json edited: each refusal
 * names what is wrong (a RoPE type not read, linear scaling on the sliding
 * layers or without its factor, bidirectional attention, the two spellings
 * disagreeing), and the edits Gemma3TextConfig reads as no change give the
 * unedited case's output byte for byte and say nothing (layer_types left to
 * the pattern, full layers on the same base, the soft caps' null defaults
 * left out). The per-layer-type RoPE and the window themselves are held to
 * PyTorch by test_pytorch_windows. */
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

/* The corpus's layer_types: two sliding layers */
#define LAYER_TYPES                                                                                \
    "\"layer_types\": [\n    \"sliding_attention\",\n    \"sliding_attention\"\n  ],\n"
#define SECOND_FULL "\"sliding_attention\"\n  ]"

/* clang-format off */
static const kin_case refused[] = {
    /* linear scaling without its factor */
    {"gemma3", {{"\"rope_type\": \"default\"", "\"rope_type\": \"linear\""}},
     {"rope_parameters' 'full_attention': linear scaling's 'factor'"}},
    /* linear scaling on the sliding layers, which run default RoPE */
    {"gemma3", {{"\"rope_theta\": 10000.0,\n      \"rope_type\": \"default\"",
                 "\"factor\": 8.0, \"rope_theta\": 10000.0, \"rope_type\": \"linear\""}},
     {"rope_parameters' 'sliding_attention' of type 'linear'", "linear scaling on the full"}},
    /* a RoPE type not read, by name */
    {"gemma3_hub_config", {{"\"rope_theta\": 1000000.0", "\"rope_theta\": 1000000.0, "
                            "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 8.0}"}},
     {"'rope_scaling' of type 'yarn'", "gemma3_text"}},
    /* the two spellings disagreeing */
    {"gemma3", {{"\"rope_parameters\"", "\"rope_local_base_freq\": 20000.0, \"rope_parameters\""}},
     {"rope_local_base_freq is 20000", "must agree"}},
    {"gemma3", {{"\"use_bidirectional_attention\": false",
                 "\"use_bidirectional_attention\": true"}},
     {"'use_bidirectional_attention'", "causal"}},
};

static const kin_case unchanged[] = {
    /* layer_types left to the pattern: both layers of 2 slide under 6 */
    {"gemma3_hub_config", {{LAYER_TYPES, ""}}, {NULL}},
    /* full layers on the sliding layers' base */
    {"gemma3", {{SECOND_FULL, "\"full_attention\"\n  ]"},
                {"\"rope_theta\": 1000000.0", "\"rope_theta\": 10000.0"}}, {NULL}},
    /* Gemma3TextConfig's null soft caps, left out */
    {"gemma3", {{"\"attn_logit_softcapping\": null,", ""},
                {"\"final_logit_softcapping\": null,", ""}}, {NULL}},
};
/* clang-format on */

static void refusals_name_what_is_wrong(void **state)
{
    (void)state;
    if (edited_cases_expect("gemma3_", refused, sizeof refused / sizeof *refused))
        fail();
}

static void edits_transformers_reads_as_none_change_nothing(void **state)
{
    (void)state;
    if (edited_cases_expect("gemma3_", unchanged, sizeof unchanged / sizeof *unchanged))
        fail();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refusals_name_what_is_wrong),
        cmocka_unit_test(edits_transformers_reads_as_none_change_nothing),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("gemma3_text config.json", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
