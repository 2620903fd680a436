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

#include "run_program.h"
#include "test_filter.h"
#include "text_file.h"

/* One edit of config.json: its first `from` becomes `to`. */
typedef struct {
    const char *from, *to;
} edit;

typedef struct {
    const char *base;    /* a case of tests/data/conformance */
    edit edits[4];       /* in turn; a NULL from ends them */
    const char *says[2]; /* in the message, for a refusal; NULL: the same output */
} kin_case;

/* The corpus's layer_types: two sliding layers */
#define LAYER_TYPES                                                                                \
    "\"layer_types\": [\n    \"sliding_attention\",\n    \"sliding_attention\"\n  ],\n"
#define SECOND_FULL "\"sliding_attention\"\n  ]"

/* dir: a copy of the case with config.json edited */
static void make_copy(const kin_case *c, const char *dir)
{
    test_remove_tree(dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    static const char *const files[] = {"config.json", "model.safetensors", "tokens.csv"};
    char from[1024], to[1024];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(from, sizeof from, "%s/%s/%s", test_data_path("conformance"), c->base, files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        copy_file(from, to);
    }
    snprintf(to, sizeof to, "%s/config.json", dir);
    static char text[1 << 16], next[1 << 16];
    snprintf(text, sizeof text, "%s", read_text(to));
    for (size_t i = 0; i < 4 && c->edits[i].from; i++) {
        const char *at = strstr(text, c->edits[i].from);
        if (!at)
            fail_msg("%s: '%s' is not in config.json", c->base, c->edits[i].from);
        snprintf(next, sizeof next, "%.*s%s%s", (int)(at - text), text, c->edits[i].to,
                 at + strlen(c->edits[i].from));
        memcpy(text, next, sizeof text);
    }
    write_text(to, text);
}

/* The conformance test's command, on dir's own tokens. */
static program_run run_dir(const char *dir)
{
    char tokens[1100];
    snprintf(tokens, sizeof tokens, "%s/tokens.csv", dir);
    const char *args[] = {"--engine", "forward", "--weights", dir,        "--token-ids", tokens,
                          "--grad",   "--loss",  "next",      "--format", "csv",         NULL};
    return run_varprof(args);
}

/* A case beside its unedited base: refused (a non-zero exit, nothing out,
   every says in the message) or, with no says, exit 0 and the same output;
   1 if it is not. */
static int expect(size_t i, const kin_case *c)
{
    char dir[512], base[1100];
    snprintf(dir, sizeof dir, "%s/gemma3_%zu", test_scratch(), i);
    snprintf(base, sizeof base, "%s/%s", test_data_path("conformance"), c->base);
    make_copy(c, dir);
    program_run want = run_dir(base), run = run_dir(dir);
    const int refuse = c->says[0] != NULL;
    const int same = want.status == 0 && run.status == 0 && strcmp(run.out, want.out) == 0;
    int bad = refuse ? run.status == 0 || run.out_length != 0 : !same || run.err[0] != '\0';
    for (size_t s = 0; s < 2 && c->says[s]; s++)
        bad |= !strstr(run.err, c->says[s]);
    if (bad)
        print_error("case %zu (%s, '%s' -> '%s'): exit %d, %zu bytes out, %s the unedited run's; "
                    "want %s '%s' '%s': %s",
                    i, c->base, c->edits[0].from, c->edits[0].to, run.status, run.out_length,
                    same ? "as" : "unlike",
                    refuse ? "a refusal naming" : "exit 0 and the same output",
                    c->says[0] ? c->says[0] : "", c->says[1] ? c->says[1] : "", run.err);
    else if (refuse)
        print_message("  %2zu %-10s exit %d: %s", i, c->base, run.status, run.err);
    else
        print_message("  %2zu %-10s exit 0, the unedited output (%zu bytes)\n", i, c->base,
                      run.out_length);
    program_run_free(&run);
    program_run_free(&want);
    test_remove_tree(dir);
    return bad;
}

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
        bad |= expect(i, &refused[i]);
    if (bad)
        fail();
}

static void edits_transformers_reads_as_none_change_nothing(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof unchanged / sizeof *unchanged; i++)
        bad |= expect(i, &unchanged[i]);
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
