/* What a newcomer tries first: -h, -V, help COMMAND, COMMAND --help, help
 * that fits 80 columns, and refusals that say what was meant: the nearest
 * name, a dash pasted from a PDF, a list with spaces or 'all' inside. */
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
#include "varprof/version.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

static void short_forms_are_the_long_ones(void **state)
{
    (void)state;
    program_run longer = RUN("--help"), shorter = RUN("-h");
    assert_int_equal(shorter.status, 0);
    assert_string_equal(shorter.out, longer.out);
    program_run_free(&longer);
    program_run_free(&shorter);
    program_run v = RUN("-V");
    assert_int_equal(v.status, 0);
    assert_string_equal(v.out, "varprof " VP_VERSION "\n");
    program_run_free(&v);
}

/* `varprof help table` and `varprof table --help` print the table's help
 * alone; `varprof help` all of it. */
static void a_command_has_its_own_help(void **state)
{
    (void)state;
    program_run all = RUN("help"), everything = RUN("--help");
    assert_int_equal(all.status, 0);
    assert_string_equal(all.out, everything.out);
    assert_contains(all.out, "varprof figures:");
    assert_contains(all.out, "varprof help [COMMAND]");
    program_run again = RUN("help", "help");
    assert_int_equal(again.status, 0);
    assert_string_equal(again.out, everything.out);
    program_run_free(&again);
    program_run one = RUN("help", "table"), same = RUN("table", "--help");
    assert_int_equal(one.status, 0);
    assert_string_equal(one.out, same.out);
    assert_contains(one.out, "Usage: varprof table [OPTIONS]");
    assert_contains(one.out, "--explain");
    assert_null(strstr(one.out, "--placement"));
    assert_null(strstr(one.out, "varprof figures"));
    program_run figures = RUN("figures", "-h");
    assert_contains(figures.out, "--outdir");
    assert_null(strstr(figures.out, "--explain"));
    program_run_free(&all);
    program_run_free(&everything);
    program_run_free(&one);
    program_run_free(&same);
    program_run_free(&figures);
}

static void help_fits_80_columns_unless_wide(void **state)
{
    (void)state;
    program_run narrow = RUN("--help"), wide = RUN("--help", "--wide");
    assert_true(widest_line(narrow.out) <= 80);
    assert_true(widest_line(wide.out) > 80);
    program_run_free(&narrow);
    program_run_free(&wide);
}

/* The terminal plot takes the terminal's width: $COLUMNS here, as standard
 * output is a pipe; 80 without it (gnuplot's form feed aside). */
static void terminal_plot_takes_the_terminal_width(void **state)
{
    (void)state;
    unsetenv("COLUMNS");
    program_run plain = RUN("--plot", "-");
    assert_int_equal(plain.status, 0);
    size_t widest = widest_line(plain.out[0] == '\f' ? plain.out + 1 : plain.out);
    assert_true(widest <= 80 && widest >= 70);
    setenv("COLUMNS", "132", 1);
    program_run wide = RUN("--plot", "-");
    unsetenv("COLUMNS");
    assert_int_equal(wide.status, 0);
    widest = widest_line(wide.out[0] == '\f' ? wide.out + 1 : wide.out);
    assert_true(widest <= 132 && widest > 120);
    program_run_free(&plain);
    program_run_free(&wide);
}

/* The profile, models and a model's heading fit 80 columns; --wide gives
 * every column, as before. */
static void text_fits_80_columns_unless_wide(void **state)
{
    (void)state;
    const char *runs[][12] = {
        {"--placement", "all", "--layers", "40", NULL},
        {"--engine", "mc", "--placement", "post-ln,parallel", "--layers", "3", "--trials", "300",
         NULL},
        /* a small share with a half-width in e-notation: the widest estimate */
        {"--engine", "mc", "--placement", "post-ln", "--layers", "8", NULL},
        {"--engine", "forward", "--placement", "sandwich", "--layers", "2", "--width", "16",
         "--heads", "2", NULL},
        {"models", NULL},
        {"--model", "llama-2-7b", "--layers", "2", NULL},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        program_run narrow = run_varprof(runs[i]);
        assert_int_equal(narrow.status, 0);
        if (widest_line(narrow.out) > 80) {
            print_error("%s ...: a line of %zu columns:\n%s\n", runs[i][0], widest_line(narrow.out),
                        narrow.out);
            fail();
        }
        const char *wide_args[14] = {0};
        size_t n = 0;
        while (runs[i][n]) {
            wide_args[n] = runs[i][n];
            n++;
        }
        wide_args[n] = "--wide";
        program_run wide = run_varprof(wide_args);
        assert_int_equal(wide.status, 0);
        assert_true(widest_line(wide.out) > 80);
        program_run_free(&narrow);
        program_run_free(&wide);
    }
    program_run wide = RUN("--engine", "mc", "--layers", "2", "--trials", "100", "--wide");
    assert_contains(wide.out, "size p5 p50 p95");
    program_run_free(&wide);
    program_run narrow = RUN("--engine", "mc", "--layers", "2", "--trials", "100");
    assert_contains(narrow.out, "update +- 95%");
    assert_null(strstr(narrow.out, "size p5 p50 p95"));
    program_run_free(&narrow);
}

typedef struct {
    const char *args[6];
    const char *message[2];
} refusal;

static void check_refusal(const refusal *r)
{
    const char *args[8] = {0};
    for (size_t i = 0; i < 6 && r->args[i]; i++)
        args[i] = r->args[i];
    program_run run = run_varprof(args);
    if (run.status != 2) {
        print_error("%s ...: exit %d, expected 2; stderr:\n%s\n", args[0], run.status, run.err);
        fail();
    }
    for (size_t i = 0; i < 2 && r->message[i]; i++)
        assert_contains(run.err, r->message[i]);
    assert_contains(run.err, "Try 'varprof --help'.");
    assert_string_equal(run.out, "");
    program_run_free(&run);
}

static void misspelt_names_get_the_nearest(void **state)
{
    (void)state;
    const refusal cases[] = {
        {{"tabel"}, {"unknown command 'tabel'", "did you mean 'table'?"}},
        {{"hlep"}, {"did you mean 'help'?"}},
        {{"--layres", "4"}, {"unknown option '--layres'", "did you mean --layers?"}},
        {{"--placement", "prenorm"}, {"unknown placement 'prenorm'", "did you mean pre-norm?"}},
        {{"--placement", "post-ln,sandwhich"}, {"did you mean sandwich?"}},
        {{"--model", "lama-2-7b"}, {"did you mean llama-2-7b?"}},
        {{"table", "--explian"}, {"did you mean --explain?"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_refusal(&cases[i]);
    /* nothing near: no guess */
    program_run run = RUN("--placement", "xyz");
    assert_int_equal(run.status, 2);
    assert_null(strstr(run.err, "did you mean"));
    program_run_free(&run);
}

static void lists_take_no_spaces_and_all_stands_alone(void **state)
{
    (void)state;
    const refusal cases[] = {
        {{"--placement", "post-ln, pre-norm"}, {"a list takes no spaces", "post-ln,pre-norm"}},
        {{"--placement", "post-ln,", "pre-norm"},
         {"a list takes no spaces", "write post-ln,pre-norm"}},
        {{"--placement", "post-ln,all"}, {"'all' must stand alone"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_refusal(&cases[i]);
}

static void dashes_from_a_pdf_are_named(void **state)
{
    (void)state;
    const refusal cases[] = {
        {{"\xe2\x80\x93-layers", "4"},
         {"an en dash (U+2013)", "type the ASCII '-' instead: --layers"}},
        /* a PDF sets "--layers" as one dash: the fix is the two hyphens */
        {{"\xe2\x80\x94layers", "4"}, {"an em dash (U+2014)", "instead: --layers"}},
        {{"\xe2\x80\x93gain", "2"}, {"an en dash (U+2013)", "instead: --gain"}},
        {{"--gain", "1e\xe2\x88\x92"
                    "3"},
         {"--gain", "a minus sign (U+2212)"}},
        {{"--gain", "\xe2\x88\x92"
                    "1"},
         {"a minus sign (U+2212)", "--gain -1"}},
        {{"--placement", "pre\xe2\x80\x91norm"},
         {"a non-breaking hyphen (U+2011)", "--placement pre-norm"}},
        {{"table", "\xe2\x80\x93\xe2\x80\x93"
                   "explain"},
         {"an en dash (U+2013)", "--explain"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_refusal(&cases[i]);
}

/* --gamma, --alpha and --beta must scale a part of at least one chosen
 * placement, as the placement table's traits say. */
static void scales_apply_to_a_chosen_placement(void **state)
{
    (void)state;
    const refusal cases[] = {
        {{"--gamma", "2"}, {"--gamma", "pre-norm does not have"}},
        {{"--placement", "post-ln", "--alpha", "2"}, {"--alpha", "it applies to deepnorm"}},
        {{"--placement", "sandwich", "--beta", "0.5"}, {"--beta", "it applies to deepnorm"}},
        {{"--placement", "deepnorm", "--gamma", "2"}, {"it applies to sandwich, output-norm"}},
        {{"--placement", "sandwich,post-ln", "--alpha", "2"}, {"none of sandwich, post-ln has"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_refusal(&cases[i]);
    const char *accepted[][7] = {
        {"--placement", "sandwich,pre-norm", "--gamma", "0.5", NULL},
        {"--placement", "deepnorm", "--alpha", "2", "--beta", "0.5", NULL},
        {"--placement", "all", "--alpha", "2", NULL},
        {"table", "--gamma", "0.5", "--alpha", "2", NULL},
    };
    for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++) {
        program_run run = run_varprof(accepted[i]);
        assert_int_equal(run.status, 0);
        program_run_free(&run);
    }
}

/* A file's name may hold any character, an en dash included. */
static void file_names_keep_their_dashes(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path,
             "%s/draft\xe2\x80\x93"
             "2.csv",
             test_scratch());
    program_run run = RUN("--layers", "2", "--format", "csv", "--output", path);
    assert_int_equal(run.status, 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    fclose(f);
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_forms_are_the_long_ones),
        cmocka_unit_test(a_command_has_its_own_help),
        cmocka_unit_test(help_fits_80_columns_unless_wide),
        cmocka_unit_test(terminal_plot_takes_the_terminal_width),
        cmocka_unit_test(text_fits_80_columns_unless_wide),
        cmocka_unit_test(misspelt_names_get_the_nearest),
        cmocka_unit_test(lists_take_no_spaces_and_all_stands_alone),
        cmocka_unit_test(dashes_from_a_pdf_are_named),
        cmocka_unit_test(file_names_keep_their_dashes),
        cmocka_unit_test(scales_apply_to_a_chosen_placement),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("conventions a newcomer tries first", tests,
                                       test_scratch_setup, test_scratch_teardown);
}
