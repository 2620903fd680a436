/* Small things a user trips on, each said plainly (issue 32): a model named
 * by its family, a single-dash option, an output whose folder is missing,
 * token ids separated by spaces; the help naming every checkpoint family
 * varprof reads; the manual's limit on a row of token ids the reader's; and
 * the embedding share said to be a ratio of RMS where it is printed and
 * where the manual first names it. */
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
#include "text_file.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) {
        print_error("expected to find \"%s\" in:\n%s\n", part, text);
        fail();
    }
}

/* A whole file, NUL-terminated, to free; the manual is beyond read_text's 64 KiB. */
static char *read_whole(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    const long size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    return text;
}

/* exit status `status`, nothing on standard output, and `part` said */
static void check_says(program_run *run, int status, const char *part)
{
    if (run->status != status || run->out_length != 0)
        fail_msg("exit %d (want %d), %zu bytes out: %s", run->status, status, run->out_length,
                 run->err);
    assert_contains(run->err, part);
    program_run_free(run);
}

/* A model named as its family is without its size: its models offered. */
static void a_family_name_gets_its_models(void **state)
{
    (void)state;
    program_run run = RUN("--model", "gpt2");
    check_says(&run, 2,
               "--model: 'gpt2' is not in the models table; did you mean gpt-2-small or "
               "gpt-2-xl? 'varprof models' lists them\n");
    run = RUN("--model", "gemma2");
    check_says(&run, 2, "did you mean gemma-2-27b, gemma-2-2b or gemma-2-9b? ");
    run = RUN("--model", "lama-2-7b"); /* a typo: the nearest alone */
    check_says(&run, 2, "did you mean llama-2-7b? 'varprof");
}

/* One dash is an option misspelt, not a stray word: named as an unknown
 * option, with the long one it most likely meant. */
static void a_single_dash_is_an_unknown_option(void **state)
{
    (void)state;
    program_run run = RUN("-x");
    check_says(&run, 2, "varprof: unknown option '-x'; options start with '--' (-h and -V aside)");
    run = RUN("-layers", "2");
    check_says(&run, 2,
               "unknown option '-layers'; options start with '--' (-h and -V aside); "
               "did you mean --layers?\n");
    run = RUN("--layers", "2", "stray"); /* a word is still a stray argument */
    check_says(&run, 2, "unexpected argument 'stray'; options start with '--'");
}

/* A file that cannot be made for its folder names the folder, not the
 * temporary file that was tried beside the target. */
static void a_missing_folder_is_named(void **state)
{
    (void)state;
    char missing[512], want[1400], plain[512], under[600];
    snprintf(missing, sizeof missing, "%s/no/such/out.csv", test_scratch());
    snprintf(want, sizeof want, "varprof: cannot write '%s': its folder '%s/no/such': No such file",
             missing, test_scratch());
    program_run run = RUN("--output", missing);
    assert_null(strstr(run.err, "temporary"));
    check_says(&run, 1, want);
    snprintf(plain, sizeof plain, "%s/plain.txt", test_scratch());
    write_text(plain, "a file, not a folder\n");
    snprintf(under, sizeof under, "%s/out.csv", plain);
    snprintf(want, sizeof want, "cannot write '%s': '%s' is not a folder", under, plain);
    run = RUN("--output", under);
    check_says(&run, 1, want);
    /* --plot's file too: the library's atomic file names the folder */
    snprintf(missing, sizeof missing, "%s/no/such/figure.svg", test_scratch());
    snprintf(want, sizeof want, "varprof: --plot: cannot write '%s': its folder '%s/no/such'",
             missing, test_scratch());
    run = RUN("--plot", missing);
    assert_null(strstr(run.err, "temporary"));
    check_says(&run, 1, want);
}

/* Token ids run together with spaces, tabs or semicolons: the commas are
 * asked for. */
static void token_ids_with_spaces_ask_for_commas(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"1 2 3\n4 5 6\n", "row 1, column 1: '1 2 3' is not a token id from 0 to 511; a row's ids "
                           "are separated by commas, not spaces"},
        {"1;2;3\n", "not semicolons"},
        {"1\t2\t3\n", "not tabs"},
        {"1,2,x\n", "row 1, column 3: 'x' is not a token id from 0 to 511\n"},
    };
    char path[512];
    snprintf(path, sizeof path, "%s/tokens.csv", test_scratch());
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_text(path, cases[i].text);
        program_run run = RUN("--engine", "forward", "--token-ids", path);
        check_says(&run, 1, cases[i].says);
    }
}

/* --help's --weights names every family a checkpoint of tests/data/hf has
 * (config.json's model_type), and mistral, which reads as llama. */
static void weights_help_names_every_family(void **state)
{
    (void)state;
    program_run help = RUN("--help", "--wide");
    assert_int_equal(help.status, 0);
    const char *entry = strstr(help.out, "--weights FILE|DIR");
    assert_non_null(entry);
    const char *end = strstr(entry, "\n  --");
    assert_non_null(end);
    char text[1024];
    snprintf(text, sizeof text, "%.*s", (int)(end - entry), entry);
    static const char *const dirs[] = {"gpt2_d32", "llama_d32", "qwen2_d32", "gemma2_d32",
                                       "olmo2_d32"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char name[64], family[64], listed[3][72];
        snprintf(name, sizeof name, "hf/%s/config.json", dirs[i]);
        const char *type = strstr(read_text(test_data_path(name)), "\"model_type\": \"");
        assert_non_null(type);
        assert_int_equal(sscanf(type, "\"model_type\": \"%63[^\"]", family), 1);
        /* in the list "(gpt2, llama, ..., olmo2)": first, inside, or last */
        snprintf(listed[0], sizeof listed[0], "(%s,", family);
        snprintf(listed[1], sizeof listed[1], " %s,", family);
        snprintf(listed[2], sizeof listed[2], " %s)", family);
        if (!strstr(text, listed[0]) && !strstr(text, listed[1]) && !strstr(text, listed[2]))
            fail_msg("--weights' help does not name %s: %s", family, text);
    }
    assert_contains(text, " mistral,");
    program_run_free(&help);
}

/* The manual's limit on a row of token ids is the reader's: a row of that
 * many is read to its last id, one more is refused; the BAD INPUT matrix
 * says the same number. */
static void the_manuals_row_limit_is_the_readers(void **state)
{
    (void)state;
    char *manual = read_whole("man/varprof.1");
    const char *said = strstr(manual, "A row holds at most ");
    assert_non_null(said);
    const unsigned long most = strtoul(said + strlen("A row holds at most "), NULL, 10);
    char matrix[64];
    snprintf(matrix, sizeof matrix, "more than %lu ids a row", most);
    assert_contains(manual, matrix);
    assert_true(most > 0 && most < 10000000); /* a number, and a file of a few MB */
    char path[512], want[128];
    snprintf(path, sizeof path, "%s/long_row.csv", test_scratch());
    for (unsigned long ids = most; ids <= most + 1; ids++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        for (unsigned long i = 1; i < ids; i++)
            fputs("0,", f);
        fputs("99999\n", f); /* beyond the vocabulary: the reader stops here */
        assert_int_equal(fclose(f), 0);
        program_run run = RUN("--engine", "forward", "--token-ids", path);
        if (ids == most)
            snprintf(want, sizeof want, "row 1, column %lu: '99999' is not a token id", ids);
        else
            snprintf(want, sizeof want, "line 1 has more than %lu columns", most);
        check_says(&run, 1, want);
    }
    free(manual);
}

/* The embedding share is a ratio of RMS (12.4 % of the RMS is 1.5 % of the
 * variance): the text's summary says so, and so does the manual where it
 * first names the share. */
static void the_share_is_said_to_be_of_the_rms(void **state)
{
    (void)state;
    program_run run = RUN("--layers", "32", "--gain", "2", "--every", "64");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "  embedding share   6.24 % of the stream (RMS)\n");
    program_run_free(&run);
    char *manual = read_whole("man/varprof.1");
    const char *first = strstr(manual, "embedding share");
    assert_non_null(first);
    char definition[400];
    snprintf(definition, sizeof definition, "%.399s", first);
    *strstr(definition, ".\n") = '\0'; /* its sentence */
    assert_contains(definition, "RMS");
    assert_contains(definition, "variance");
    free(manual);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_family_name_gets_its_models),
        cmocka_unit_test(a_single_dash_is_an_unknown_option),
        cmocka_unit_test(a_missing_folder_is_named),
        cmocka_unit_test(token_ids_with_spaces_ask_for_commas),
        cmocka_unit_test(weights_help_names_every_family),
        cmocka_unit_test(the_manuals_row_limit_is_the_readers),
        cmocka_unit_test(the_share_is_said_to_be_of_the_rms),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("small things said plainly", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
