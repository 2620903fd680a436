/* --grad and --final-norm as a user runs them: the backward half's columns
 * and figures (issue 13's, varprof-maths(7) GRADIENTS), the text's 80
 * columns, the headings' final norm, and each refusal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

/* The figures are printed with %.17g (CSV) from doubles a few ulp from the
 * exact value; %.4g in text. */
#define CSV_TOL 1e-14

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

/* Field `column` of the CSV line starting at line (no field is quoted in a
 * closed-form profile), as a number; NAN when empty. */
static double csv_field(const char *line, size_t column)
{
    for (size_t i = 0; i < column; i++) {
        line = strpbrk(line, ",\n");
        if (!line || *line == '\n')
            fail_msg("a CSV line with fewer than %zu fields", column + 1);
        line++;
    }
    if (*line == ',' || *line == '\n' || !*line)
        return NAN;
    return strtod(line, NULL);
}

static size_t csv_column(const char *csv, const char *name)
{
    size_t column = 0, n = strlen(name);
    for (const char *p = csv; *p && *p != '\n'; column++) {
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\n'))
            return column;
        p += strcspn(p, ",\n");
        if (*p == ',')
            p++;
    }
    fail_msg("no column %s", name);
    return 0;
}

/* The value of a column at sub-block k of the first profile in csv. */
static double csv_value(const char *csv, const char *name, size_t k)
{
    const size_t column = csv_column(csv, name), sub_block = csv_column(csv, "sub_block");
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n'))
        if (csv_field(line + 1, sub_block) == (double)k)
            return csv_field(line + 1, column);
    fail_msg("no row for sub-block %zu", k);
    return NAN;
}

static void assert_near(const char *what, double got, double expected, double tol)
{
    if (!(fabs(got - expected) <= tol * fabs(expected)))
        fail_msg("%s: %.17g, expected %.17g (relative tolerance %g)", what, got, expected, tol);
}

/* Issue 13's figures through the CSV a user reads: 32 layers, g = 1. */
static void test_csv_figures(void **state)
{
    (void)state;
    program_run pre = RUN("--grad", "--format", "csv");
    assert_int_equal(pre.status, 0);
    /* CSV_TOL = 1e-14 relative: see its definition */
    assert_near("pre-norm grad_size_0", csv_value(pre.out, "grad_size", 0), sqrt(65.0), CSV_TOL);
    assert_near("pre-norm grad_var_64", csv_value(pre.out, "grad_var", 64), 1.0 / 65.0, CSV_TOL);
    assert_near("pre-norm weight_grad_64", csv_value(pre.out, "weight_grad", 64), 1.0 / sqrt(65.0),
                CSV_TOL);
    assert_near("pre-norm weight_grad_1", csv_value(pre.out, "weight_grad", 1), sqrt(0.5), CSV_TOL);
    assert_true(isnan(csv_value(pre.out, "weight_grad", 0))); /* no branch at the embedding */
    assert_true(isnan(csv_value(pre.out, "grad_var_lo", 1))); /* no bounds in closed form */
    program_run post = RUN("--grad", "--format", "csv", "--placement", "post-ln");
    assert_int_equal(post.status, 0);
    for (size_t k = 0; k <= 64; k += 7)
        assert_near("post-ln grad_size", csv_value(post.out, "grad_size", k), 1.0, CSV_TOL);
    assert_near("Xiong's ratio",
                csv_value(post.out, "weight_grad", 64) / csv_value(pre.out, "weight_grad", 64),
                sqrt(65.0 / 2.0), CSV_TOL);
    program_run_free(&pre);
    program_run_free(&post);
    /* --final-norm no: the head reads the raw stream; G_64 = 1 */
    program_run raw = RUN("--grad", "--final-norm", "no", "--format", "csv");
    assert_int_equal(raw.status, 0);
    assert_near("no final norm grad_var_64", csv_value(raw.out, "grad_var", 64), 1.0, CSV_TOL);
    assert_near("no final norm grad_var_0", csv_value(raw.out, "grad_var", 0), 65.0, CSV_TOL);
    program_run_free(&raw);
    /* and --final-norm yes gives Post-LN one: G_64 = 1/v_64 = 1, then 1/v at each norm */
    program_run yes = RUN("--grad", "--final-norm", "yes", "--format", "csv", "--placement",
                          "deepnorm", "--layers", "2");
    assert_int_equal(yes.status, 0);
    assert_near("deepnorm with a final norm", csv_value(yes.out, "grad_var", 4), 1.0, CSV_TOL);
    program_run_free(&yes);
}

/* JSON says where the gradient enters, with --grad alone. */
static void test_json_final_norm(void **state)
{
    (void)state;
    program_run run = RUN("--grad", "--format", "json", "--layers", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "\"final_norm\":true");
    program_run_free(&run);
    run = RUN("--grad", "--format", "json", "--layers", "1", "--placement", "post-ln");
    assert_contains(run.out, "\"final_norm\":false");
    program_run_free(&run);
    run = RUN("--format", "json", "--layers", "1");
    assert_null(strstr(run.out, "final_norm"));
    program_run_free(&run);
}

/* Without --grad the columns stay empty, as every engine's always were. */
static void test_columns_empty_without_grad(void **state)
{
    (void)state;
    program_run run = RUN("--format", "csv", "--layers", "2");
    assert_int_equal(run.status, 0);
    assert_true(isnan(csv_value(run.out, "grad_var", 0)));
    assert_true(isnan(csv_value(run.out, "weight_grad", 2)));
    assert_true(strstr(run.out, "grad_size") != NULL);
    program_run_free(&run);
}

static void test_text(void **state)
{
    (void)state;
    program_run run = RUN("--grad", "--every", "16");
    assert_int_equal(run.status, 0);
    assert_true(widest_line(run.out) <= 80);
    assert_contains(run.out, "grad size  weight grad");
    assert_contains(run.out, "through a final norm (the placement's default)");
    /* sub-block 0 and 64: sqrt(65) and 1/sqrt(65) at 4 digits */
    assert_contains(run.out, "        0      -  embedding       -            1        8.062");
    assert_contains(run.out, "8.062            1        0.124");
    assert_contains(run.out, "weight gradient   0.7071 at sub-block 1, 0.124 at sub-block 64");
    program_run_free(&run);
    run = RUN("--grad", "--placement", "post-ln", "--wide", "--every", "64");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "grad var    grad size  weight grad");
    assert_contains(run.out, "no final norm (the placement's default)");
    assert_contains(run.out, "1            1       0.7071");
    program_run_free(&run);
    run = RUN("--grad", "--final-norm", "no", "--layers", "2");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "no final norm (--final-norm)");
    program_run_free(&run);
}

/* varprof table --grad: each placement's backward formulas beside their
 * values, and under --explain issue 13's figures worked by hand. */
static void test_table(void **state)
{
    (void)state;
    program_run run = RUN("table", "--grad");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "  G_K = 1 / v_K (final norm)\n    G_64 = 1 / 65 = 0.0153846\n");
    assert_contains(run.out, "  G_{k-1} = G_k (1 + g_k^2 / v_{k-1})\n    G_0 = 1\n");
    assert_contains(run.out, "weight_grad_1 = 0.707107, weight_grad_64 = 0.124035");
    assert_contains(run.out, "sqrt(G_0 / G_64) = 8.062 times the top's");
    assert_contains(run.out, "weight_grad_k^2 = G_k / (1 + g_k^2)\n    weight_grad_1 = 0.707107, "
                             "weight_grad_64 = 0.707107\n");
    assert_contains(run.out, "weight_grad_k^2 = gamma^2 G_k / g_k^2");
    assert_contains(run.out, "G_{k-1} = G_k (1 + 2 g_k^2 / v_{k-1})");
    program_run_free(&run);
    run = RUN("table", "--grad", "--explain");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "it telescopes to G_k = G_64 v_64 / v_k");
    assert_contains(run.out, "sqrt(G_0 / G_64) = sqrt(v_64 / v_0) = sqrt(65) = 8.062");
    assert_contains(run.out, "weight_grad_64 = sqrt(G_64) = 1 / sqrt(65) = 0.124");
    assert_contains(run.out, "weight_grad_1 = sqrt(G_1) = 1 / sqrt(v_1) = 1 / sqrt(1 + 1^2) = "
                             "0.7071");
    assert_contains(run.out, "grad size 1 at every depth");
    assert_contains(run.out, "sqrt(v_64 / (1 + g^2)) = sqrt(65 / 2) = 5.701, growing as sqrt(L)");
    /* a backward step of pre-norm written out: G_1 = 1/2 into G_0 = 1 */
    assert_contains(run.out, "  k = 1: G_k = 0.5, v_{k-1} = 1, g_k = 1\n"
                             "    G_{k-1} = G_k (1 + g_k^2 / v_{k-1}) = 1\n");
    program_run_free(&run);
    /* four times the layers, twice the ratio, near enough: sqrt(257/2) = 11.34 */
    run = RUN("table", "--grad", "--explain", "--layers", "128");
    assert_contains(run.out, "sqrt(257 / 2) = 11.34");
    program_run_free(&run);
    run = RUN("table", "--grad", "--format", "csv");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "log2_embedding_share,grad_size,weight_grad_first,weight_grad_top\n");
    assert_contains(run.out, ",8.0622577482985491,0.70710678118654757,0.12403473458920845\n");
    program_run_free(&run);
    run = RUN("table");
    assert_true(strstr(run.out, "G_K") == NULL); /* the forward table stays as it was */
    program_run_free(&run);
}

/* Figures beyond double: an embedding variance of 1e-310 puts Post-LN's
 * gradient at the embedding at about 1e310, shown as inf in text and left
 * empty in CSV, with a note; the run succeeds and the rest is finite. A
 * silent branch under an output norm has an infinite weight gradient. */
static void test_extremes(void **state)
{
    (void)state;
    program_run run =
        RUN("--grad", "--placement", "post-ln", "--embedding-var", "1e-310", "--layers", "2");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "        0      -  embedding       -            1          inf");
    assert_contains(run.out, "the gradient variance goes beyond 1.8e+308 below the top");
    program_run_free(&run);
    run = RUN("--grad", "--placement", "post-ln", "--embedding-var", "1e-310", "--layers", "2",
              "--format", "csv");
    assert_int_equal(run.status, 0);
    assert_true(isnan(csv_value(run.out, "grad_var", 0)));
    assert_near("grad_var_1", csv_value(run.out, "grad_var", 1), 1.0, CSV_TOL);
    assert_near("weight_grad_1", csv_value(run.out, "weight_grad", 1), sqrt(0.5), CSV_TOL);
    program_run_free(&run);
    run = RUN("--grad", "--placement", "output-norm", "--gain", "0", "--layers", "1");
    assert_int_equal(run.status, 0);
    assert_contains(run.out,
                    "        1      0  attn            0        1.414        1.225          inf");
    program_run_free(&run);
}

typedef struct {
    const char *args[8];
    const char *message[2];
} refusal;

static void test_refusals(void **state)
{
    (void)state;
    const refusal refusals[] = {
        {{"--grad", "--final-norm", "maybe"}, {"--final-norm: 'maybe'", "yes, no"}},
        {{"--final-norm", "no"}, {"--final-norm changes only the backward half", "--grad"}},
        {{"table", "--final-norm", "yes"}, {"--final-norm changes only", "add --grad"}},
    };
    for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
        const char *args[9] = {0};
        memcpy(args, refusals[i].args, sizeof refusals[i].args);
        program_run run = run_varprof(args);
        if (run.status != 2)
            fail_msg("refusal %zu (%s %s): exit %d, stderr %s", i, args[0], args[1], run.status,
                     run.err);
        for (size_t m = 0; m < 2; m++)
            assert_contains(run.err, refusals[i].message[m]);
        assert_int_equal(run.out_length, 0);
        program_run_free(&run);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_figures),     cmocka_unit_test(test_columns_empty_without_grad),
        cmocka_unit_test(test_json_final_norm), cmocka_unit_test(test_text),
        cmocka_unit_test(test_table),           cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_refusals),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
