/* `varprof models --columns`: the models table's columns chosen by their
 * CSV names, a page's short default (what fits a page and a chapter
 * prints), every column for a script, a count that is not the model's own
 * marked on a page as the text marks it, and each wrong choice a usage
 * error that names the columns there are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "text_file.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

/* The 24 columns, as varprof(1), "Tables for a page", lists them */
static const char *const all_columns[] = {
    "name",          "year",         "layers",     "placement",   "norm",
    "qk_norm",       "source",       "width",      "heads",       "kv_heads",
    "head_dim",      "ffn_width",    "vocab",      "activation",  "positions",
    "max_positions", "rope_theta",   "norm_eps",   "biases",      "tied_embeddings",
    "final_norm",    "architecture", "parameters", "shape_source"};

/* GPT-2 small, 124,439,808 parameters with its tied embeddings (Hugging
 * Face's gpt2), and the 2017 Transformer's encoder, 6 layers of d 512 with
 * 37000 tokens: 6 x (4 x 512^2 + 4 x 512 + 2 x 512 x 2048 + 2048 + 512 +
 * 2 x 2 x 512) + 37000 x 512 = 37,858,304, not the model's own count. */
static const char *const shaped_table =
    "name,year,layers,placement,norm,qk_norm,source,alpha,beta,alpha_beta_source,width,heads,"
    "kv_heads,head_dim,ffn_width,vocab,activation,positions,max_positions,rope_theta,norm_eps,"
    "biases,tied_embeddings,final_norm,architecture,shape_source\n"
    "gpt-2-small,2019,12,pre-norm,layernorm,no,paper,,,,768,12,12,,3072,50257,gelu-tanh,"
    "learned,1024,,1e-5,yes,yes,yes,dense,config\n"
    "transformer-base,2017,6,post-ln,layernorm,no,paper,,,,512,8,8,,2048,37000,relu,"
    "sinusoidal,,,,yes,yes,no,encoder-decoder,paper\n";

static void use_table(const char *text)
{
    const char *path = in_scratch("models.csv");
    write_text(path, text);
    setenv("VARPROF_MODELS", path, 1);
}

static void expect_contains(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("expected \"%s\" in:\n%.2000s", part, text);
}

/* A page's default: seven columns, the count marked where the text stars it. */
static void a_page_shows_the_short_set(void **state)
{
    (void)state;
    use_table(shaped_table);
    program_run run = RUN("models", "--format", "markdown");
    assert_int_equal(run.status, 0);
    expect_contains(run.out,
                    "| model | year | layers | placement | norm | QK-norm | parameters |\n"
                    "| --- | ---: | ---: | --- | --- | --- | ---: |\n"
                    "| `gpt-2-small` | 2019 | 12 | pre-norm | layernorm | no | 124439808 |\n"
                    "| `transformer-base` | 2017 | 6 | post-ln | layernorm | no | "
                    "37858304\\* |\n\n\\* the count of the row's shape, not the model's");
    assert_null(strstr(run.out, "paper")); /* no source */
    program_run_free(&run);

    run = RUN("models", "--format", "latex");
    assert_int_equal(run.status, 0);
    expect_contains(run.out, "\\begin{tabular}{lrrlllr}\n\\toprule\nmodel & year & layers & "
                             "placement & norm & QK-norm & parameters \\\\\n\\midrule\n");
    expect_contains(run.out, "\\texttt{transformer-base} & 2017 & 6 & post-ln & layernorm & no & "
                             "37858304$^*$ \\\\\n");
    expect_contains(run.out, "\\end{tabular}\n% * the count of the row's shape");
    program_run_free(&run);

    /* a table without shapes has no count: six columns, as before */
    use_table("name,year,layers,placement,norm,qk_norm,source\n"
              "x-1,2020,4,pre-norm,rmsnorm,yes,paper\n");
    run = RUN("models", "--format", "markdown");
    assert_int_equal(run.status, 0);
    assert_string_equal(run.out, "| model | year | layers | placement | norm | QK-norm |\n"
                                 "| --- | ---: | ---: | --- | --- | --- |\n"
                                 "| `x-1` | 2020 | 4 | pre-norm | rmsnorm | yes |\n");
    program_run_free(&run);
    unsetenv("VARPROF_MODELS");
}

/* A script's formats keep every column unless told; --columns chooses them
 * in the order given, in every format. */
static void columns_chosen_by_name(void **state)
{
    (void)state;
    use_table(shaped_table);
    program_run run = RUN("models", "--format", "csv");
    assert_int_equal(run.status, 0);
    for (size_t i = 0; i < sizeof all_columns / sizeof *all_columns; i++)
        expect_contains(run.out, all_columns[i]);
    program_run_free(&run);

    run = RUN("models", "--format", "csv", "--columns", "parameters,name,layers");
    assert_int_equal(run.status, 0);
    assert_string_equal(run.out, "parameters,name,layers\n124439808,gpt-2-small,12\n"
                                 "37858304,transformer-base,6\n");
    program_run_free(&run);

    run = RUN("models", "--format", "json", "--columns", "name,vocab");
    assert_int_equal(run.status, 0);
    cJSON *doc = cJSON_Parse(run.out);
    assert_non_null(doc);
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "rows"), 0);
    assert_int_equal(cJSON_GetArraySize(row), 2);
    assert_true(cJSON_GetObjectItem(row, "vocab")->valuedouble == 50257.0);
    cJSON_Delete(doc);
    program_run_free(&run);

    run = RUN("models", "--format", "markdown", "--columns", "name,source,shape_source");
    assert_int_equal(run.status, 0);
    expect_contains(run.out, "| model | source | shape source |\n| --- | --- | --- |\n"
                             "| `gpt-2-small` | paper | config |\n");
    program_run_free(&run);

    run = RUN("models", "--format", "latex", "--columns", "all");
    assert_int_equal(run.status, 0);
    expect_contains(run.out, "\\begin{tabular}{lrrllllrrrrrrllrrrllllrl}\n");
    program_run_free(&run);
    unsetenv("VARPROF_MODELS");
}

static void refused(program_run run, int status, const char *says)
{
    assert_int_equal(run.status, status);
    assert_int_equal(run.out_length, 0);
    expect_contains(run.err, says);
    program_run_free(&run);
}

/* A wrong name is a usage error that names every column there is. */
static void a_bad_column_names_the_allowed_ones(void **state)
{
    (void)state;
    use_table(shaped_table);
    program_run run = RUN("models", "--format", "latex", "--columns", "name,paramters");
    assert_int_equal(run.status, 2);
    assert_int_equal(run.out_length, 0);
    expect_contains(run.err, "'paramters'");
    expect_contains(run.err, "did you mean parameters?");
    for (size_t i = 0; i < sizeof all_columns / sizeof *all_columns; i++) {
        char named[48];
        snprintf(named, sizeof named, " %s,", all_columns[i]);
        expect_contains(run.err, named);
    }
    expect_contains(run.err, "or all");
    program_run_free(&run);

    refused(RUN("models", "--format", "csv", "--columns", "name,year,name"), 2, "twice");
    refused(RUN("models", "--format", "csv", "--columns", "name,,year"), 2, "empty item");
    refused(RUN("models", "--format", "csv", "--columns", "all,name"), 2, "stands alone");
    refused(RUN("models", "--columns", "name"), 2, "--format");
    /* a shape's column of a table without shapes: said, not left empty */
    use_table("name,year,layers,placement,norm,qk_norm,source\n"
              "x-1,2020,4,pre-norm,rmsnorm,yes,paper\n");
    refused(RUN("models", "--format", "csv", "--columns", "name,parameters"), 1, "no shapes");
    unsetenv("VARPROF_MODELS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_page_shows_the_short_set),
        cmocka_unit_test(columns_chosen_by_name),
        cmocka_unit_test(a_bad_column_names_the_allowed_ones),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("models columns", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
