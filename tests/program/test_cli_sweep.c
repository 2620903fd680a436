/* Sweeps in one command (issue 12): --gain, --layers and --width as lists,
 * --engine as a list, the columns and the table that carry the swept values,
 * the refusals, the figure against the swept value, and the chapter's sweep
 * figures made by the commands the manual shows. The order of the
 * combinations and their cap in the library are tests/unit/test_sweep.c. */
#include <cjson/cJSON.h>
#include <csv.h>
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
#include "varprof/sweep.h"

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

static program_run run_ok(const char *const *args)
{
    program_run run = run_varprof(args);
    if (run.status != 0)
        print_error("exit %d; stderr:\n%s", run.status, run.err);
    assert_int_equal(run.status, 0);
    return run;
}
#define RUN_OK(...) run_ok((const char *const[]){__VA_ARGS__, NULL})

/* ---- the CSV read back with libcsv, as a user's script would ---- */

#define MAX_ROWS 512
#define MAX_COLS 40

typedef struct {
    char *cell[MAX_ROWS][MAX_COLS];
    size_t rows, col, row_cols[MAX_ROWS];
} table;

static void on_cell(void *text, size_t length, void *data)
{
    table *t = data;
    assert_true(t->rows < MAX_ROWS && t->col < MAX_COLS);
    char *copy = calloc(length + 1, 1);
    assert_non_null(copy);
    if (length) // libcsv passes NULL for an empty field
        memcpy(copy, text, length);
    t->cell[t->rows][t->col++] = copy;
}

static void on_row(int c, void *data)
{
    (void)c;
    table *t = data;
    t->row_cols[t->rows++] = t->col;
    t->col = 0;
}

static table *read_csv(const char *text)
{
    table *t = calloc(1, sizeof *t);
    assert_non_null(t);
    struct csv_parser p;
    assert_int_equal(csv_init(&p, CSV_STRICT | CSV_EMPTY_IS_NULL), 0);
    assert_int_equal(csv_parse(&p, text, strlen(text), on_cell, on_row, t), strlen(text));
    csv_fini(&p, on_cell, on_row, t);
    csv_free(&p);
    return t;
}

static void free_table(table *t)
{
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->row_cols[r]; c++)
            free(t->cell[r][c]);
    free(t);
}

static size_t column(const table *t, const char *name)
{
    for (size_t c = 0; c < t->row_cols[0]; c++)
        if (t->cell[0][c] && strcmp(t->cell[0][c], name) == 0)
            return c;
    fail_msg("no column %s", name);
    return 0;
}

static const char *cell(const table *t, size_t row, const char *name)
{
    const char *text = t->cell[row][column(t, name)];
    return text ? text : "";
}

/* ---- combinations: how many, in which order, with their values ---- */

/* Placements vary slowest, then gains, then layers: each combination's rows
 * together, sub-block 0 first, each row carrying its gain setting. */
static void csv_rows_come_one_combination_after_another(void **state)
{
    (void)state;
    program_run run = RUN_OK("--placement", "pre-norm,post-ln", "--gain", "1,2", "--layers", "2,3",
                             "--format", "csv");
    table *t = read_csv(run.out);
    static const struct {
        const char *placement, *gain, *layers;
    } want[] = {{"pre-norm", "1", "2"}, {"pre-norm", "1", "3"}, {"pre-norm", "2", "2"},
                {"pre-norm", "2", "3"}, {"post-ln", "1", "2"},  {"post-ln", "1", "3"},
                {"post-ln", "2", "2"},  {"post-ln", "2", "3"}};
    size_t row = 1;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const size_t sub_blocks = 2 * (size_t)atoi(want[i].layers);
        for (size_t k = 0; k <= sub_blocks; k++, row++) {
            assert_true(row < t->rows);
            assert_string_equal(cell(t, row, "placement"), want[i].placement);
            assert_string_equal(cell(t, row, "layers"), want[i].layers);
            assert_string_equal(cell(t, row, "gain_setting"), want[i].gain);
            assert_int_equal(atoi(cell(t, row, "sub_block")), (int)k);
            assert_string_equal(cell(t, row, "gain"), k == 0 ? "" : want[i].gain);
            assert_string_equal(cell(t, row, "width"), ""); /* the closed form has none */
        }
    }
    assert_int_equal(row, t->rows); /* nothing more */
    free_table(t);
    program_run_free(&run);
}

/* With widths, each sampled profile says its width; the closed form, the
 * same at every width, comes once per placement, gain and depth. */
static void widths_are_a_column_and_the_closed_form_comes_once(void **state)
{
    (void)state;
    program_run run = RUN_OK("--engine", "closed,mc", "--width", "4,8", "--gain", "1,2", "--layers",
                             "1", "--trials", "16", "--format", "csv");
    table *t = read_csv(run.out);
    /* per gain: closed (3 rows), mc at width 4, mc at width 8 */
    static const char *const engine[] = {"closed", "mc", "mc"}, *const width[] = {"", "4", "8"};
    size_t row = 1;
    for (int g = 0; g < 2; g++)
        for (int e = 0; e < 3; e++)
            for (int k = 0; k < 3; k++, row++) {
                assert_string_equal(cell(t, row, "engine"), engine[e]);
                assert_string_equal(cell(t, row, "width"), width[e]);
                assert_string_equal(cell(t, row, "gain_setting"), g == 0 ? "1" : "2");
            }
    assert_int_equal(row, t->rows);
    free_table(t);
    program_run_free(&run);
}

/* JSON: one profile per combination and engine, each with its gain, layers
 * and, sampled, its width. */
static void json_profiles_carry_the_swept_values(void **state)
{
    (void)state;
    program_run run = RUN_OK("--engine", "mc", "--gain", "0.5,4", "--layers", "1,2", "--width",
                             "4,8", "--trials", "16", "--format", "json");
    cJSON *doc = cJSON_Parse(run.out);
    assert_non_null(doc);
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(doc, "profiles");
    assert_int_equal(cJSON_GetArraySize(profiles), 8);
    size_t i = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, profiles)
    {
        const double gain = i < 4 ? 0.5 : 4.0;
        const double layers = (i / 2) % 2 ? 2 : 1, width = i % 2 ? 8 : 4;
        assert_true(cJSON_GetObjectItemCaseSensitive(p, "gain")->valuedouble == gain);
        assert_true(cJSON_GetObjectItemCaseSensitive(p, "layers")->valuedouble == layers);
        const cJSON *sampling = cJSON_GetObjectItemCaseSensitive(p, "sampling");
        assert_true(cJSON_GetObjectItemCaseSensitive(sampling, "width")->valuedouble == width);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(p, "rows")),
                         2 * (int)layers + 1);
        i++;
    }
    cJSON_Delete(doc);
    program_run_free(&run);
}

/* The text ends with the top of every stack, one line per combination. */
static void text_ends_with_the_tops_of_the_sweep(void **state)
{
    (void)state;
    program_run run = RUN_OK("--placement", "pre-norm,post-ln", "--gain", "1,2", "--layers", "2");
    const char *tops = strstr(run.out, "\nThe top of each stack:\n");
    assert_non_null(tops);
    assert_contains(tops,
                    "placement       gain  layers  engine        size    update  emb. share\n");
    /* pre-norm at gain g: v_K = 1 + K g^2, the share 1 / sqrt(v_K) */
    assert_contains(tops,
                    "pre-norm           1       2  closed       2.236      50 %      44.7 %\n");
    assert_contains(tops, "pre-norm           2       2  closed       4.123");
    assert_contains(tops, "post-ln            1       2  closed           1");
    assert_contains(tops, "post-ln            2       2  closed           1");
    const char *last = strstr(tops, "post-ln            2");
    assert_non_null(last);
    assert_null(strchr(strchr(last, '\n') + 1, '\n')); /* the last line of the output */
    program_run_free(&run);
}

static void text_table_names_widths_when_sampled(void **state)
{
    (void)state;
    program_run run =
        RUN_OK("--engine", "closed,mc", "--width", "4,8", "--layers", "1", "--trials", "16");
    const char *tops = strstr(run.out, "\nThe top of each stack:\n");
    assert_non_null(tops);
    assert_contains(tops, "placement       gain  layers   width  engine");
    assert_contains(tops, "pre-norm           1       1       -  closed");
    assert_contains(tops, "pre-norm           1       1       4  mc");
    assert_contains(tops, "pre-norm           1       1       8  mc");
    /* and each width's verdict, named */
    assert_contains(run.out, "gain 1, 1 layer, width 4:\npre-norm: ");
    assert_contains(run.out, "gain 1, 1 layer, width 8:\npre-norm: ");
    program_run_free(&run);
}

/* A model's depth swept: the heading says so, each depth is profiled. */
static void a_models_depth_can_be_swept(void **state)
{
    (void)state;
    program_run run = RUN_OK("--model", "gpt-2-small", "--layers", "6,12", "--format", "text");
    assert_contains(run.out, "model gpt-2-small");
    assert_contains(run.out, "(6,12 here, as --layers says)");
    assert_contains(run.out, "pre-norm           1       6  closed       3.606");
    assert_contains(run.out, "pre-norm           1      12  closed           5");
    program_run_free(&run);
}

/* Without a list nothing changes: several placements still end with the
 * placements' table, which has no gain column. */
static void a_single_stack_is_no_sweep(void **state)
{
    (void)state;
    program_run run = RUN_OK("--placement", "pre-norm,post-ln", "--gain", "2", "--layers", "2");
    assert_contains(run.out, "\nThe top of each stack:\nplacement     engine   sub-blocks");
    program_run_free(&run);
}

/* ---- --engine as a list ---- */

static void engine_list_compares_without_a_forward_pass(void **state)
{
    (void)state;
    program_run run = RUN_OK("--engine", "closed,mc", "--layers", "2", "--width", "16");
    assert_contains(run.out, "pre-norm: Monte Carlo (reduced method, width 16");
    assert_contains(run.out, "pre-norm: agrees");
    assert_null(strstr(run.out, "forward"));
    program_run_free(&run);
    /* the forward pass against its prediction, without the Monte Carlo */
    run = RUN_OK("--engine", "forward,closed", "--layers", "1", "--width", "16", "--heads", "2");
    assert_contains(run.out, "pre-norm: parts from its prediction");
    assert_null(strstr(run.out, "Monte Carlo"));
    program_run_free(&run);
    /* sampled engines alone: each profile, no verdict */
    run = RUN_OK("--engine", "mc,forward", "--layers", "1", "--width", "16", "--heads", "2",
                 "--format", "csv");
    table *t = read_csv(run.out);
    assert_int_equal(t->rows, 1 + 3 + 3);
    assert_string_equal(cell(t, 1, "engine"), "mc");
    assert_string_equal(cell(t, 4, "engine"), "forward");
    free_table(t);
    program_run_free(&run);
}

/* README and varprof(1): the finite-width share at width 4096 with RMSNorm,
 * as written there, on any machine (no width-4096 network is built). */
static void readme_rmsnorm_example_runs_as_written(void **state)
{
    (void)state;
    program_run run = RUN_OK("--placement", "post-ln", "--engine", "closed,mc", "--norm", "rmsnorm",
                             "--width", "4096");
    assert_contains(run.out, "post-ln: Monte Carlo (reduced method, width 4096");
    assert_contains(run.out, "embedding share 2.3563e-10 against 2.3283e-10 closed (+1.2 %");
    program_run_free(&run);
}

/* ---- refusals: each a usage error naming the option and what is allowed ---- */

static void bad_lists_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *args[8];
        const char *message[2];
    } bad[] = {
        {{"--engine", "all,mc"}, {"--engine: 'all,mc'", "stands alone"}},
        {{"--engine", "mc,mc"}, {"--engine: 'mc,mc' names mc twice"}},
        {{"--engine", "closed,,mc"}, {"empty item", "without spaces"}},
        {{"--engine", "closed,quantum"}, {"'quantum'", "closed, mc, forward, all"}},
        {{"--gain", "1,1.0"}, {"--gain: '1,1.0' gives 1.0 twice"}},
        {{"--gain", "1,"}, {"--gain: '1,' has an empty item"}},
        {{"--gain", "1,-2"}, {"--gain: '-2' is out of range"}},
        {{"--layers", "4,0"}, {"--layers", "'0'"}},
        {{"--layers", "8,8"}, {"gives 8 twice"}},
        {{"table", "--gain", "1,2"}, {"'varprof table' takes one value"}},
        {{"--gain", "1,2", "--gains", "gains.csv"}, {"--gain and --gains both given"}},
        {{"--layers", "8,16", "--gains", "gains.csv"},
         {"--layers: '8,16' is a sweep, but --gains"}},
        {{"--width", "64,256"}, {"--width applies to the sampled engines"}},
        {{"--engine", "mc", "--width", "64,1"}, {"--width: '1' is out of range"}},
        {{"--engine", "forward", "--width", "64,100"}, {"8 heads do not divide the width 100"}},
        {{"--engine", "forward", "--weights", "w.safetensors", "--layers", "2,4"},
         {"--layers: '2,4' is a sweep, but --weights fixes"}},
        {{"--placement", "all", "--gain", "1,2,3,4,5", "--layers", "1,2,3,4,5,6,7,8,9"},
         {"make 315 combinations", "more than the 256 one run takes"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *argv[10] = {0};
        for (int a = 0; a < 8 && bad[i].args[a]; a++)
            argv[a] = bad[i].args[a];
        program_run run = run_varprof(argv);
        if (run.status != 2)
            print_error("case %zu: exit %d; stderr:\n%s", i, run.status, run.err);
        assert_int_equal(run.status, 2);
        assert_int_equal(run.out_length, 0);
        for (int m = 0; m < 2 && bad[i].message[m]; m++)
            assert_contains(run.err, bad[i].message[m]);
        assert_contains(run.err, "\nTry 'varprof --help'.\n");
        program_run_free(&run);
    }
}

/* ---- the figure against the swept value ---- */

/* Counts the data lines of each data block in a gnuplot script. */
static size_t block_points(const char *script, const char *block)
{
    char opening[32];
    snprintf(opening, sizeof opening, "\n%s << EOD\n", block);
    const char *at = strstr(script, opening);
    assert_non_null(at);
    at += strlen(opening);
    size_t points = 0;
    while (strncmp(at, "EOD\n", 4) != 0) {
        if (*at != '#')
            points++;
        at = strchr(at, '\n') + 1;
    }
    return points;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *text = calloc(1, 1 << 20);
    assert_non_null(text);
    fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    return text;
}

static void sweep_plot_has_a_point_per_swept_value(void **state)
{
    (void)state;
    const char *svg = in_scratch("sweep.svg"), *script = in_scratch("sweep.gp");
    program_run run = RUN_OK("--placement", "pre-norm,post-ln", "--gain", "4,0.5,1,2", "--plot",
                             svg, "--plot-script", script, "--force");
    assert_int_equal(run.out_length, 0); /* --plot alone: the figure, no table */
    program_run_free(&run);
    char *text = slurp(script);
    /* three panels (stream, update, share), a line per placement in each */
    static const char *const blocks[] = {"$d1_1", "$d1_2", "$d2_1", "$d2_2", "$d3_1", "$d3_2"};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++)
        assert_int_equal(block_points(text, blocks[i]), 4);
    assert_null(strstr(text, "$d1_3 << EOD"));
    /* in x order, whatever the list's: pre-norm's stream sqrt(1 + 64 g^2) */
    assert_contains(text, "$d1_1 << EOD\n# x y\n0.5 4.1231056256176606\n1 8.0622577482985491\n");
    assert_contains(text, "set xlabel 'branch gain g'");
    assert_contains(text, "the top of the stack, 32 layers");
    free(text);
    /* depth: a linear axis, the gain held named in the title */
    run = RUN_OK("--placement", "pre-norm", "--layers", "8,16,32", "--quantity", "stream", "--plot",
                 svg, "--plot-script", script, "--force");
    program_run_free(&run);
    text = slurp(script);
    assert_int_equal(block_points(text, "$d1_1"), 3);
    assert_contains(text, "set xlabel 'layers L'");
    assert_contains(text, "stream size at the top, gain 1");
    free(text);
    /* width: the closed form, the infinite-width limit, level at each width */
    run = RUN_OK("--engine", "closed,mc", "--width", "8,4", "--layers", "1", "--trials", "16",
                 "--quantity", "share", "--plot", svg, "--plot-script", script, "--force");
    program_run_free(&run);
    text = slurp(script);
    assert_contains(text, "$d1_1 << EOD\n# x y\n4 0.57735026918962573\n8 0.57735026918962573\nEOD");
    assert_int_equal(block_points(text, "$d1_2"), 2);
    assert_contains(text, "set xlabel 'width d'");
    assert_contains(text, "set xtics 4, 2");
    free(text);
}

/* The chapter's gain- and depth-sweep figures are the figures these
 * commands draw, byte for byte (varprof(1), SWEEPS). */
static void chapter_sweeps_are_the_commands_of_the_manual(void **state)
{
    (void)state;
    const char *dir = in_scratch("chapter");
    program_run run = RUN_OK("figures", "--outdir", dir);
    program_run_free(&run);
    const char *gain = in_scratch("gain.svg"), *depth = in_scratch("depth.svg");
    run = RUN_OK("--placement", "all", "--layers", "32", "--quantity", "stream", "--plot", gain,
                 "--force", "--gain",
                 "0.25,0.3,0.35,0.42,0.5,0.59,0.71,0.84,1,1.19,1.41,1.68,2,2.38,2.83,3.36,4");
    program_run_free(&run);
    run = RUN_OK("--placement", "all", "--quantity", "stream", "--plot", depth, "--force",
                 "--layers", "1,2,4,6,8,12,16,24,32,48,64,96,128");
    program_run_free(&run);
    char path[600];
    snprintf(path, sizeof path, "%s/gain-sweep.svg", dir);
    char *chapter = slurp(path), *ours = slurp(gain);
    assert_true(strlen(chapter) > 1000);
    assert_string_equal(chapter, ours);
    free(chapter);
    free(ours);
    snprintf(path, sizeof path, "%s/depth-sweep.svg", dir);
    chapter = slurp(path);
    ours = slurp(depth);
    assert_true(strlen(chapter) > 1000);
    assert_string_equal(chapter, ours);
    free(chapter);
    free(ours);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_rows_come_one_combination_after_another),
        cmocka_unit_test(widths_are_a_column_and_the_closed_form_comes_once),
        cmocka_unit_test(json_profiles_carry_the_swept_values),
        cmocka_unit_test(text_ends_with_the_tops_of_the_sweep),
        cmocka_unit_test(text_table_names_widths_when_sampled),
        cmocka_unit_test(a_single_stack_is_no_sweep),
        cmocka_unit_test(a_models_depth_can_be_swept),
        cmocka_unit_test(engine_list_compares_without_a_forward_pass),
        cmocka_unit_test(readme_rmsnorm_example_runs_as_written),
        cmocka_unit_test(bad_lists_are_refused),
        cmocka_unit_test(sweep_plot_has_a_point_per_swept_value),
        cmocka_unit_test(chapter_sweeps_are_the_commands_of_the_manual),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("sweeps", tests, test_scratch_setup, test_scratch_teardown);
}
