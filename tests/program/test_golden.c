/* The golden outputs: every case of tests/data/golden/cases.txt run through
 * the program on every instruction set this CPU supports, its standard
 * output held byte for byte to the recording (tests/data/golden/record.sh,
 * made from the main before issue 11's refactoring). A change of form must
 * move no number; a change that means to move one re-records, with the
 * reason in its commit. On a mismatch the test names the case, the
 * instruction set and the first line that differs. */
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
#include "varprof/isa.h"

#define MAX_ARGS 48
#define MAX_LINE 1024

static char *read_whole(const char *path, size_t *length)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        print_error("cannot open %s\n", path);
        fail();
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    *length = fread(text, 1, (size_t)size, f);
    text[*length] = '\0';
    fclose(f);
    return text;
}

/* The first line where got and want part, printed both ways. */
static void report_first_difference(const char *got, const char *want)
{
    size_t line = 1;
    const char *g = got, *w = want;
    while (*g && *g == *w) {
        if (*g == '\n')
            line++;
        g++;
        w++;
    }
    while (g > got && g[-1] != '\n') {
        g--;
        w--;
    }
    print_error("  first difference at line %zu\n  got:  %.*s\n  want: %.*s\n", line,
                (int)strcspn(g, "\n"), g, (int)strcspn(w, "\n"), w);
}

/* Runs one case on one instruction set; returns 1 if it matches. */
static int check_case(const char *name, const char *isa, int per_isa, char *const *args)
{
    char path[512];
    if (per_isa)
        snprintf(path, sizeof path, "%s/%s.%s.out", test_data_path("golden"), name, isa);
    else
        snprintf(path, sizeof path, "%s/%s.out", test_data_path("golden"), name);
    size_t want_length;
    char *want = read_whole(path, &want_length);
    setenv("VARPROF_ISA", isa, 1);
    program_run run = run_varprof((const char *const *)args);
    unsetenv("VARPROF_ISA");
    int ok =
        run.status == 0 && run.out_length == want_length && memcmp(run.out, want, want_length) == 0;
    if (!ok) {
        print_error("golden case %s on %s: exit %d, %zu bytes against %zu recorded\n", name, isa,
                    run.status, run.out_length, want_length);
        if (run.status != 0)
            print_error("  stderr: %s\n", run.err);
        report_first_difference(run.out, want);
    }
    program_run_free(&run);
    free(want);
    return ok;
}

static void every_case_matches_its_recording(void **state)
{
    (void)state;
    char cases[512];
    snprintf(cases, sizeof cases, "%s/cases.txt", test_data_path("golden"));
    FILE *f = fopen(cases, "r");
    assert_non_null(f);
    char line[MAX_LINE];
    size_t checked = 0, failed = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *name = strtok(line, "|");
        char *mode = strtok(NULL, "|");
        char *rest = strtok(NULL, "|");
        assert_non_null(rest);
        int per_isa = strcmp(mode, "each") == 0;
        assert_true(per_isa || strcmp(mode, "any") == 0);
        /* the arguments, with @DATA@ as the test data folder */
        static char storage[MAX_ARGS][512];
        char *args[MAX_ARGS + 1];
        size_t n = 0;
        for (char *word = strtok(rest, " "); word; word = strtok(NULL, " ")) {
            assert_true(n < MAX_ARGS);
            const char *at = strstr(word, "@DATA@");
            if (at)
                snprintf(storage[n], sizeof storage[n], "%.*s%s%s", (int)(at - word), word,
                         test_data_path(""), at + 6);
            else
                snprintf(storage[n], sizeof storage[n], "%s", word);
            args[n] = storage[n];
            n++;
        }
        args[n] = NULL;
        for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
            if (!vp_isa_supported((vp_isa)isa))
                continue;
            checked++;
            if (!check_case(name, vp_isa_name((vp_isa)isa), per_isa, args))
                failed++;
        }
    }
    fclose(f);
    print_message("golden: %zu runs checked, %zu differ\n", checked, failed);
    assert_true(checked >= 28);
    assert_int_equal(failed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_case_matches_its_recording),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
