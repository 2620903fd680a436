/* --shard K/N and varprof merge (issue 31): a train sweep and a profile
 * sweep, each run whole and as N parts (--shard K/N), in CSV and JSON, the
 * parts merged in the order K = 1..N: the merge is the whole run's output
 * byte for byte, with every part holding at least one combination. Parts
 * that do not belong together, cut short or of two kinds are refused by
 * name, and nothing is written then. */
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

#define MAX_ARGS 40

/* A whole output, of any size, malloc'd. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
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

/* Runs args (NULL-terminated) with "--shard K/N" and "--output PATH" added
   (K 0: no --shard), expecting success. */
static void run_part(const char *const *args, size_t k, size_t n, const char *path)
{
    const char *argv[MAX_ARGS];
    size_t c = 0;
    while (args[c])
        argv[c] = args[c], c++;
    char shard[32];
    if (k) {
        snprintf(shard, sizeof shard, "%zu/%zu", k, n);
        argv[c++] = "--shard";
        argv[c++] = shard;
    }
    argv[c++] = "--output";
    argv[c++] = path;
    argv[c] = NULL;
    program_run run = run_varprof(argv);
    if (run.status != 0)
        fail_msg("varprof %s ... --shard %s: exit %d: %s", args[0], k ? shard : "none", run.status,
                 run.err);
    program_run_free(&run);
}

/* The sweep whole, then as n parts merged: the same bytes, no part empty. */
static void merged_is_whole(const char *const *args, size_t n, const char *ext)
{
    char whole[64], merged[64], parts[16][64];
    snprintf(whole, sizeof whole, "whole.%s", ext);
    snprintf(merged, sizeof merged, "merged.%s", ext);
    run_part(args, 0, 0, in_scratch(whole));
    const char *merge[MAX_ARGS] = {"merge"};
    size_t c = 1;
    for (size_t k = 1; k <= n; k++) {
        snprintf(parts[k - 1], sizeof parts[k - 1], "part%zu.%s", k, ext);
        const char *path = in_scratch(parts[k - 1]);
        run_part(args, k, n, path);
        char *text = slurp(path);
        const char *second_line = strchr(text, '\n');
        assert_non_null(second_line);
        assert_true(second_line[1] != '\0' && second_line[1] != ']'); /* a row at least */
        free(text);
        merge[c++] = parts[k - 1];
    }
    for (size_t k = 1; k < c; k++) /* in_scratch rotates its buffers: name them late */
        merge[k] = strcpy(parts[k - 1], in_scratch(parts[k - 1]));
    merge[c++] = "--output";
    merge[c++] = in_scratch(merged);
    merge[c] = NULL;
    program_run run = run_varprof(merge);
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    char *want = slurp(in_scratch(whole)), *got = slurp(in_scratch(merged));
    assert_string_equal(got, want);
    free(want);
    free(got);
    remove(in_scratch(whole));
    remove(in_scratch(merged));
    for (size_t k = 1; k < c - 2; k++)
        remove(merge[k]);
}

static void train_sweep_merges_to_the_whole(void **state)
{
    (void)state;
    const char *csv[] = {"train", "--placement", "pre-norm,post-ln", "--layers", "2,4,6",
                         "--lr",  "1e-3,3e-3",   "--steps",          "15",       "--format",
                         "csv",   NULL};
    for (size_t n = 1; n <= 5; n++)
        merged_is_whole(csv, n, "csv");
    const char *json[] = {"train", "--layers", "2,3,4", "--steps", "10", "--format", "json", NULL};
    merged_is_whole(json, 4, "json");
}

static void profile_sweep_merges_to_the_whole(void **state)
{
    (void)state;
    const char *csv[] = {"--placement", "pre-norm,post-ln,deepnorm",
                         "--gain",      "0.5,1",
                         "--layers",    "2,8",
                         "--engine",    "closed,mc",
                         "--trials",    "300",
                         "--format",    "csv",
                         NULL};
    for (size_t n = 1; n <= 6; n++)
        merged_is_whole(csv, n, "csv");
    const char *json[] = {"--placement", "all", "--layers", "3", "--format", "json", NULL};
    merged_is_whole(json, 7, "json");
}

static void parts_that_do_not_belong_are_refused(void **state)
{
    (void)state;
    const char *a = in_scratch("a.csv"), *b = in_scratch("b.csv"), *j = in_scratch("j.json");
    write_text(a, "engine,layers\nclosed,2\n");
    write_text(b, "engine,width\nclosed,2\n");
    write_text(j, "{\"runs\":[\n{\"x\":1}\n]}\n");
    const char *other_header[] = {"merge", a, b, NULL};
    program_run run = run_varprof(other_header);
    assert_int_equal(run.status, 1);
    assert_non_null(strstr(run.err, "has another header than"));
    assert_int_equal(run.out_length, 0);
    program_run_free(&run);
    const char *two_kinds[] = {"merge", a, j, NULL};
    run = run_varprof(two_kinds);
    assert_int_equal(run.status, 1);
    assert_non_null(strstr(run.err, "is JSON, but"));
    program_run_free(&run);
    write_text(b, "engine,layers\nclosed,2");
    const char *cut[] = {"merge", a, b, NULL};
    run = run_varprof(cut);
    assert_int_equal(run.status, 1);
    assert_non_null(strstr(run.err, "last line is cut short"));
    program_run_free(&run);
    const char *none[] = {"merge", NULL};
    run = run_varprof(none);
    assert_int_equal(run.status, 2);
    program_run_free(&run);
    const char *too_many[] = {"train", "--shard", "3/3", NULL};
    run = run_varprof(too_many);
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "3 parts of 2 combinations"));
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(train_sweep_merges_to_the_whole),
        cmocka_unit_test(profile_sweep_merges_to_the_whole),
        cmocka_unit_test(parts_that_do_not_belong_are_refused),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, test_scratch_setup, test_scratch_teardown);
}
