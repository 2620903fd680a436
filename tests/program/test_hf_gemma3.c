/* The config.json facts of gemma3_text that the conformance corpus does not
 * vary, on copies of its two cases with config.json edited: each refusal
 * names what is wrong (a full layer beside the sliding ones on another RoPE
 * base, linear scaling, bidirectional attention, the two spellings
 * disagreeing, a batch longer than the window), and the edits
 * Gemma3TextConfig reads as no change give the unedited case's output byte
 * for byte and say nothing (layer_types left to the pattern, full layers on
 * the same base, the soft caps' null defaults left out). */
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
    /* a full layer on the global base beside a sliding one on the local */
    {"gemma3", {{SECOND_FULL, "\"full_attention\"\n  ]"}},
     {"sliding layers turn by RoPE base 10000", "full layers by 1e+06"}},
    {"gemma3_hub_config", {{SECOND_FULL, "\"full_attention\"\n  ]"}},
     {"sliding layers turn by RoPE base 10000", "one RoPE base for every layer"}},
    /* the same, from the pattern where layer_types is absent */
    {"gemma3_hub_config", {{LAYER_TYPES, ""},
                           {"\"_sliding_window_pattern\": 6", "\"_sliding_window_pattern\": 2"}},
     {"sliding layers turn by RoPE base 10000"}},
    /* Gemma 3's linear scaling on the full layers, not run */
    {"gemma3_hub_config", {{"\"rope_theta\": 1000000.0", "\"rope_theta\": 1000000.0, "
                            "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 8.0}"}},
     {"'rope_scaling' of type 'linear'", "gemma3_text"}},
    {"gemma3", {{"\"rope_type\": \"default\"", "\"rope_type\": \"linear\""}},
     {"rope_parameters' 'full_attention' of type 'linear'", "default RoPE alone"}},
    /* the two spellings disagreeing */
    {"gemma3", {{"\"rope_parameters\"", "\"rope_local_base_freq\": 20000.0, \"rope_parameters\""}},
     {"rope_local_base_freq is 20000", "must agree"}},
    {"gemma3", {{"\"use_bidirectional_attention\": false",
                 "\"use_bidirectional_attention\": true"}},
     {"'use_bidirectional_attention'", "causal"}},
    /* a batch of 11 tokens against windows of 8 */
    {"gemma3", {{"\"sliding_window\": 4096", "\"sliding_window\": 8"}}, {"sliding_window is 8"}},
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
    int bad = 0;
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        bad |= edited_case_expect("gemma3_", i, &refused[i]);
    if (bad)
        fail();
}

static void edits_transformers_reads_as_none_change_nothing(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof unchanged / sizeof *unchanged; i++)
        bad |= edited_case_expect("gemma3_", i, &unchanged[i]);
    if (bad)
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
