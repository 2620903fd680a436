/* config.json's contract (src/io/hf_config_keys.c, src/io/hf_rope.c), on
 * copies of tests/data/hf checkpoints with config.json edited: an unknown
 * key is warned of on one line and the numbers stay (past 16 keys, the rest
 * counted); a known key that changes the arithmetic is refused by name with
 * why; harmless keys, and refused keys left null, false or empty, pass
 * silently; RoPE in the Hub's spelling, transformers 5's rope_parameters
 * (flat or per layer type) or both gives the same bits, and the two
 * disagreeing is refused; pad_token_id gives its embedding row no gradient
 * and leaves the forward pass as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "run_program.h"
#include "text_file.h"
#include "test_filter.h"

/* One edit of config.json: its first `from` becomes `to` (from must be
   there). */
typedef struct {
    const char *from, *to;
} edit;

typedef struct {
    const char *base;    /* a case of tests/data/hf */
    const char *add;     /* keys to add after torch_dtype (every base has it), or NULL */
    edit edits[2];       /* then these in turn; a NULL from ends them */
    const char *says[3]; /* in the message, for a refusal */
} config_case;

#define DTYPE "\"torch_dtype\": \"float32\""
/* Cases: a refusal naming says; or the same output, keys added or edited. */
/* clang-format off */
#define REFUSE(base, add, ...) {base, add, {{NULL, NULL}}, {__VA_ARGS__}}
#define SAME(base, add) {base, add, {{NULL, NULL}}, {NULL}}
#define EDITED(base, from, to) {base, NULL, {{from, to}}, {NULL}}
#define REWRITTEN(base, from1, to1, from2, to2) {base, NULL, {{from1, to1}, {from2, to2}}, {NULL}}
/* clang-format on */

/* dir: a copy of tests/data/hf/<base> with config.json edited */
static void make_copy(const config_case *c, const char *dir)
{
    test_remove_tree(dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    static const char *const files[] = {"config.json", "model.safetensors"}; /* one file each */
    char from[1024], to[1024];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(from, sizeof from, "%s/hf/%s/%s", test_data_path(""), c->base, files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        copy_file(from, to);
    }
    snprintf(to, sizeof to, "%s/config.json", dir);
    static char text[1 << 17], next[1 << 17], added[1 << 12];
    snprintf(text, sizeof text, "%s", read_text(to));
    snprintf(added, sizeof added, "%s, %s", DTYPE, c->add ? c->add : "");
    const edit add = {DTYPE, added}, *edits[3] = {c->add ? &add : NULL, &c->edits[0], &c->edits[1]};
    for (size_t i = 0; i < 3; i++) {
        if (!edits[i] || !edits[i]->from)
            continue;
        const char *at = strstr(text, edits[i]->from);
        if (!at) {
            print_error("%s: '%s' is not in config.json\n", c->base, edits[i]->from);
            fail();
        }
        snprintf(next, sizeof next, "%.*s%s%s", (int)(at - text), text, edits[i]->to,
                 at + strlen(edits[i]->from));
        memcpy(text, next, sizeof text);
    }
    write_text(to, text);
}

/* ---- running ---- */

static const char *hf_dir(const char *base)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s/hf/%s", test_data_path(""), base);
    return dir;
}

/* The forward pass with its gradients, as CSV, on the 2 x 13 tokens. */
static program_run run_dir(const char *dir)
{
    char tokens[512];
    snprintf(tokens, sizeof tokens, "%s", test_data_path("hf_tokens.csv"));
    const char *args[] = {"--engine", "forward", "--weights", dir,   "--token-ids",
                          tokens,     "--grad",  "--format",  "csv", NULL};
    return run_varprof(args);
}

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

/* The case's edits, for the messages. */
static const char *edits_text(const config_case *c)
{
    static char text[2048];
    snprintf(text, sizeof text, "%s%s", c->add ? "+ " : "", c->add ? c->add : "");
    for (size_t i = 0; i < 2 && c->edits[i].from; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s'%s' -> '%s'",
                 text[0] ? ", " : "", c->edits[i].from, c->edits[i].to);
    return text;
}

/* A case of a table, beside the unedited checkpoint's run: refused (exit 1,
   nothing on standard output, every c->says in the message) or the same
   (exit 0, nothing on standard error, the same output); 1 if it is not. */
static int expect(const char *group, size_t i, const config_case *c, int refuse)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s%zu", test_scratch(), group, i);
    make_copy(c, dir);
    program_run want = run_dir(hf_dir(c->base));
    program_run run = run_dir(dir);
    const int same = want.status == 0 && strcmp(run.out, want.out) == 0;
    int bad = refuse ? run.status != 1 || run.out_length != 0
                     : run.status != 0 || run.err[0] != '\0' || !same;
    for (size_t s = 0; s < 3 && c->says[s]; s++)
        bad |= !strstr(run.err, c->says[s]);
    if (bad)
        print_error("%s case %zu (%s: %s): exit %d, %zu bytes out, %s the unedited run's; want %s "
                    "'%s' '%s' '%s': %s",
                    group, i, c->base, edits_text(c), run.status, run.out_length,
                    same ? "as" : "unlike",
                    refuse ? "exit 1, nothing out and in the message"
                           : "exit 0, the same output, nothing on standard error",
                    c->says[0] ? c->says[0] : "", c->says[1] ? c->says[1] : "",
                    c->says[2] ? c->says[2] : "", run.err);
    else if (refuse)
        print_message("  %-8s %2zu %-11s exit 1: %s", group, i, c->base, run.err);
    else
        print_message("  %-8s %2zu %-11s %s: exit 0, silent, %zu bytes as the unedited run\n",
                      group, i, c->base, edits_text(c), run.out_length);
    program_run_free(&run);
    program_run_free(&want);
    test_remove_tree(dir);
    return bad;
}

/* Every case of a table; 1 if any is not as it should be. */
static int run_table(const char *group, const config_case *table, size_t n, int refuse)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= expect(group, i, &table[i], refuse);
    return bad;
}

/* ---- 1. keys varprof does not know ---- */

/* A copy of llama_d32 (in dir) with keys added, run beside the original;
   1 when the copy's run exits 0 with the original's output. */
static int run_added(const char *keys, const char *name, char *dir, size_t size, program_run *run)
{
    snprintf(dir, size, "%s/%s", test_scratch(), name);
    const config_case c = SAME("llama_d32", keys);
    make_copy(&c, dir);
    program_run want = run_dir(hf_dir("llama_d32"));
    *run = run_dir(dir);
    const int same = want.status == 0 && run->status == 0 && strcmp(run->out, want.out) == 0;
    program_run_free(&want);
    return same;
}

/* The warning's wording, to the letter (README.md, varprof(1)). */
static void expect_line(const char *what, const char *got, const char *want)
{
    if (strcmp(got, want) != 0) {
        print_error("%s: the line is not the one README.md and varprof(1) give:\n"
                    "  got:  %s  want: %s",
                    what, got, want);
        fail();
    }
}

static void an_unknown_key_is_warned_of_and_the_run_goes_on(void **state)
{
    (void)state;
    char dir[512], line[1024];
    program_run run;
    const int same = run_added("\"frobnicate_layers\": 3", "unknown", dir, sizeof dir, &run);
    if (!same || count_lines(run.err) != 1 || !strstr(run.err, "'frobnicate_layers'") ||
        !strstr(run.err, "model_type 'llama'") || !strstr(run.err, "changes nothing")) {
        print_error("frobnicate_layers: exit %d, %zu lines on standard error, output %s the "
                    "unedited run's; want 0, one line, the same output: %s",
                    run.status, count_lines(run.err), same ? "as" : "unlike", run.err);
        fail();
    }
    print_message("  unknown  llama_d32 + frobnicate_layers: exit 0, output as the unedited "
                  "run, %s",
                  run.err);
    snprintf(line, sizeof line,
             "varprof: warning: --weights %s: config.json's 'frobnicate_layers' is not a key "
             "varprof knows for model_type 'llama'; the numbers assume it changes nothing\n",
             dir);
    expect_line("frobnicate_layers", run.err, line);
    program_run_free(&run);
    test_remove_tree(dir);
}

/* 18 unknown keys: the first 16 named a line each, then one line counts 2 */
static void past_sixteen_unknown_keys_are_counted(void **state)
{
    (void)state;
    char dir[512], keys[1024] = "", name[32], last[700];
    for (int k = 0; k < 18; k++)
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s\"frobnicate_%02d\": %d",
                 k ? ", " : "", k, k);
    program_run run;
    const int same = run_added(keys, "unknown18", dir, sizeof dir, &run);
    int bad = !same || count_lines(run.err) != 17;
    const char *line = run.err;
    for (int k = 0; k < 16 && line && !bad; k++) {
        snprintf(name, sizeof name, "'frobnicate_%02d'", k);
        const char *end = strchr(line, '\n');
        const char *at = strstr(line, name);
        bad |= !end || !at || at > end || !strstr(line, "changes nothing");
        line = end ? end + 1 : NULL;
    }
    if (bad || !line || !strstr(line, "and 2 more such keys\n")) {
        print_error("18 unknown keys: exit %d, %zu lines on standard error, output %s the "
                    "unedited run's; want 0, 16 lines naming frobnicate_00 to _15 in order, "
                    "then 'and 2 more such keys', the same output: %s",
                    run.status, count_lines(run.err), same ? "as" : "unlike", run.err);
        fail();
    }
    print_message("  unknown  llama_d32 + 18 keys: exit 0, output as the unedited run, 16 "
                  "named lines, then: %s",
                  line);
    snprintf(last, sizeof last, "varprof: warning: --weights %s: and 2 more such keys\n", dir);
    expect_line("18 unknown keys", line, last);
    program_run_free(&run);
    test_remove_tree(dir);
}

/* ---- 2. known keys that change the arithmetic ---- */

#define PER_TYPE(full, sliding)                                                                    \
    "\"rope_parameters\": {\"full_attention\": " full ", \"sliding_attention\": " sliding "}"
#define GPTQ "\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 4}"
#define PRUNED "\"pruned_heads\": {\"0\": [1]}"

static const config_case refused[] = {
    REFUSE("llama_d32", GPTQ, "'quantization_config' is set", "quantised"),
    REFUSE("gpt2_d32", GPTQ, "'quantization_config' is set", "quantised"),
    REFUSE("llama_d32", PRUNED, "'pruned_heads' is set", "pruned"),
    REFUSE("gpt2_d32", PRUNED, "'pruned_heads' is set", "pruned"),
    REFUSE("gpt2_d32", "\"add_cross_attention\": true", "'add_cross_attention' is set", "encoder"),
    REFUSE("gemma2_d32", "\"use_bidirectional_attention\": true",
           "'use_bidirectional_attention' is set", "causal"),
    REFUSE(
        "llama_d32",
        "\"rope_parameters\": {\"rope_type\": \"yarn\", \"factor\": 4.0, \"rope_theta\": 10000.0}",
        "'yarn'", "rope_parameters", "is not read"),
    REFUSE("llama_d32", "\"partial_rotary_factor\": 0.5", "partial_rotary_factor 0.5",
           "is not read", "every coordinate"),
    REFUSE("llama_d32",
           "\"rope_parameters\": {\"rope_theta\": 10000.0, \"rope_type\": \"default\", "
           "\"mrope_section\": [1, 2]}",
           "'mrope_section'", "is not read"),
    REFUSE("llama_d32",
           PER_TYPE("{\"rope_theta\": 1e6, \"rope_type\": \"default\"}",
                    "{\"rope_theta\": 1e4, \"rope_type\": \"default\"}"),
           "'full_attention'", "'sliding_attention'", "different"),
    REFUSE("llama_d32", "\"pad_token_id\": 50", "'pad_token_id'", "whole number from -50 to 49"),
    REFUSE("llama_d32", "\"pad_token_id\": -51", "'pad_token_id'", "whole number from -50 to 49"),
    /* cJSON would read the first, transformers' json the last */
    REFUSE("llama_d32", "\"rope_theta\": 500000.0", "'rope_theta' is given twice"),
};

static void keys_that_change_the_arithmetic_are_refused(void **state)
{
    (void)state;
    if (run_table("refused", refused, sizeof refused / sizeof *refused, 1))
        fail();
}

/* ---- 3. harmless keys, and refused keys that are not set ---- */

static const config_case harmless[] = {
    SAME("llama_d32", "\"attention_dropout\": 0.1"),
    SAME("llama_d32", "\"pretraining_tp\": 2"),
    SAME("llama_d32", "\"use_cache\": false"),
    EDITED("llama_d32", DTYPE, "\"torch_dtype\": \"bfloat16\""),
    SAME("llama_d32", "\"bos_token_id\": 1"),
    EDITED("llama_d32", "\"max_position_embeddings\": 64", "\"max_position_embeddings\": 4096"),
    EDITED("gpt2_d32", "\"attn_pdrop\": 0.1", "\"attn_pdrop\": 0.3"), /* 0.1 there already */
    SAME("gpt2_d32", "\"summary_type\": \"cls_index\""),
    SAME("gpt2_d32", "\"pad_token_id\": 7"), /* GPT-2's embedding has no padding row */
    SAME("llama_d32", "\"quantization_config\": null"),
    SAME("llama_d32", "\"pruned_heads\": {}"),
    SAME("gpt2_d32", "\"add_cross_attention\": false"),
    SAME("gemma2_d32", "\"use_bidirectional_attention\": false"),
};

static void harmless_keys_pass_silently(void **state)
{
    (void)state;
    if (run_table("harmless", harmless, sizeof harmless / sizeof *harmless, 0))
        fail();
}

/* ---- 4. RoPE in either spelling ---- */

#define LLAMA3_SET(factor)                                                                         \
    "{\"rope_theta\": 500000.0, \"rope_type\": \"llama3\", \"factor\": " factor                    \
    ", \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "                                      \
    "\"original_max_position_embeddings\": 8192}"
#define LLAMA3_8 LLAMA3_SET("8.0") /* llama31_d64's */
#define DEFAULT_SET "{\"rope_theta\": 10000.0, \"rope_type\": \"default\"}"

/* transformers 5's spelling alone (the Hub's keys removed), then both at
   once; flat, then per layer type */
static const config_case spellings[] = {
    REWRITTEN("llama31_d64", "\"rope_theta\": 500000.0,", "", "\"rope_scaling\": {",
              "\"rope_parameters\": {\"rope_theta\": 500000.0, "),
    SAME("llama31_d64", "\"rope_parameters\": " LLAMA3_8),
    /* rope_scaling's body becomes the second layer type's set */
    REWRITTEN("llama31_d64", "\"rope_theta\": 500000.0,\n  \"rope_scaling\": {",
              "\"rope_parameters\": {\"full_attention\": " LLAMA3_8
              ", \"sliding_attention\": {\"rope_theta\": 500000.0, ",
              "\"rope_type\": \"llama3\"\n  }", "\"rope_type\": \"llama3\"\n  }}"),
    SAME("llama31_d64", PER_TYPE(LLAMA3_8, LLAMA3_8)),
    REWRITTEN("llama_d32", "\"rope_theta\": 10000.0,", "", "\"rope_scaling\": null",
              "\"rope_parameters\": " DEFAULT_SET),
    SAME("llama_d32", "\"rope_parameters\": " DEFAULT_SET),
    REWRITTEN("llama_d32", "\"rope_theta\": 10000.0,", "", "\"rope_scaling\": null",
              PER_TYPE(DEFAULT_SET, DEFAULT_SET)),
    SAME("llama_d32", PER_TYPE(DEFAULT_SET, DEFAULT_SET)),
};

static const config_case disagreeing[] = {
    REFUSE("llama_d32",
           "\"rope_parameters\": {\"rope_theta\": 500000.0, \"rope_type\": \"default\"}",
           "rope_theta is 10000", "500000", "must agree"),
    REFUSE("llama31_d64", "\"rope_parameters\": " LLAMA3_SET("4.0"), /* rope_scaling's is 8 */
           "'rope_scaling'", "rope_parameters", "must agree"),
};

static void both_rope_spellings_give_the_same_bits(void **state)
{
    (void)state;
    const int bad = run_table("rope", spellings, sizeof spellings / sizeof *spellings, 0);
    if (run_table("disagree", disagreeing, sizeof disagreeing / sizeof *disagreeing, 1) || bad)
        fail();
}

/* ---- 5. pad_token_id ---- */

#define PAD_ID 7 /* every token of the batch */

/* The run's --grads-out into grads, its standard output in *run. */
static void run_pad(const char *dir, const char *tokens, const char *grads, program_run *run)
{
    const char *args[] = {"--engine", "forward", "--weights", dir,        "--token-ids",
                          tokens,     "--grad",  "--loss",    "copy",     "--grads-out",
                          grads,      "--names", "varprof",   "--format", "csv",
                          "--force",  NULL};
    *run = run_varprof(args);
    if (run->status != 0) {
        print_error("pad_token_id, %s: exit %d: %s", dir, run->status, run->err);
        fail();
    }
}

/* embed.weight's Frobenius norm in a --grads-out file */
static double embed_frobenius(const char *grads)
{
    const char *at = strstr(read_text(grads), "\nembed.weight,");
    double frobenius = -1;
    if (!at || sscanf(at + 1, "embed.weight,%*[^,],%lf", &frobenius) != 1) {
        print_error("%s: no embed.weight row\n", grads);
        fail();
    }
    return frobenius;
}

/* The stream_norm column of a CSV profile, one value a line, into out. */
static void stream_norms(const char *csv, char *out, size_t size)
{
    size_t column = 0;
    const char *header = strstr(csv, "stream_norm,");
    assert_non_null(header);
    for (const char *p = csv; p < header; p++)
        column += *p == ',';
    out[0] = '\0';
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const char *field = line + 1;
        for (size_t k = 0; k < column && field; k++)
            field = strchr(field, ',') ? strchr(field, ',') + 1 : NULL;
        assert_non_null(field);
        snprintf(out + strlen(out), size - strlen(out), "%.*s\n", (int)strcspn(field, ",\n"),
                 field);
    }
}

static void pad_token_id_gives_its_row_no_gradient(void **state)
{
    (void)state;
    char tokens[600], dir[600], grads[3][600], to[128], text[256] = "";
    snprintf(tokens, sizeof tokens, "%s", in_scratch("pad_tokens.csv"));
    for (int row = 0; row < 2; row++)
        for (int k = 0; k < 13; k++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%d%c", PAD_ID,
                     k < 12 ? ',' : '\n');
    write_text(tokens, text);
    for (int i = 0; i < 3; i++)
        snprintf(grads[i], sizeof grads[i], "%s/pad_grads%d.csv", test_scratch(), i);
    program_run runs[3];
    run_pad(hf_dir("llama_d32"), tokens, grads[0], &runs[0]);
    for (int i = 1; i < 3; i++) { /* the batch's one id, then one not in it */
        snprintf(to, sizeof to, "\"pad_token_id\": %d", i == 1 ? PAD_ID : PAD_ID + 1);
        const config_case c = SAME("llama_d32", to);
        snprintf(dir, sizeof dir, "%s/pad%d", test_scratch(), i);
        make_copy(&c, dir);
        run_pad(dir, tokens, grads[i], &runs[i]);
    }
    static char norms[2][8192];
    stream_norms(runs[0].out, norms[0], sizeof norms[0]);
    stream_norms(runs[1].out, norms[1], sizeof norms[1]);
    const double without = embed_frobenius(grads[0]), with = embed_frobenius(grads[1]);
    static char file[2][1 << 16];
    snprintf(file[0], sizeof file[0], "%s", read_text(grads[0]));
    snprintf(file[1], sizeof file[1], "%s", read_text(grads[2]));
    const int same_norms = strcmp(norms[0], norms[1]) == 0;
    const int same_file = strcmp(file[0], file[1]) == 0;
    print_message("  pad      llama_d32, every token %d: embed.weight's gradient %.17g without "
                  "pad_token_id, %.17g with pad_token_id %d; stream norms %s; whole output %s; "
                  "pad_token_id %d (not in the batch): --grads-out %s\n",
                  PAD_ID, without, with, PAD_ID, same_norms ? "the same" : "DIFFER",
                  strcmp(runs[0].out, runs[1].out) ? "differs" : "the same", PAD_ID + 1,
                  same_file ? "byte-identical" : "DIFFERS");
    for (int i = 0; i < 3; i++)
        program_run_free(&runs[i]);
    if (!(without > 0) || with != 0.0 || !same_norms || !same_file) {
        print_error("pad_token_id: want embed.weight's gradient > 0 without, exactly 0 with, "
                    "the same stream norms, and --grads-out unchanged by a pad id not in the "
                    "batch; stream norms without:\n%swith:\n%s",
                    norms[0], norms[1]);
        fail();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_unknown_key_is_warned_of_and_the_run_goes_on),
        cmocka_unit_test(past_sixteen_unknown_keys_are_counted),
        cmocka_unit_test(keys_that_change_the_arithmetic_are_refused),
        cmocka_unit_test(harmless_keys_pass_silently),
        cmocka_unit_test(both_rope_spellings_give_the_same_bits),
        cmocka_unit_test(pad_token_id_gives_its_row_no_gradient),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("config.json's contract", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
