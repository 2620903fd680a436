/* The program as a user runs it: exit codes, messages, and output read back
 * with the same libraries a user's script would use (libcsv, cJSON). */
#include <csv.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/varprof.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = calloc(1, 1 << 20);
    assert_non_null(text);
    size_t got = fread(text, 1, (1 << 20) - 1, f);
    text[got] = '\0';
    fclose(f);
    return text;
}

/* ---- bad input: each a usage error (2) or a run-time failure (1) ---- */

typedef struct {
    const char *args[8];
    int status;
    const char *message[3]; /* parts the one-line message must contain */
} bad_input;

static void check_bad_input(const bad_input *b)
{
    const char *argv[10] = {0};
    for (int i = 0; i < 8 && b->args[i]; i++)
        argv[i] = b->args[i];
    program_run run = run_varprof(argv);
    if (run.status != b->status) {
        print_error("varprof %s %s %s: exit %d, want %d; stderr:\n%s", b->args[0],
                    b->args[1] ? b->args[1] : "", b->args[2] ? b->args[2] : "", run.status,
                    b->status, run.err);
        fail();
    }
    assert_int_equal(run.out_length, 0); /* nothing half-written to stdout */
    assert_true(strncmp(run.err, "varprof: ", 9) == 0);
    for (int i = 0; i < 3 && b->message[i]; i++)
        assert_contains(run.err, b->message[i]);
    if (b->status == 2)
        assert_contains(run.err, "\nTry 'varprof --help'.\n");
    /* one line of message, then the hint for usage errors */
    size_t lines = 0;
    for (const char *c = run.err; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, b->status == 2 ? 2 : 1);
    program_run_free(&run);
}

static void bad_numbers_are_usage_errors(void **state)
{
    (void)state;
    const bad_input cases[] = {
        {{"--layers", "1.5"}, 2, {"--layers", "'1.5'", "1 to 1000000"}},
        {{"--layers", "-3"}, 2, {"--layers", "'-3'"}},
        {{"--layers", "12abc"}, 2, {"--layers", "'12abc'"}},
        {{"--layers", ""}, 2, {"--layers", "empty"}},
        {{"--layers", "0"}, 2, {"--layers", "'0'", "1 to 1000000"}},
        {{"--layers", "1000001"}, 2, {"--layers", "'1000001'"}},
        {{"--gain", "nan"}, 2, {"--gain", "'nan'", "finite"}},
        {{"--gain", "inf"}, 2, {"--gain", "'inf'"}},
        {{"--gain", "1e400"}, 2, {"--gain", "'1e400'", "range"}},
        {{"--gain", "-1"}, 2, {"--gain", "'-1'", ">= 0"}},
        {{"--embedding-var", "0"}, 2, {"--embedding-var", "'0'", "> 0"}},
        {{"--alpha", "0"}, 2, {"--alpha", "> 0"}},
        {{"--every", "0"}, 2, {"--every", "'0'"}},
        {{"table", "--gamma", "x"}, 2, {"--gamma", "'x'"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bad_input(&cases[i]);
}

static void bad_names_and_options_are_usage_errors(void **state)
{
    (void)state;
    const bad_input cases[] = {
        {{"--placement", "prenorm"}, 2, {"'prenorm'", "post-ln", "output-norm"}},
        {{"--placement", "post-norm"}, 2, {"'post-norm'", "post-ln", "output-norm"}},
        {{"--placement", "pre-norm,pre-ln"}, 2, {"pre-norm twice"}},
        {{"--placement", "pre-norm,"}, 2, {"--placement"}},
        {{"--bogus"}, 2, {"unknown option '--bogus'"}},
        {{"--layers"}, 2, {"--layers needs a value"}},
        {{"--format", "xml"}, 2, {"--format", "'xml'", "text, csv, json"}},
        {{"--engine", "quantum"}, 2, {"--engine", "'quantum'", "closed, mc, forward, all"}},
        {{"--width", "64"}, 2, {"--width applies to the sampled engines"}},
        {{"--engine", "mc", "--heads", "4"}, 2, {"--heads", "forward or all"}},
        {{"--engine", "forward", "--trials", "4"}, 2, {"--trials", "mc or all"}},
        {{"--engine", "forward", "--width", "100", "--heads", "8"}, 2, {"--heads", "divide"}},
        {{"--engine", "forward", "--width", "65537"}, 2, {"--width", "'65537'"}},
        {{"--engine", "forward", "--vocab", "0"}, 2, {"--vocab", "'0'"}},
        {{"--engine", "forward", "--tokens", "0"}, 2, {"--tokens", "'0'"}},
        {{"--engine", "forward", "--width", "65536", "--layers", "1000", "--weight-storage",
          "stored"},
         2,
         {"GiB", "of stored weights", "--weight-storage drawn"}},
        {{"--engine", "forward", "--width", "4096", "--batch", "4096", "--tokens", "4096"},
         2,
         {"GiB", "of activations", "batch smaller"}},
        {{"--engine", "forward", "--block", "mlp", "--placement", "parallel"}, 2, {"pre-norm"}},
        {{"--engine", "forward", "--embedding-var", "1e-300"}, 2, {"1e-30 to 1e30"}},
        {{"--engine", "forward", "--gain", "1e20"}, 2, {"1e-15 to 1e15"}},
        {{"--engine", "forward", "--width", "1", "--heads", "1"}, 2, {"width 1 with LayerNorm"}},
        {{"--engine", "forward", "--model", "gpt-2-small", "--weights", "w.safetensors"},
         2,
         {"--model and --weights"}},
        {{"--engine", "mc", "--width", "0"}, 2, {"--width", "'0'", "2 to 1048576"}},
        {{"--engine", "mc", "--width", "1048577"}, 2, {"--width", "'1048577'"}},
        {{"--engine", "mc", "--trials", "0"}, 2, {"--trials", "'0'"}},
        {{"--engine", "mc", "--threads", "0"}, 2, {"--threads", "'0'"}},
        {{"--engine", "mc", "--norm", "batchnorm"}, 2, {"--norm", "layernorm, rmsnorm"}},
        {{"--engine", "all", "--layers", "1000000", "--trials", "100000000"}, 2, {"GiB", "trials"}},
        {{"--gain", "2", "--gains", "g.csv"}, 2, {"--gain", "--gains"}},
        {{"--force"}, 2, {"--force", "--output"}},
        {{"tabel"}, 2, {"unknown command 'tabel'"}},
        {{"table", "--gains", "g.csv"}, 2, {"--gains does not apply to 'varprof table'"}},
        {{"--help=yes"}, 2, {"--help takes no value"}},
        {{"stray"}, 2, {"'stray'"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bad_input(&cases[i]);
}

static void bad_files_are_runtime_errors(void **state)
{
    (void)state;
    const char *wrong_count = in_scratch("count.csv");
    write_file(wrong_count, "1\n1\n1\n");
    const char *not_numeric = in_scratch("word.csv");
    write_file(not_numeric, "gain\n1\n1.5\nabc\n");
    const char *negative = in_scratch("negative.csv");
    write_file(negative, "1\n-2\n");
    const char *two_columns = in_scratch("two.csv");
    write_file(two_columns, "1,2\n3,4\n");
    const char *existing = in_scratch("existing.csv");
    write_file(existing, "precious\n");
    const bad_input cases[] = {
        {{"--gains", in_scratch("missing.csv")}, 1, {"--gains", "missing.csv", "No such file"}},
        {{"--layers", "2", "--gains", wrong_count}, 1, {"holds 3 gains", "4 sub-blocks"}},
        {{"--layers", "2", "--gains", not_numeric}, 1, {"line 4, column 1", "'abc'"}},
        {{"--layers", "1", "--gains", negative}, 1, {"line 2", "negative"}},
        {{"--layers", "1", "--gains", two_columns}, 1, {"line 1", "'gain'"}},
        {{"--gains", test_scratch()}, 1, {"directory"}},
        {{"--output", in_scratch("no/such/dir/out.csv")}, 1, {"out.csv", "No such file"}},
        {{"--output", existing}, 1, {"already exists", "--force"}},
        {{"--output", test_scratch(), "--force"}, 1, {"is a directory"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bad_input(&cases[i]);
    char *kept = read_file(existing);
    assert_string_equal(kept, "precious\n"); /* never overwritten without --force */
    free(kept);
}

/* A row with a cell more than its header shifts the columns after it: a
 * decimal comma made `0,5` read as 0 and the run exit 0. Every row must have
 * the header's cells, and the header must be exactly `gain`. */
static void ragged_and_misnamed_gains_files_are_refused(void **state)
{
    (void)state;
    const char *comma = in_scratch("comma.csv");
    write_file(comma, "gain\n1\n0,5\n");
    const char *columns = in_scratch("columns.csv");
    write_file(columns, "layer,part,gain\n0,attn,1\n0,mlp,0,5\n");
    const char *one_column = in_scratch("one-column.csv");
    write_file(one_column, "1\n2,5e-1\n");
    const char *first_row = in_scratch("first-row.csv");
    write_file(first_row, "0,5\n1\n");
    const char *short_row = in_scratch("short.csv");
    write_file(short_row, "layer,gain\n0,1\n1\n");
    const char *capital = in_scratch("capital.csv");
    write_file(capital, "layer,Gain\n0,1\n1,1\n");
    const char *spaced = in_scratch("spaced.csv");
    write_file(spaced, "\" gain \"\n1\n1\n");
    const char *twice = in_scratch("twice.csv");
    write_file(twice, "gain,gain\n1,1\n1,1\n");
    const bad_input cases[] = {
        {{"--layers", "1", "--gains", comma},
         1,
         {"line 3 has 2 cells; the header (line 1) has 1", "decimal comma", "write 0.5"}},
        {{"--layers", "1", "--gains", columns},
         1,
         {"line 3 has 4 cells; the header (line 1) has 3", "'0,5'", "decimal comma"}},
        {{"--layers", "1", "--gains", one_column},
         1,
         {"line 2 has 2 cells; the file is one column of gains", "write 2.5e-1"}},
        {{"--layers", "1", "--gains", first_row}, 1, {"line 1 has 2 cells", "write 0.5"}},
        {{"--layers", "1", "--gains", short_row},
         1,
         {"line 3 has 1 cell; the header (line 1) has 2"}},
        {{"--layers", "1", "--gains", capital},
         1,
         {"line 1, column 2", "'Gain' must be exactly 'gain'"}},
        {{"--layers", "1", "--gains", spaced}, 1, {"' gain ' must be exactly 'gain'"}},
        {{"--layers", "1", "--gains", twice}, 1, {"line 1 names columns 1 and 2 'gain'"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bad_input(&cases[i]);
    /* a short row has no decimal comma to blame */
    program_run run = RUN("--layers", "1", "--gains", short_row);
    assert_null(strstr(run.err, "decimal comma"));
    program_run_free(&run);
}

/* ---- the CSV interface, read back with libcsv ---- */

#define MAX_COLUMNS 64 /* room for columns yet to come */

typedef struct {
    char cells[70][MAX_COLUMNS + 1][64];
    size_t n_cells[70];
    size_t rows, column;
} csv_table;

static void on_cell(void *text, size_t length, void *data)
{
    csv_table *t = data;
    if (t->rows < 70 && t->column <= MAX_COLUMNS) {
        snprintf(t->cells[t->rows][t->column], 64, "%.*s", (int)length, (const char *)text);
        t->n_cells[t->rows] = ++t->column;
    }
}

static void on_row(int c, void *data)
{
    (void)c;
    csv_table *t = data;
    t->rows++;
    t->column = 0;
}

static double number(const char *cell)
{
    char *end;
    double value = strtod(cell, &end);
    assert_true(*cell && *end == '\0');
    return value;
}

static void csv_is_read_back_column_by_column(void **state)
{
    (void)state;
    program_run run =
        RUN("--placement", "pre-norm", "--layers", "32", "--gain", "2", "--format", "csv");
    assert_int_equal(run.status, 0);
    csv_table *t = calloc(1, sizeof *t);
    struct csv_parser parser;
    assert_int_equal(csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI), 0);
    assert_int_equal(csv_parse(&parser, run.out, run.out_length, on_cell, on_row, t),
                     run.out_length);
    assert_int_equal(csv_fini(&parser, on_cell, on_row, t), 0);
    csv_free(&parser);
    assert_int_equal(t->rows, 66); /* the header and sub-blocks 0 to 64 */
    const size_t columns = vp_csv_column_count();
    /* the first 21 of varprof(1), OUTPUT, and any added since */
    assert_in_range(columns, 21, MAX_COLUMNS);
    for (size_t c = 0; c < columns; c++)
        assert_string_equal(t->cells[0][c], vp_csv_column_name(c));
    assert_string_equal(t->cells[0][0], "engine");
    assert_string_equal(t->cells[0][20], "stream_norm");
    for (size_t k = 0; k <= 64; k++) {
        char(*row)[64] = t->cells[k + 1];
        assert_int_equal(t->n_cells[k + 1], columns);
        assert_string_equal(row[0], "closed");
        assert_string_equal(row[1], "pre-norm");
        assert_string_equal(row[2], ""); /* the closed form holds for either norm */
        assert_string_equal(row[3], "32");
        assert_int_equal(number(row[4]), k);
        double v = 1.0 + 4.0 * (double)k; /* pre-norm: v_k = 1 + k g^2, exact in double */
        assert_true(number(row[8]) == v);
        assert_true(fabs(number(row[9]) - sqrt(v)) <= 1e-15 * sqrt(v));
        assert_true(fabs(number(row[11]) - 1.0 / sqrt(v)) <= 1e-15);
        if (k == 0) {
            assert_string_equal(row[5], "");
            assert_string_equal(row[6], "embedding");
            assert_string_equal(row[7], "");
            assert_string_equal(row[10], "");
        } else {
            assert_int_equal(number(row[5]), (k - 1) / 2);
            assert_string_equal(row[6], k % 2 ? "attn" : "mlp");
            assert_true(number(row[7]) == 2.0);
            double u = 2.0 / sqrt(1.0 + 4.0 * (double)(k - 1));
            assert_true(fabs(number(row[10]) - u) <= 1e-15 * u);
        }
        for (size_t c = 12; c < columns; c++) {
            if (strcmp(t->cells[0][c], "log2_embedding_share") == 0)
                assert_true(fabs(number(row[c]) + 0.5 * log2(v)) <= 1e-14 * (1.0 + log2(v)));
            else if (strcmp(t->cells[0][c], "gain_setting") == 0)
                assert_string_equal(row[c], "2"); /* the sweep's gain, on every row */
            else
                assert_string_equal(row[c], ""); /* no bounds or measurements in closed form */
        }
    }
    /* the figure, as printed: 17 significant digits */
    assert_string_equal(t->cells[65][9], "16.031219541881399");
    free(t);
    program_run_free(&run);
}

static void csv_every_keeps_the_first_and_last(void **state)
{
    (void)state;
    program_run run = RUN("--layers", "5", "--every", "4", "--format", "csv");
    assert_int_equal(run.status, 0);
    /* sub-blocks 0, 4, 8 and the last, 10 */
    assert_contains(run.out, "\nclosed,pre-norm,,5,0,,");
    assert_contains(run.out, "\nclosed,pre-norm,,5,4,1,mlp,");
    assert_contains(run.out, "\nclosed,pre-norm,,5,8,3,mlp,");
    assert_contains(run.out, "\nclosed,pre-norm,,5,10,4,mlp,");
    size_t lines = 0;
    for (const char *c = run.out; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 5);
    program_run_free(&run);
}

/* ---- JSON, parsed back with cJSON ---- */

static void json_is_parsed_back(void **state)
{
    (void)state;
    program_run run = RUN("--placement", "post-ln,parallel", "--layers", "32", "--format", "json");
    assert_int_equal(run.status, 0);
    cJSON *doc = cJSON_Parse(run.out);
    assert_non_null(doc);
    assert_string_equal(cJSON_GetObjectItem(doc, "varprof")->valuestring, VP_VERSION);
    cJSON *profiles = cJSON_GetObjectItem(doc, "profiles");
    assert_int_equal(cJSON_GetArraySize(profiles), 2);
    cJSON *post = cJSON_GetArrayItem(profiles, 0);
    assert_string_equal(cJSON_GetObjectItem(post, "placement")->valuestring, "post-ln");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(post, "norm")));
    cJSON *rows = cJSON_GetObjectItem(post, "rows");
    assert_int_equal(cJSON_GetArraySize(rows), 65);
    cJSON *top = cJSON_GetArrayItem(rows, 64);
    assert_int_equal(cJSON_GetObjectItem(top, "sub_block")->valuedouble, 64);
    assert_true(cJSON_GetObjectItem(top, "embedding_share")->valuedouble == ldexp(1.0, -32));
    assert_true(cJSON_GetObjectItem(top, "log2_embedding_share")->valuedouble == -32.0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "update_ratio")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(top, "stream_var_lo")));
    cJSON *parallel = cJSON_GetArrayItem(profiles, 1);
    assert_int_equal(cJSON_GetObjectItem(parallel, "sub_blocks")->valuedouble, 32);
    cJSON *summary = cJSON_GetObjectItem(parallel, "top");
    /* parallel: v_K = 1 + 2 K g^2 = 65 with K = L = 32 */
    assert_true(fabs(cJSON_GetObjectItem(summary, "stream_size")->valuedouble - sqrt(65.0)) <
                1e-14);
    cJSON_Delete(doc);
    program_run_free(&run);
}

/* ---- the text a reader sees ---- */

static void main_job_prints_table_and_summary(void **state)
{
    (void)state;
    program_run run = RUN("--placement", "pre-norm", "--layers", "32", "--gain", "2");
    assert_int_equal(run.status, 0);
    assert_string_equal(run.err, "");
    assert_contains(run.out, "pre-norm");
    assert_contains(run.out, "sub-block");
    assert_contains(run.out, "       64     31  mlp");
    assert_contains(run.out, "stream size       16.03 x the embedding's");
    assert_contains(run.out, "last update ratio 12.6 %");
    assert_contains(run.out, "embedding share   6.24 %");
    program_run_free(&run);
}

static void maths_table_shows_the_chapter_figures(void **state)
{
    (void)state;
    program_run run = RUN("table", "--layers", "32");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "sqrt(v_64 / v_0) = sqrt(65) = 8.062 times");
    assert_contains(run.out, "u_64 = 1 / sqrt(1 + 63 * 1^2) = 0.125 = 12.5 %");
    assert_contains(run.out, "e_64 = (1 + 64 * 1^2)^(-1/2) = 0.124035 = 12.4 %");
    assert_contains(run.out, "e_64 = (1 + 1^2)^(-64/2) = 2^-32 = 2.32831e-10 = 2.328e-08 %");
    program_run_free(&run);
    run = RUN("table", "--layers", "32", "--gain", "2");
    assert_contains(run.out, "v_64 = 1 + 64 * 2^2 = 257");
    /* four significant figures, not 16 */
    assert_contains(run.out, "sqrt(v_64 / v_0) = sqrt(257) = 16.03 times");
    program_run_free(&run);
}

static void explain_walks_the_recursion(void **state)
{
    (void)state;
    program_run run = RUN("table", "--layers", "32", "--explain");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "v_1 = v_0 + g_1^2 = 1 + 1^2 = 2");
    assert_contains(run.out, "v_3 = v_2 + g_3^2 = 3 + 1^2 = 4");
    assert_contains(run.out, "v_64 = v_63 + g_64^2 = 64 + 1^2 = 65");
    assert_contains(run.out, "E_1 = E_0 / (v_0 (1 + g_1^2)) = 1 / (1 * (1 + 1^2)) = 0.5");
    assert_contains(run.out, "E_64 = E_63 / (v_63 (1 + g_64^2)) = 2^-63 / (1 * (1 + 1^2)) = 2^-64");
    assert_contains(run.out, "e_64 = sqrt(E_64 / v_64) = sqrt(2^-64 / 1) = 2^-32 = 2.328e-08 %");
    program_run_free(&run);
}

/* --model sets placement and layers, and leaves every other option alone */
static void model_keeps_other_options(void **state)
{
    (void)state;
    program_run run =
        RUN("--model", "llama-2-7b", "--gain", "2", "--format", "csv", "--every", "64");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "\nclosed,pre-norm,,32,64,31,mlp,2,257,16.031219541881399,");
    program_run_free(&run);
}

/* a gains file that fits one placement but not the next writes nothing */
static void gain_count_is_checked_before_writing(void **state)
{
    (void)state;
    const char *four = in_scratch("four.csv");
    write_file(four, "1\n1\n1\n1\n");
    program_run run = RUN("--layers", "2", "--placement", "pre-norm,parallel", "--gains", four);
    assert_int_equal(run.status, 1);
    assert_int_equal(run.out_length, 0);
    assert_contains(run.err, "2 layers of parallel make 2 sub-blocks");
    program_run_free(&run);
}

/* JSON numbers read back to the very doubles the CSV has */
static void json_numbers_are_exact(void **state)
{
    (void)state;
    program_run run = RUN("--placement", "deepnorm", "--layers", "32", "--format", "json");
    cJSON *doc = cJSON_Parse(run.out);
    assert_non_null(doc);
    cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "profiles"), 0);
    assert_true(cJSON_GetObjectItem(p, "alpha")->valuedouble == vp_deepnet_alpha(32));
    assert_true(cJSON_GetObjectItem(p, "beta")->valuedouble == vp_deepnet_beta(32));
    cJSON_Delete(doc);
    program_run_free(&run);
}

static void names_and_aliases(void **state)
{
    (void)state;
    program_run run = RUN("--placement", "pre-ln,peri-norm", "--format", "csv", "--layers", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "\nclosed,pre-norm,");
    assert_contains(run.out, "\nclosed,sandwich,");
    program_run_free(&run);
    run = RUN("--placement", "all", "--every", "64");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "The top of each stack:");
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
        assert_contains(run.out, vp_placement_name((vp_placement)p));
    program_run_free(&run);
}

static void overflow_is_said_never_printed(void **state)
{
    (void)state;
    program_run run = RUN("--placement", "none", "--gain", "10", "--layers", "1000");
    assert_int_equal(run.status, 0);
    assert_contains(run.err, "overflows double at sub-block 154");
    assert_contains(run.out, "goes out of range at sub-block 154 (layer 76, mlp)");
    assert_contains(run.out, "the largest double");
    assert_null(strstr(run.out, "inf"));
    assert_null(strstr(run.out, "nan"));
    program_run_free(&run);
    run = RUN("--placement", "none", "--gain", "10", "--layers", "1000", "--format", "csv");
    assert_null(strstr(run.out, "inf"));
    assert_null(strstr(run.out, "nan"));
    assert_contains(run.out, "\nclosed,none,,1000,153,76,attn,");
    assert_null(strstr(run.out, ",154,"));
    program_run_free(&run);
}

static void gains_file_sets_each_sub_block(void **state)
{
    (void)state;
    const char *single = in_scratch("single.csv");
    write_file(single, "0.5\n1\n2\n0\n");
    const char *headed = in_scratch("headed.csv");
    write_file(headed, "sub_block,gain\r\n1,0.5\r\n2,1\r\n3,2\r\n4,0\r\n");
    /* Excel's "CSV UTF-8" starts with a byte-order mark */
    const char *bom_headed = in_scratch("bom-headed.csv");
    write_file(bom_headed, "\xEF\xBB\xBFgain\n0.5\n1\n2\n0\n");
    const char *bom_single = in_scratch("bom-single.csv");
    write_file(bom_single, "\xEF\xBB\xBF"
                           "0.5\n1\n2\n0\n");
    const char *paths[] = {single, headed, bom_headed, bom_single};
    for (int i = 0; i < 4; i++) {
        program_run run = RUN("--layers", "2", "--gains", paths[i], "--format", "csv");
        assert_int_equal(run.status, 0);
        /* pre-norm: v = 1, 1.25, 2.25, 6.25, 6.25 */
        assert_contains(run.out, ",2,1,0,attn,0.5,1.25,");
        assert_contains(run.out, ",2,2,0,mlp,1,2.25,");
        assert_contains(run.out, ",2,3,1,attn,2,6.25,");
        assert_contains(run.out, ",2,4,1,mlp,0,6.25,");
        program_run_free(&run);
    }
}

/* The README's gains example runs as written from the top of the tree and
 * prints what the README shows; the manual's names the same file. */
static void gains_example_runs_as_written(void **state)
{
    (void)state;
    const char *command = "$ varprof --layers 4 --gains data/gains-example.csv\n";
    char *readme = read_file("README.md");
    assert_non_null(readme);
    const char *shown = strstr(readme, command);
    assert_non_null(shown);
    shown += strlen(command);
    const char *end = strstr(shown, "```");
    assert_non_null(end);
    program_run run = RUN("--layers", "4", "--gains", "data/gains-example.csv");
    assert_int_equal(run.status, 0);
    assert_int_equal(run.out_length, (size_t)(end - shown));
    assert_memory_equal(run.out, shown, run.out_length);
    program_run_free(&run);
    char *listing = read_file("data/gains-example.csv");
    assert_non_null(listing);
    assert_non_null(strstr(readme, listing));
    free(listing);
    free(readme);
    char *manual = read_file("man/varprof.1");
    assert_non_null(manual);
    assert_contains(manual, "$ varprof \\-\\-layers 4 \\-\\-gains data/gains\\-example.csv\n");
    assert_null(strstr(manual, "gains.csv"));
    free(manual);
}

static int no_temp_files_in(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        found |= strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return !found;
}

static void output_file_and_force(void **state)
{
    (void)state;
    const char *path = in_scratch("profile.csv");
    program_run run = RUN("--layers", "3", "--format", "csv", "--output", path);
    assert_int_equal(run.status, 0);
    assert_int_equal(run.out_length, 0);
    program_run_free(&run);
    char *first = read_file(path);
    assert_non_null(first);
    assert_true(strncmp(first, "engine,placement,", 17) == 0);
    run = RUN("--layers", "4", "--format", "csv", "--output", path);
    assert_int_equal(run.status, 1);
    program_run_free(&run);
    char *unchanged = read_file(path);
    assert_string_equal(first, unchanged);
    run = RUN("--layers", "4", "--format", "csv", "--output", path, "--force");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    char *replaced = read_file(path);
    assert_contains(replaced, ",4,8,3,mlp,");
    assert_true(no_temp_files_in(test_scratch()));
    /* the mode any program's new file gets, as `>` gives */
    const mode_t mask = umask(022);
    umask(mask);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
    /* a device is written in place, without --force */
    run = RUN("--layers", "2", "--output", "/dev/null");
    assert_int_equal(run.status, 0);
    assert_int_equal(run.out_length, 0);
    program_run_free(&run);
    free(first);
    free(unchanged);
    free(replaced);
}

static void help_and_version(void **state)
{
    (void)state;
    program_run run = RUN("--help");
    assert_int_equal(run.status, 0);
    const char *documented[] = {"--placement", "--layers",  "--gain ",      "--gains",
                                "--gamma",     "--alpha",   "--beta",       "--embedding-var",
                                "--engine",    "--format",  "--output",     "--force",
                                "--every",     "--explain", "varprof table"};
    for (size_t i = 0; i < sizeof documented / sizeof documented[0]; i++)
        assert_contains(run.out, documented[i]);
    program_run_free(&run);
    run = RUN("--version");
    assert_int_equal(run.status, 0);
    assert_string_equal(run.out, "varprof " VP_VERSION "\n");
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_numbers_are_usage_errors),
        cmocka_unit_test(bad_names_and_options_are_usage_errors),
        cmocka_unit_test(bad_files_are_runtime_errors),
        cmocka_unit_test(csv_is_read_back_column_by_column),
        cmocka_unit_test(csv_every_keeps_the_first_and_last),
        cmocka_unit_test(json_is_parsed_back),
        cmocka_unit_test(main_job_prints_table_and_summary),
        cmocka_unit_test(maths_table_shows_the_chapter_figures),
        cmocka_unit_test(explain_walks_the_recursion),
        cmocka_unit_test(names_and_aliases),
        cmocka_unit_test(model_keeps_other_options),
        cmocka_unit_test(gain_count_is_checked_before_writing),
        cmocka_unit_test(json_numbers_are_exact),
        cmocka_unit_test(overflow_is_said_never_printed),
        cmocka_unit_test(gains_file_sets_each_sub_block),
        cmocka_unit_test(ragged_and_misnamed_gains_files_are_refused),
        cmocka_unit_test(gains_example_runs_as_written),
        cmocka_unit_test(output_file_and_force),
        cmocka_unit_test(help_and_version),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("the program as a user runs it", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
