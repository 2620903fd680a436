/* Where the output goes and in what form: the format that follows the file
 * name, two outputs that name one file, the tables for a page (Markdown and
 * LaTeX), and the CSV's column for a share below a double's range. */
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

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%.3000s\n", part, text);
        fail();
    }
}

/* The line of text that starts with prefix, copied into line. */
static void line_starting(const char *text, const char *prefix, char *line, size_t size)
{
    const char *at = strstr(text, prefix);
    if (!at) {
        print_error("no line starts with \"%s\" in:\n%.3000s\n", prefix, text);
        fail();
    }
    const size_t length = strcspn(at, "\n");
    assert_true(length < size);
    memcpy(line, at, length);
    line[length] = '\0';
}

/* Cell index of a CSV line (no quoting: numbers and names), into cell. */
static void cell_of(const char *line, int index, char *cell, size_t size)
{
    const char *at = line;
    for (int i = 0; i < index && at; i++) {
        at = strchr(at, ',');
        if (at)
            at++;
    }
    assert_non_null(at);
    const size_t length = strcspn(at, ",\n");
    assert_true(length < size);
    memcpy(cell, at, length);
    cell[length] = '\0';
}

/* Post-LN at 2000 layers: a share of 2^-2000 is 0 as a double, and the CSV
 * keeps it by its log2 in its own column, as JSON always has. */
static void csv_keeps_a_vanishing_share_by_its_log2(void **state)
{
    (void)state;
    program_run run =
        RUN("--placement", "post-ln", "--layers", "2000", "--every", "1000", "--format", "csv");
    assert_int_equal(run.status, 0);
    const int log2_column = csv_column_of(run.out, "log2_embedding_share");
    assert_true(log2_column > 0);
    char line[512], cell[64];
    line_starting(run.out, "closed,post-ln,,2000,4000,", line, sizeof line);
    /* embedding_share (column 12) is 0; its log2 is -K/2 = -2000 */
    assert_contains(line, ",1,1,1,1,0,");
    cell_of(line, log2_column, cell, sizeof cell);
    assert_string_equal(cell, "-2000");
    program_run_free(&run);
}

static size_t files_in_scratch(void)
{
    size_t n = 0;
    char command[512];
    snprintf(command, sizeof command, "ls -A '%s' | wc -l", test_scratch());
    FILE *ls = popen(command, "r");
    assert_non_null(ls);
    assert_int_equal(fscanf(ls, "%zu", &n), 1);
    pclose(ls);
    return n;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* --plot same.svg --output same.svg left the table in same.svg: two outputs
 * that name one file, however spelt, are refused before any work. */
static void one_file_named_twice_is_refused(void **state)
{
    (void)state;
    char sub[512], via_sub[600], dot[600], existing[512], link[512];
    snprintf(sub, sizeof sub, "%s", in_scratch("sub"));
    assert_int_equal(mkdir(sub, 0777), 0);
    snprintf(via_sub, sizeof via_sub, "%s/../same.svg", sub);
    snprintf(dot, sizeof dot, "%s/./p.csv", test_scratch());
    snprintf(existing, sizeof existing, "%s", in_scratch("kept.svg"));
    snprintf(link, sizeof link, "%s", in_scratch("link.svg"));
    write_text(existing, "kept\n");
    assert_int_equal(symlink(existing, link), 0);
    const char *cases[][10] = {
        {"--plot", in_scratch("same.svg"), "--output", in_scratch("same.svg"), NULL},
        {"--plot", via_sub, "--output", in_scratch("same.svg"), NULL},
        {"--output", in_scratch("p.csv"), "--plot", in_scratch("p.svg"), "--plot-script", dot,
         NULL},
        {"--plot", in_scratch("p.svg"), "--plot-script", in_scratch("p.svg"), NULL},
        /* existing names: the same inode, through a symbolic link */
        {"--plot", existing, "--output", link, "--force", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        program_run run = run_varprof(cases[i]);
        if (run.status != 2 || !strstr(run.err, "name one file")) {
            print_error("case %zu: exit %d: %s\n", i, run.status, run.err);
            fail();
        }
        assert_contains(run.err, "Try 'varprof --help'.");
        assert_int_equal(run.out_length, 0);
        program_run_free(&run);
        /* nothing made: sub, kept.svg and link.svg only */
        assert_int_equal(files_in_scratch(), 3);
    }
    FILE *f = fopen(existing, "r");
    char text[16] = "";
    assert_non_null(fgets(text, sizeof text, f));
    fclose(f);
    assert_string_equal(text, "kept\n");
    /* standard output twice is not one file: the table, then the text plot */
    program_run run = RUN("--layers", "2", "--format", "csv", "--output", "-", "--plot", "-");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
}

/* The profile for a page: Markdown's pipe table and LaTeX's booktabs
 * tabular, with the text table's columns and four significant figures. */
static void profile_tables_for_a_page(void **state)
{
    (void)state;
    /* pre-norm, 32 layers, gain 2: v_64 = 257, sqrt(257) = 16.03 */
    program_run run = RUN("--layers", "32", "--gain", "2", "--every", "64", "--format", "markdown");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "pre-norm, closed form (x <- x + f(N(x))): 32 layers = 64 "
                             "sub-blocks, gain 2\n\n");
    assert_contains(run.out, "| k | layer | part | g_k | v_k | sqrt(v_k/v_0) | u_k | e_k | "
                             "log2 e_k |\n");
    assert_contains(run.out, "| ---: | ---: | --- | ---: |");
    assert_contains(run.out, "| 0 |  | embedding |  | 1 | 1 |  | 1 | 0 |\n");
    assert_contains(run.out, "| 64 | 31 | mlp | 2 | 257 | 16.03 | 0.1257 | 0.06238 | -4.003 |\n");
    program_run_free(&run);

    /* Post-LN at 2000 layers: a share below a double's range, by its log2 */
    run = RUN("--placement", "post-ln", "--layers", "2000", "--every", "2000", "--format", "latex");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "% post-ln, closed form (x <- N(x + f(x))): 2000 layers");
    assert_contains(run.out, "\\begin{tabular}{rrlrrrrrr}\n\\toprule\n");
    assert_contains(run.out, "$k$ & layer & part & $g_k$ & $v_k$ & $\\sqrt{v_k/v_0}$ & $u_k$ & "
                             "$e_k$ & $\\log_2 e_k$ \\\\\n\\midrule\n");
    assert_contains(run.out, "2000 & 999 & mlp & $1$ & $1$ & $1$ & $1$ & "
                             "$9.333\\times10^{-302}$ & $-1000$ \\\\\n");
    assert_contains(run.out, "4000 & 1999 & mlp & $1$ & $1$ & $1$ & $1$ & $0$ & $-2000$ \\\\\n"
                             "\\bottomrule\n\\end{tabular}\n");
    program_run_free(&run);

    /* each placement its own table, a blank line between (engines compared: text only) */
    run = RUN("--engine", "mc", "--placement", "pre-norm,post-ln", "--layers", "2", "--trials",
              "64", "--width", "8", "--format", "markdown");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "pre-norm, Monte Carlo (");
    assert_contains(run.out, "|\n\npost-ln, Monte Carlo (");
    program_run_free(&run);
}

/* `table` in every format: the same seven rows, whole numbers for scripts,
 * four significant figures for a page. */
static void maths_table_in_every_format(void **state)
{
    (void)state;
    program_run run = RUN("table", "--layers", "128", "--format", "csv");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "placement,formula,sub_blocks,stream_var,stream_size,update_ratio,"
                             "embedding_share,log2_embedding_share\n");
    assert_contains(run.out, "\npre-norm,x <- x + f(N(x)),256,257,16.031219541881399,0.0625,");
    size_t lines = 0;
    for (const char *c = run.out; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 8);
    program_run_free(&run);

    run = RUN("table", "--layers", "128", "--format", "json");
    assert_int_equal(run.status, 0);
    cJSON *doc = cJSON_Parse(run.out);
    assert_non_null(doc);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows");
    assert_int_equal(cJSON_GetArraySize(rows), 7);
    cJSON *pre = cJSON_GetArrayItem(rows, 1);
    assert_string_equal(cJSON_GetObjectItem(pre, "placement")->valuestring, "pre-norm");
    assert_true(cJSON_GetObjectItem(pre, "stream_size")->valuedouble == sqrt(257.0));
    assert_true(
        cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "log2_embedding_share")->valuedouble ==
        -128.0);
    cJSON_Delete(doc);
    program_run_free(&run);

    run = RUN("table", "--layers", "128", "--format", "markdown");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "| pre-norm | `x <- x + f(N(x))` | 256 | 257 | 16.03 | 0.0625 | "
                             "0.06238 | -4.003 |\n");
    program_run_free(&run);

    run = RUN("table", "--layers", "128", "--format", "latex");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "\\toprule");
    assert_contains(run.out, "pre-norm & \\texttt{x \\textless{}- x + f(N(x))} & 256 & $257$ & "
                             "$16.03$ & $0.0625$ & $0.06238$ & $-4.003$ \\\\\n");
    /* LaTeX's specials in text: parallel's f_attn */
    assert_contains(run.out, "f\\_attn(N(x))");
    assert_contains(run.out, "\\bottomrule");
    program_run_free(&run);

    run = RUN("table", "--format", "csv", "--explain");
    assert_int_equal(run.status, 2);
    assert_contains(run.err, "--explain");
    assert_int_equal(run.out_length, 0);
    program_run_free(&run);
}

/* `models` in every format, with a source that holds every character
 * LaTeX and Markdown treat specially. */
static void models_table_in_every_format(void **state)
{
    (void)state;
    const char *path = in_scratch("models.csv");
    write_text(path, "name,year,layers,placement,norm,qk_norm,source\n"
                     "odd-1,2024,12,pre-norm,rmsnorm,yes,\"a_b & 50% $x$ #1 {y} ~z ^w \\v |u "
                     "--num-layers\"\n");
    setenv("VARPROF_MODELS", path, 1);
    /* every column: a page's own short set has no source */
    program_run run = RUN("models", "--format", "latex", "--columns", "all");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "\\texttt{odd-1} & 2024 & 12 & pre-norm & rmsnorm & yes & "
                             "a\\_b \\& 50\\% \\$x\\$ \\#1 \\{y\\} "
                             "\\textasciitilde{}z \\textasciicircum{}w \\textbackslash{}v |u "
                             "-{}-num-layers \\\\\n");
    program_run_free(&run);

    run = RUN("models", "--format", "markdown", "--columns", "all");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "| `odd-1` | 2024 | 12 | pre-norm | rmsnorm | yes | a_b & 50% $x$ "
                             "#1 {y} ~z ^w \\v \\|u --num-layers |\n");
    program_run_free(&run);

    run = RUN("models", "--format", "csv");
    assert_int_equal(run.status, 0);
    assert_string_equal(run.out, "name,year,layers,placement,norm,qk_norm,source\n"
                                 "odd-1,2024,12,pre-norm,rmsnorm,yes,a_b & 50% $x$ #1 {y} ~z ^w "
                                 "\\v |u --num-layers\n");
    program_run_free(&run);

    run = RUN("models", "--format", "json");
    assert_int_equal(run.status, 0);
    cJSON *doc = cJSON_Parse(run.out);
    assert_non_null(doc);
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "rows"), 0);
    assert_string_equal(cJSON_GetObjectItem(row, "name")->valuestring, "odd-1");
    assert_true(cJSON_GetObjectItem(row, "layers")->valuedouble == 12.0);
    assert_string_equal(cJSON_GetObjectItem(row, "qk_norm")->valuestring, "yes");
    cJSON_Delete(doc);
    program_run_free(&run);

    /* with shapes, their columns and the parameter count follow the source:
     * GPT-2 small's 124,439,808 with tied embeddings */
    write_text(path, "name,year,layers,placement,norm,qk_norm,source,alpha,beta,alpha_beta_source,"
                     "width,heads,kv_heads,head_dim,ffn_width,vocab,activation,positions,"
                     "max_positions,rope_theta,norm_eps,biases,tied_embeddings,final_norm,"
                     "architecture,shape_source\n"
                     "gpt-2-small,2019,12,pre-norm,layernorm,no,paper,,,,768,12,12,,3072,50257,"
                     "gelu-tanh,learned,1024,,1e-5,yes,yes,yes,dense,config\n");
    run = RUN("models", "--format", "csv");
    assert_int_equal(run.status, 0);
    assert_string_equal(run.out, "name,year,layers,placement,norm,qk_norm,source,width,heads,"
                                 "kv_heads,head_dim,ffn_width,vocab,activation,positions,"
                                 "max_positions,rope_theta,norm_eps,biases,tied_embeddings,"
                                 "final_norm,architecture,parameters,shape_source\n"
                                 "gpt-2-small,2019,12,pre-norm,layernorm,no,paper,768,12,12,64,"
                                 "3072,50257,gelu-tanh,learned,1024,,1.0000000000000001e-05,yes,"
                                 "yes,yes,dense,124439808,config\n");
    program_run_free(&run);
    run = RUN("models", "--format", "markdown", "--columns", "all");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "| 768 | 12 | 12 | 64 | 3072 | 50257 | gelu-tanh | learned | 1024 |  "
                             "| 1e-05 | yes | yes | yes | dense | 124439808 | config |\n");
    program_run_free(&run);
    run = RUN("models");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "gpt-2-small         2019      12  pre-norm      layernorm  no        "
                             "124 M\n");
    assert_contains(run.out, "    shape: d 768, 12 heads of 64, gelu-tanh MLP 3072, vocab 50257, "
                             "1024 learned\n"
                             "           positions, norm eps 1e-05, biases yes, tied embeddings, "
                             "final norm\n"
                             "    shape source: config\n");
    program_run_free(&run);
    unsetenv("VARPROF_MODELS");
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* --output profile.csv wrote the text table: the extension now chooses the
 * format unless --format does, and the two must agree. */
static void format_follows_the_file_name(void **state)
{
    (void)state;
    const struct {
        const char *name, *starts;
    } cases[] = {
        {"p.csv", "engine,placement,norm,layers,"},
        {"P.CSV", "engine,placement,norm,layers,"},
        {"p.json", "{\"varprof\":"},
        {"p.md", "pre-norm, closed form (x <- x + f(N(x))): 2 layers"},
        {"p.tex", "% pre-norm, closed form"},
        {"p.txt", "varprof "}, /* no format's extension: text */
        {"p", "varprof "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = in_scratch(cases[i].name);
        program_run run = RUN("--layers", "2", "--output", path);
        assert_int_equal(run.status, 0);
        const char *text = read_text(path);
        if (strncmp(text, cases[i].starts, strlen(cases[i].starts)) != 0) {
            print_error("%s starts: %.80s\n", cases[i].name, text);
            fail();
        }
        unlink(path);
        program_run_free(&run);
    }
    /* --format that agrees, or names what no extension does */
    program_run run = RUN("--layers", "2", "--format", "csv", "--output", in_scratch("q.csv"));
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    run = RUN("--layers", "2", "--format", "json", "--output", in_scratch("q.txt"));
    assert_int_equal(run.status, 0);
    assert_true(strncmp(read_text(in_scratch("q.txt")), "{\"varprof\":", 11) == 0);
    program_run_free(&run);
    /* a contradiction: a usage error, said before anything is written */
    const char *contradictions[][2] = {
        {"csv", "x.json"}, {"text", "x.csv"}, {"latex", "x.md"}, {"markdown", "x.tex"}};
    for (size_t i = 0; i < 4; i++) {
        run = RUN("--format", contradictions[i][0], "--output", in_scratch(contradictions[i][1]));
        assert_int_equal(run.status, 2);
        assert_contains(run.err, "names a");
        assert_contains(run.err, "drop --format");
        assert_true(access(in_scratch(contradictions[i][1]), F_OK) != 0);
        program_run_free(&run);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_keeps_a_vanishing_share_by_its_log2),
        cmocka_unit_test_setup_teardown(one_file_named_twice_is_refused, test_scratch_setup,
                                        test_scratch_teardown),
        cmocka_unit_test_setup_teardown(format_follows_the_file_name, test_scratch_setup,
                                        test_scratch_teardown),
        cmocka_unit_test(profile_tables_for_a_page),
        cmocka_unit_test(maths_table_in_every_format),
        cmocka_unit_test_setup_teardown(models_table_in_every_format, test_scratch_setup,
                                        test_scratch_teardown),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("outputs", tests, NULL, NULL);
}
