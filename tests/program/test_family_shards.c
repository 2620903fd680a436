/* BF16 and sharded checkpoints of the eleven families added since issue 15
 * (tests/data/family_shards/, written by tests/data/gen_family_shards.py
 * from one conformance case per family, opt's two placements). Each case
 * has bf16/ (BF16, three shards and model.safetensors.index.json, a decoder
 * layer split across two shards) and f32/ (the same BF16-rounded values in
 * float32, one model.safetensors). On every instruction set the CPU has,
 * varprof --grad --loss next --grads-out gives the same bytes for both: the
 * stream norms, the loss and every gradient under the checkpoint's own
 * names, one row per parameter of transformers' model. That holds the
 * reader's BF16 widening, its shard index and each family's names across
 * shards; the arithmetic is test_conformance's. The BF16 run's loss stays within
 * LOSS_BOUND of the corpus's figure for the float32 original. And an index
 * naming a missing shard, or mapping a tensor to a shard without it, is
 * refused naming the file and the tensor. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "csv_text.h"
#include "run_program.h"
#include "test_filter.h"
#include "text_file.h"
#include "varprof/isa.h"

/* The cases (family_shards/cases.txt, checked below): each a case of
   tests/data/conformance/ of the same name. */
/* clang-format off */
static const char *cases[] = {
    "qwen3", "gemma3", "gpt_neox", "gptj", "falcon", "phi", "phi3", "opt_pre_norm",
    "opt_post_ln", "starcoder2", "cohere", "bloom",
};
/* clang-format on */
#define N_CASES (sizeof cases / sizeof *cases)

/* Rounding the weights to BF16 moves each by at most 2^-9 of itself (half
   of BF16's 8-bit significand's ulp); with the signs at random, the loss
   moves less: the largest shift over these cases, measured with varprof on
   bf16/ against transformers' float32 loss of the original, is 3.8e-4
   relative (starcoder2; the others 1.6e-6 .. 2.2e-4). The bound is 2^-9 ~
   2.0e-3, five times that: a reader that widened BF16 wrongly (as F16, or
   with the halves swapped) gives garbage, far beyond it. */
#define LOSS_BOUND 1.953125e-3

#define MAX_TEXT (1 << 16)

static char *case_path(const char *name, const char *part)
{
    static char path[1024];
    char rel[256];
    snprintf(rel, sizeof rel, "family_shards/%s/%s", name, part);
    snprintf(path, sizeof path, "%s", test_data_path(rel));
    return path;
}

/* A file's text, malloc'd (NULL when it cannot be read). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = malloc(MAX_TEXT);
    assert_non_null(text);
    const size_t n = fread(text, 1, MAX_TEXT - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

/* The first line where a and b differ, said; 1 when they are the same. */
static int same_text(const char *what, const char *a, const char *b)
{
    if (a && b && strcmp(a, b) == 0)
        return 1;
    if (!a || !b) {
        print_error("%s: %s\n", what, a ? "no f32 file" : "no bf16 file");
        return 0;
    }
    size_t at = 0, start = 0;
    int line = 1;
    for (; a[at] && a[at] == b[at]; at++)
        if (a[at] == '\n')
            line++, start = at + 1;
    print_error("%s differ at line %d:\n  bf16 %.*s\n  f32  %.*s\n", what, line,
                (int)strcspn(a + start, "\n"), a + start, (int)strcspn(b + start, "\n"), b + start);
    return 0;
}

/* One gradient row per parameter of transformers' model (the corpus case's
   expected.json "parameters": the stored names, but for transformers 5's
   renames, GPT-NeoX's embed_out now lm_head), none other. */
static int grads_name_the_parameters(const char *name, const char *grads, const cJSON *parameters)
{
    const int n = cJSON_GetArraySize(parameters);
    int rows = 0, bad = 0;
    char cell[256];
    for (const char *line = strchr(grads, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        snprintf(cell, sizeof cell, "%.*s", (int)strcspn(line + 1, ",\n"), line + 1);
        rows++;
        int found = 0;
        for (const cJSON *p = parameters ? parameters->child : NULL; p && !found; p = p->next)
            found = cJSON_IsString(p) && strcmp(p->valuestring, cell) == 0;
        if (!found && !bad++)
            print_error("%s: gradient row '%s' names no parameter of the model\n", name, cell);
    }
    if (rows != n)
        print_error("%s: %d gradient rows for the model's %d parameters\n", name, rows, n);
    return !bad && rows == n && n > 0;
}

/* The loss column's value on the first row. */
static double first_loss(const char *out)
{
    const int col = csv_column_of(out, "loss");
    const char *line = strchr(out, '\n');
    return col >= 0 && line ? csv_number_at(line + 1, col) : NAN;
}

/* The corpus case's expected.json (transformers' figures for the float32
   original). */
static cJSON *corpus_expected(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "conformance/%s/expected.json", name);
    char *text = slurp(test_data_path(rel));
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    return doc;
}

/* bf16/ and f32/ on one instruction set: 1 when they agree byte for byte;
   *loss the bf16 run's. */
static int same_bytes(const char *name, const char *isa, const cJSON *parameters, double *loss)
{
    char bf16[1024], f32[1024], tokens[1024];
    snprintf(bf16, sizeof bf16, "%s", case_path(name, "bf16"));
    snprintf(f32, sizeof f32, "%s", case_path(name, "f32"));
    snprintf(tokens, sizeof tokens, "%s", case_path(name, "tokens.csv"));
    const char *grads_bf16 = in_scratch("grads_bf16.csv"), *grads_f32 = in_scratch("grads_f32.csv");
    program_run a = run_forward_grad(bf16, tokens, isa, grads_bf16),
                b = run_forward_grad(f32, tokens, isa, grads_f32);
    int ok = a.status == 0 && b.status == 0;
    if (!ok)
        print_error("%s on %s: exit %d (bf16) and %d (f32): %s%s", name, isa, a.status, b.status,
                    a.err, b.err);
    char *ga = slurp(grads_bf16), *gb = slurp(grads_f32), what[128];
    if (ok) {
        snprintf(what, sizeof what, "%s on %s: the standard outputs", name, isa);
        ok &= same_text(what, a.out, b.out);
        snprintf(what, sizeof what, "%s on %s: the gradients files", name, isa);
        ok &= same_text(what, ga, gb);
        ok &= ga && grads_name_the_parameters(name, ga, parameters);
    }
    *loss = first_loss(a.out);
    print_message("  %-13s %-7s bf16 and f32 %s, loss %.9g\n", name, isa,
                  ok ? "the same bytes" : "DIFFER", *loss);
    free(ga);
    free(gb);
    unlink(grads_bf16);
    unlink(grads_f32);
    program_run_free(&a);
    program_run_free(&b);
    return ok;
}

static void bf16_shards_as_f32(void **state)
{
    const char *name = *(const char **)*state;
    int ok = 1;
    double loss = NAN;
    cJSON *expected = corpus_expected(name);
    const cJSON *parameters = cJSON_GetObjectItemCaseSensitive(expected, "parameters"),
                *want_loss = cJSON_GetObjectItemCaseSensitive(expected, "loss");
    for (int isa = 0; isa < VP_ISA_COUNT; isa++)
        if (vp_isa_supported((vp_isa)isa))
            ok &= same_bytes(name, vp_isa_name((vp_isa)isa), parameters, &loss);
    const double want = cJSON_IsNumber(want_loss) ? want_loss->valuedouble : NAN,
                 diff = fabs(loss - want) / fabs(want);
    cJSON_Delete(expected);
    print_message("  %-13s loss %.9g, the float32 original's %.9g: %.2g relative (bound %.3g)\n",
                  name, loss, want, diff, LOSS_BOUND);
    if (!(diff <= LOSS_BOUND)) {
        print_error("%s: BF16 loss %.17g is %.3g relative from the corpus's %.17g (> %g)\n", name,
                    loss, diff, want, LOSS_BOUND);
        ok = 0;
    }
    if (!ok)
        fail();
}

/* gpt_neox's bf16/ copied into the scratch folder as dir. */
static void copy_bf16(const char *dir)
{
    static const char *const files[] = {
        "config.json", "model.safetensors.index.json", "model-00001-of-00003.safetensors",
        "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors"};
    assert_int_equal(mkdir(dir, 0755), 0);
    char from[1024], to[1024], part[128];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(part, sizeof part, "bf16/%s", files[i]);
        snprintf(from, sizeof from, "%s", case_path("gpt_neox", part));
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        copy_file(from, to);
    }
}

/* varprof on dir is refused: exit 1, nothing out, says in the message. */
static void expect_refused(const char *dir, const char *says)
{
    char tokens[1024];
    snprintf(tokens, sizeof tokens, "%s", case_path("gpt_neox", "tokens.csv"));
    const char *grads = in_scratch("refused_grads.csv");
    program_run run = run_forward_grad(dir, tokens, NULL, grads);
    const int left = access(grads, F_OK) == 0;
    unlink(grads);
    print_message("  exit %d: %s", run.status, run.err);
    if (run.status != 1 || run.out_length != 0 || left || !strstr(run.err, says))
        fail_msg("exit %d (want 1), %zu bytes out (want 0), %s; want \"%s\" in: %s", run.status,
                 run.out_length, left ? "a gradients file" : "no gradients file", says, run.err);
    program_run_free(&run);
}

static void a_missing_shard_is_named(void **state)
{
    (void)state;
    const char *dir = in_scratch("missing_shard");
    copy_bf16(dir);
    char shard[1100];
    snprintf(shard, sizeof shard, "%s/model-00002-of-00003.safetensors", dir);
    assert_int_equal(unlink(shard), 0);
    expect_refused(dir, "shard 'model-00002-of-00003.safetensors' is listed but missing");
}

/* Layer 0's dense_h_to_4h.weight, in the second shard, mapped to the first. */
#define MOVED "gpt_neox.layers.0.mlp.dense_h_to_4h.weight"

static void a_tensor_mapped_to_the_wrong_shard_is_named(void **state)
{
    (void)state;
    const char *dir = in_scratch("wrong_shard");
    copy_bf16(dir);
    char path[1100], text[MAX_TEXT];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    snprintf(text, sizeof text, "%s", read_text(path));
    char *at = strstr(text, "\"" MOVED "\": \"model-00002-of-00003");
    assert_non_null(at);
    at[strlen("\"" MOVED "\": \"model-0000")] = '1';
    write_text(path, text);
    expect_refused(dir, "tensor '" MOVED "' is mapped to 'model-00001-of-00003.safetensors', "
                        "which lacks it");
}

/* The table is the data: cases.txt lists exactly the table's cases. */
static void the_table_is_the_data(void **state)
{
    (void)state;
    char *text = slurp(test_data_path("family_shards/cases.txt"));
    assert_non_null(text);
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), n++)
        if (n >= N_CASES || strcmp(line, cases[n]) != 0)
            fail_msg("cases.txt line %zu is '%s', the table's '%s'", n + 1, line,
                     n < N_CASES ? cases[n] : "(none)");
    assert_int_equal(n, N_CASES);
    free(text);
}

int main(void)
{
    struct CMUnitTest tests[N_CASES + 3] = {
        cmocka_unit_test(the_table_is_the_data),
        cmocka_unit_test(a_missing_shard_is_named),
        cmocka_unit_test(a_tensor_mapped_to_the_wrong_shard_is_named),
    };
    for (size_t i = 0; i < N_CASES; i++)
        tests[i + 3] = (struct CMUnitTest){cases[i], bf16_shards_as_f32, NULL, NULL, &cases[i]};
    test_filter_from_environment();
    return cmocka_run_group_tests_name("BF16 and sharded checkpoints of the new families", tests,
                                       test_scratch_setup, test_scratch_teardown);
}
