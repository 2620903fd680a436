/* The transformers conformance corpus (tests/data/conformance/, its README.md):
 * 38 tiny checkpoints of 22 decoder families, each written by transformers'
 * save_pretrained and run by transformers itself in float32. For every
 * family varprof reads, on every instruction set the CPU has, the forward
 * pass with --grad --loss next gives transformers' numbers: the stream norm
 * entering each layer and leaving the last (and after each attention
 * sub-block where the layer is sequential), the loss, within 1e-5 relative;
 * one --grads-out row per stored parameter under the checkpoint's own name (a
 * fused tensor's row the norm of its whole gradient), each within 1e-4
 * relative and their global norm within 1e-5. A config spelt as the Hub
 * still spells it (rope_theta, rope_scaling at the top level) gives the same
 * bits as transformers 5's rope_parameters. Every other family is refused
 * with exit 1, naming its model_type, writing nothing. The case names are the
 * test names, so VARPROF_TEST_FILTER='qwen2*' runs the Qwen2 cases alone. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "csv_text.h"
#include "run_program.h"
#include "test_filter.h"
#include "varprof/isa.h"

/* The model_types varprof reads. A case whose expected.json names one of
 * these is held to transformers' numbers; any other must be refused. When a
 * family is added, its model_type moves into this list. */
static const char *const families_read[] = {
    "gpt2",     "llama", "mistral", "qwen2",  "gemma2", "olmo2",  "qwen3", "starcoder2", "phi3",
    "gpt_neox", "phi",   "opt",     "cohere", "gptj",   "falcon", "bloom", "gemma3_text"};

/* Every case of the corpus (its cases.txt, checked below), a directory of
   tests/data/conformance and the name of its test; a *_hub_config case has
   its twin's weights with the config spelt as the Hub spells it. */
/* clang-format off */
static const char *cases[] = {
    "gpt2",                                  /* fused Conv1D c_attn, learned positions, tied */
    "llama", "llama_hub_config",             /* RoPE theta 500000 */
    "llama31", "llama31_hub_config",         /* Llama 3 rope scaling */
    "mistral", "mistral_hub_config",         /* GQA, six shards */
    "qwen2", "qwen2_hub_config",             /* q/k/v biases, BF16, six shards */
    "qwen2_tied", "qwen2_tied_hub_config",   /* q/k/v biases, tied head */
    "gemma2", "gemma2_hub_config",           /* sandwich (1 + w) norms, sqrt(d), soft caps */
    "olmo2", "olmo2_hub_config",             /* output norms, full-width QK-norm, sharded */
    "qwen3", "qwen3_hub_config",             /* per-head QK-norm, head_dim x heads != width */
    "qwen3_tied_bf16", "qwen3_tied_bf16_hub_config", /* the same, tied, BF16 */
    "phi3", "phi3_hub_config",               /* fused qkv_proj and gate_up_proj */
    "starcoder2", "starcoder2_hub_config",   /* LayerNorm with bias, biased GQA, gelu-tanh */
    "bloom",                                 /* ALiBi, embedding LayerNorm, fused qkv */
    "opt_pre_norm", "opt_post_ln",           /* ReLU, positions offset 2; Post-LN, project_in */
    "gemma3", "gemma3_hub_config",           /* QK-norm, (1 + w) norms, local RoPE base */
    "gpt_neox", "gpt_neox_hub_config",       /* parallel, two norms, rotary_pct, fused qkv */
    "gpt_neox_sequential",                   /* the same, sequential */
    "gptj",                                  /* parallel, one norm, interleaved rotary_dim */
    "falcon", "falcon_hub_config",           /* parallel, multi-query, fused qkv, no biases */
    "phi", "phi_hub_config",                 /* parallel, partial rotary, dense, biases */
    "cohere", "cohere_hub_config",           /* parallel, LayerNorm without bias, logit_scale */
};
/* clang-format on */
#define N_CASES (sizeof cases / sizeof *cases)
#define HUB_SUFFIX "_hub_config"

/* The bounds: the stream norms, the loss and the global gradient norm
   relative, each parameter's gradient looser (the smallest are sums of
   float32 terms that cancel), absolute where transformers' is exactly 0. */
#define TOLERANCE 1e-5
#define GRAD_TOLERANCE 1e-4
#define ZERO_BOUND 1e-12
/* A gradient zero in exact arithmetic comes out of float32 as rounding: a
   key bias with no rotation after it (OPT's; GPT-2's too, hidden inside
   c_attn) shifts every score of a row alike, which the softmax ignores.
   Where transformers' figure is below float32's epsilon times the global
   norm, varprof's must be too. */
#define ROUNDING_FLOOR 1.2e-7

enum { STREAM, LOSS, GRAD, GLOBAL, KINDS };
static const char *const kind_names[KINDS] = {"stream", "loss", "gradient", "global gradient"};

/* One case on one instruction set: the worst relative difference of each
   kind (count[kind] how many were compared), whether any missed. */
typedef struct {
    const char *name, *isa;
    double worst[KINDS];
    int count[KINDS], missed[KINDS], bad;
} tally;

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t size = 1 << 16, n = 0, got;
    char *text = malloc(size);
    assert_non_null(text);
    while ((got = fread(text + n, 1, size - n - 1, f)) > 0)
        if ((n += got) + 1 == size) {
            text = realloc(text, size *= 2);
            assert_non_null(text);
        }
    fclose(f);
    text[n] = '\0';
    return text;
}

static const char *case_dir(const char *name)
{
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", test_data_path("conformance"), name);
    return dir;
}

static cJSON *load_expected(const char *name)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/expected.json", case_dir(name));
    char *text = read_text(path);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(doc, "model_type")))
        fail_msg("%s: missing, or not a JSON object with a model_type", path);
    return doc;
}

static int family_is_read(const char *model_type)
{
    for (size_t i = 0; i < sizeof families_read / sizeof *families_read; i++)
        if (strcmp(model_type, families_read[i]) == 0)
            return 1;
    return 0;
}

/* The same command for every case, on instruction set isa (NULL: the best),
   its gradients to grads (removed first). */
static program_run run_case(const char *name, const char *isa, const char *grads)
{
    char dir[1024], tokens[1100];
    snprintf(dir, sizeof dir, "%s", case_dir(name));
    snprintf(tokens, sizeof tokens, "%s/tokens.csv", dir);
    return run_forward_grad(dir, tokens, isa, grads);
}

/* Notes got against transformers' want, printing the first miss of its kind. */
static void compare(tally *t, int kind, const char *what, double got, double want, double bound)
{
    const int absolute = want == 0;
    double diff = absolute ? fabs(got) : fabs(got - want) / fabs(want);
    if (isnan(diff))
        diff = INFINITY;
    if (!absolute && !(diff <= t->worst[kind]))
        t->worst[kind] = diff;
    t->count[kind]++;
    if (diff <= (absolute ? ZERO_BOUND : bound))
        return;
    if (!t->missed[kind]++)
        print_error("%s on %s: %s: %.17g, transformers %.17g (%.2g %s > %g)\n", t->name, t->isa,
                    what, got, want, diff, absolute ? "absolute" : "relative",
                    absolute ? ZERO_BOUND : bound);
    t->bad = 1;
}

/* The text of the cell in column col of line, in cell (size bytes). */
static const char *cell_at(const char *line, int col, char *cell, size_t size)
{
    const char *p = line;
    for (int c = 0; c < col && p; c++) {
        p = strpbrk(p, ",\n");
        p = p && *p == ',' ? p + 1 : NULL;
    }
    const size_t n = p ? strcspn(p, ",\n") : 0;
    snprintf(cell, size, "%.*s", (int)n, p ? p : "");
    return cell;
}

#define MAX_ROWS 64

/* The profile's rows: norm[k] the stream_norm of sub-block k; returns how
   many rows, -1 (said) where the columns or the parts are not as they
   should be. *parallel: the parts are 'block' (a layer a row). */
static int profile_rows(const char *out, tally *t, double *norm, int *parallel)
{
    const int c_sub = csv_column_of(out, "sub_block"), c_part = csv_column_of(out, "part"),
              c_norm = csv_column_of(out, "stream_norm");
    if (c_sub < 0 || c_part < 0 || c_norm < 0) {
        print_error("%s on %s: the CSV lacks sub_block, part or stream_norm\n", t->name, t->isa);
        return -1;
    }
    int rows = 0, blocks = 0;
    char part[32];
    for (const char *line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const double sub = csv_number_at(line + 1, c_sub);
        cell_at(line + 1, c_part, part, sizeof part);
        const int k = rows++;
        const char *want = k == 0 ? "embedding" : k % 2 ? "attn" : "mlp";
        blocks += strcmp(part, "block") == 0;
        if (k >= MAX_ROWS || sub != k || (strcmp(part, want) != 0 && strcmp(part, "block") != 0)) {
            print_error("%s on %s: row %d is sub-block %g, part '%s'\n", t->name, t->isa, k, sub,
                        part);
            return -1;
        }
        norm[k] = csv_number_at(line + 1, c_norm);
    }
    *parallel = blocks > 0;
    if (blocks && blocks != rows - 1) {
        print_error("%s on %s: 'block' rows mixed with attn/mlp\n", t->name, t->isa);
        return -1;
    }
    return rows;
}

/* stream[i] is sub-block 2i and mid[i] 2i + 1 where the layers are
   sequential (gpt2's mid is null: not recorded), stream[i] sub-block i and
   mid null where they are parallel. */
static void check_streams(const char *out, const cJSON *want, tally *t)
{
    double norm[MAX_ROWS];
    int parallel;
    const int rows = profile_rows(out, t, norm, &parallel);
    const cJSON *stream = cJSON_GetObjectItemCaseSensitive(want, "stream"),
                *mid = cJSON_GetObjectItemCaseSensitive(want, "mid");
    const int layers = cJSON_GetArraySize(stream) - 1, per = parallel ? 1 : 2;
    if (rows >= 0 && rows != 1 + per * layers)
        print_error("%s on %s: %d rows for %d %s layers\n", t->name, t->isa, rows, layers,
                    parallel ? "parallel" : "sequential");
    if (rows >= 0 && parallel && !cJSON_IsNull(mid))
        print_error("%s on %s: parallel rows, but transformers' layers are sequential\n", t->name,
                    t->isa);
    if (rows != 1 + per * layers || (parallel && !cJSON_IsNull(mid))) {
        t->bad = t->missed[STREAM] = 1;
        return;
    }
    char what[96];
    for (int i = 0; i <= layers; i++) {
        snprintf(what, sizeof what, "stream norm entering layer %d (sub-block %d)", i, per * i);
        compare(t, STREAM, what, norm[per * i], cJSON_GetArrayItem(stream, i)->valuedouble,
                TOLERANCE);
    }
    for (int i = 0; i < layers && cJSON_IsArray(mid); i++) {
        snprintf(what, sizeof what, "stream norm after layer %d's attention (sub-block %d)", i,
                 2 * i + 1);
        compare(t, STREAM, what, norm[2 * i + 1], cJSON_GetArrayItem(mid, i)->valuedouble,
                TOLERANCE);
    }
}

/* The loss column: one value on every row, transformers' loss. */
static void check_loss(const char *out, const cJSON *want, tally *t)
{
    const int col = csv_column_of(out, "loss");
    if (col < 0) {
        print_error("%s on %s: the profile's CSV has no 'loss' column\n", t->name, t->isa);
        t->bad = t->missed[LOSS] = 1;
        return;
    }
    double first = NAN;
    int row = 0;
    for (const char *line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const double loss = csv_number_at(line + 1, col);
        if (row++ == 0)
            first = loss;
        else if (loss != first && !t->missed[LOSS]++) {
            print_error("%s on %s: loss %.17g on row %d, %.17g on the first\n", t->name, t->isa,
                        loss, row - 1, first);
            t->bad = 1;
        }
    }
    compare(t, LOSS, "loss", first, cJSON_GetObjectItemCaseSensitive(want, "loss")->valuedouble,
            TOLERANCE);
}

static int parameter_index(const cJSON *parameters, const char *name)
{
    int k = 0;
    for (const cJSON *p = parameters ? parameters->child : NULL; p; p = p->next, k++)
        if (cJSON_IsString(p) && strcmp(p->valuestring, name) == 0)
            return k;
    return -1;
}

/* --grads-out: one row per stored parameter by the checkpoint's own name,
   each its gradient's norm, and their norm together. */
static void check_grads(const char *path, const cJSON *want, tally *t)
{
    char *text = read_text(path);
    if (!text) {
        print_error("%s on %s: no gradients file written\n", t->name, t->isa);
        t->bad = t->missed[GRAD] = 1;
        return;
    }
    if (strncmp(text, "name,shape,frobenius,rms\n", 25) != 0) {
        print_error("%s on %s: the gradients' header is '%.*s'\n", t->name, t->isa,
                    (int)strcspn(text, "\n"), text);
        t->bad = 1;
    }
    const cJSON *parameters = cJSON_GetObjectItemCaseSensitive(want, "parameters"),
                *grad = cJSON_GetObjectItemCaseSensitive(want, "grad");
    const int n = cJSON_GetArraySize(parameters), c_name = csv_column_of(text, "name"),
              c_frob = csv_column_of(text, "frobenius");
    const double global = cJSON_GetObjectItemCaseSensitive(want, "grad_global")->valuedouble;
    int *seen = calloc((size_t)n + 1, sizeof *seen), extra = 0, missing = 0;
    assert_non_null(seen);
    double sum = 0;
    char name[256], first_extra[272] = "";
    for (const char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        cell_at(line + 1, c_name, name, sizeof name);
        const double frobenius = csv_number_at(line + 1, c_frob);
        sum += frobenius * frobenius;
        const int k = parameter_index(parameters, name);
        if (k < 0 || seen[k]++) {
            if (!extra++)
                snprintf(first_extra, sizeof first_extra, "%s%s", name, k < 0 ? "" : " (again)");
            continue;
        }
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(grad, name);
        const double w = cJSON_IsNumber(g) ? g->valuedouble : 0, noise = ROUNDING_FLOOR * global;
        if (w > 0 && w < noise) {
            t->count[GRAD]++;
            if (!(frobenius <= noise) && !t->missed[GRAD]++)
                print_error("%s on %s: %s: %.17g, transformers %.17g, both to be below %.3g "
                            "(rounding around an exact 0)\n",
                            t->name, t->isa, name, frobenius, w, noise);
            t->bad |= !(frobenius <= noise);
            continue;
        }
        compare(t, GRAD, name, frobenius, w, GRAD_TOLERANCE);
    }
    const char *first_missing = NULL;
    for (int k = 0; k < n; k++)
        if (!seen[k] && !missing++)
            first_missing = cJSON_GetArrayItem(parameters, k)->valuestring;
    if (extra)
        print_error("%s on %s: %d gradient rows name no parameter of the checkpoint (or one "
                    "again), the first '%s'\n",
                    t->name, t->isa, extra, first_extra);
    if (missing)
        print_error("%s on %s: %d of the checkpoint's %d parameters have no gradient row, the "
                    "first '%s'\n",
                    t->name, t->isa, missing, n, first_missing);
    t->bad |= extra || missing;
    compare(t, GLOBAL, "sqrt(sum frobenius^2)", sqrt(sum), global, TOLERANCE);
    free(seen);
    free(text);
}

/* A *_hub_config case's standard output is its twin's, byte for byte: the
   same weights with the config's other spelling give the same bits. */
static int same_bits_as_twin(const char *name, const char *isa, const program_run *run)
{
    char twin[128];
    snprintf(twin, sizeof twin, "%.*s", (int)(strlen(name) - strlen(HUB_SUFFIX)), name);
    const char *grads = in_scratch("twin_grads.csv");
    program_run other = run_case(twin, isa, grads);
    unlink(grads);
    const int same = other.status == 0 && other.out_length == run->out_length &&
                     memcmp(other.out, run->out, run->out_length) == 0;
    if (!same) { /* the first line that differs */
        size_t at = 0, start = 0;
        int line = 1;
        for (; run->out[at] && run->out[at] == other.out[at]; at++)
            if (run->out[at] == '\n')
                line++, start = at + 1;
        const char *a = run->out + start, *b = other.out + start;
        print_error("%s on %s: standard output differs from %s's (exit %d) at line %d:\n  got  "
                    "%.*s\n  want %.*s\n",
                    name, isa, twin, other.status, line, (int)strcspn(a, "\n"), a,
                    (int)strcspn(b, "\n"), b);
    }
    program_run_free(&other);
    return same;
}

static void worst_text(const tally *t, int kind, char *text, size_t size)
{
    const char *missed = t->missed[kind] ? " (missed)" : "";
    if (t->count[kind] == 0)
        snprintf(text, size, "-%s", missed);
    else
        snprintf(text, size, "%.1e%s", t->worst[kind], missed);
}

/* A family varprof reads, on every instruction set: returns whether any missed. */
static int held(const char *name, const cJSON *want)
{
    const int hub = strlen(name) > strlen(HUB_SUFFIX) &&
                    strcmp(name + strlen(name) - strlen(HUB_SUFFIX), HUB_SUFFIX) == 0;
    int bad = 0;
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        tally t = {.name = name, .isa = vp_isa_name((vp_isa)isa)};
        const char *grads = in_scratch("grads.csv");
        program_run run = run_case(name, t.isa, grads);
        if (run.status != 0) {
            print_error("%s on %s: exit %d: %s", name, t.isa, run.status, run.err);
            unlink(grads);
            program_run_free(&run);
            bad = 1;
            continue;
        }
        check_streams(run.out, want, &t);
        check_loss(run.out, want, &t);
        check_grads(grads, want, &t);
        unlink(grads);
        const int twin = hub ? same_bits_as_twin(name, t.isa, &run) : -1;
        char w[KINDS][48];
        for (int k = 0; k < KINDS; k++)
            worst_text(&t, k, w[k], sizeof w[k]);
        print_message("  %-26s %-7s worst relative difference: %s %s, %s %s, %s %s, %s %s%s\n",
                      name, t.isa, kind_names[STREAM], w[STREAM], kind_names[LOSS], w[LOSS],
                      kind_names[GRAD], w[GRAD], kind_names[GLOBAL], w[GLOBAL],
                      twin < 0 ? ""
                      : twin   ? "; the twin's bits"
                               : "; NOT the twin's bits");
        bad |= t.bad || twin == 0;
        program_run_free(&run);
    }
    return bad;
}

/* Any other family, on the default instruction set (the refusal comes before
   any arithmetic): exit 1 naming its model_type, nothing written. */
static int refused(const char *name, const char *model_type)
{
    const char *grads = in_scratch("grads.csv");
    program_run run = run_case(name, NULL, grads);
    char says[128];
    snprintf(says, sizeof says, "model_type '%s'", model_type);
    const int left = access(grads, F_OK) == 0;
    unlink(grads);
    const int bad = run.status != 1 || !strstr(run.err, says) || run.out_length != 0 || left;
    if (bad)
        print_error("%s: exit %d (want 1), %zu bytes on standard output (want 0), %s; want "
                    "\"%s\" in standard error: %s",
                    name, run.status, run.out_length,
                    left ? "a gradients file left behind" : "no gradients file", says, run.err);
    else
        print_message("  %-26s refused: %s", name, run.err);
    program_run_free(&run);
    return bad;
}

static void conforms(void **state)
{
    const char *name = *(const char **)*state;
    cJSON *want = load_expected(name);
    const char *model_type = cJSON_GetObjectItemCaseSensitive(want, "model_type")->valuestring;
    const int bad = family_is_read(model_type) ? held(name, want) : refused(name, model_type);
    cJSON_Delete(want);
    if (bad)
        fail();
}

/* The table is the corpus: cases.txt lists exactly its cases. */
static void the_table_is_the_corpus(void **state)
{
    (void)state;
    char *text = read_text(test_data_path("conformance/cases.txt"));
    assert_non_null(text);
    int listed[N_CASES] = {0};
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        size_t i = 0;
        while (i < N_CASES && strcmp(cases[i], line) != 0)
            i++;
        if (i == N_CASES || listed[i]++)
            fail_msg("cases.txt lists '%s', %s", line,
                     i == N_CASES ? "which is not in the test's table" : "twice");
    }
    for (size_t i = 0; i < N_CASES; i++)
        if (!listed[i])
            fail_msg("the table's case '%s' is not in cases.txt", cases[i]);
    free(text);
}

int main(void)
{
    struct CMUnitTest tests[N_CASES + 1] = {
        cmocka_unit_test(the_table_is_the_corpus),
    };
    for (size_t i = 0; i < N_CASES; i++)
        tests[i + 1] = (struct CMUnitTest){cases[i], conforms, NULL, NULL, &cases[i]};
    test_filter_from_environment();
    return cmocka_run_group_tests_name("transformers conformance corpus", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
