/* Issue 32, "Nothing false on the page", for varprof table: the text fits
 * 80 columns with and without --grad and --explain, whatever the stack;
 * every symbol it prints is defined above the formulas; and each value is
 * the figure --wide prints in full, and the CSV's, to the precision it
 * shows (at most six significant figures). */
#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "printed_number.h"
#include "run_program.h"
#include "test_filter.h"

static program_run ran(const char *const *args)
{
    program_run run = run_varprof(args);
    if (run.status != 0)
        fail_msg("exit %d: %s", run.status, run.err);
    return run;
}

/* The cases: the default stack, other gains and scales, a deep one whose
   shares leave double, and figures long in every digit. */
#define CASES 5
static const char *const stacks[CASES][10] = {
    {NULL},
    {"--layers", "12", "--gain", "2", "--gamma", "0.5", NULL},
    {"--layers", "2000", NULL},
    {"--layers", "999999", "--gain", "1.23456789", "--gamma", "0.000123456789", NULL},
    {"--layers", "3", "--alpha", "1e300", "--beta", "1e-300", "--gain", "1e10", NULL},
};

/* table, the stack's options, then the extra ones (NULL-terminated) */
static program_run table_of(size_t stack, const char *const *extra)
{
    const char *args[24] = {"table"};
    size_t n = 1;
    for (size_t i = 0; stacks[stack][i]; i++)
        args[n++] = stacks[stack][i];
    for (size_t i = 0; extra[i]; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    return ran(args);
}

static void table_fits_80_columns(void **state)
{
    (void)state;
    static const char *const modes[][3] = {
        {NULL}, {"--grad", NULL}, {"--explain", NULL}, {"--grad", "--explain", NULL}};
    for (size_t s = 0; s < CASES; s++)
        for (size_t m = 0; m < 4; m++) {
            program_run run = table_of(s, modes[m]);
            if (widest_line(run.out) > 80)
                fail_msg("case %zu, mode %zu: a line of %zu columns in:\n%s", s, m,
                         widest_line(run.out), run.out);
            program_run_free(&run);
        }
}

/* ---- symbols ---- */

typedef struct {
    char names[64][32];
    size_t n;
} name_set;

static int has(const name_set *set, const char *name)
{
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->names[i], name) == 0)
            return 1;
    return 0;
}

/* A symbol as the check knows it: a subscripted one by what comes before
   its last subscript and the "_" ("v_64", "v_{k-1}" and "v_k": "v_";
   "weight_grad_1": "weight_grad_"), a plain one by itself. */
static void add_name(name_set *set, const char *name, size_t len)
{
    size_t keep = len;
    for (size_t i = 0; i < len; i++)
        if (name[i] == '_') {
            keep = i + 1;
            if (name[i + 1] == '{')
                break;
        }
    if (set->n < 64 && keep < 32) {
        snprintf(set->names[set->n], sizeof set->names[0], "%.*s", (int)keep, name);
        set->n++;
    }
}

/* The glossary's names: its lines from the first blank line to the next,
   each name column (up to two spaces) split at ", " and " = ". */
static const char *read_glossary(const char *out, name_set *defined)
{
    const char *line = strstr(out, "\n\n");
    assert_non_null(line);
    for (line += 2; *line && *line != '\n'; line = strchr(line, '\n') + 1) {
        if (line[2] == ' ') /* a description's next line */
            continue;
        const char *end = strstr(line + 2, "  ");
        for (const char *p = line + 2; p < end;) {
            size_t len = 0;
            while (p + len < end && strncmp(p + len, ", ", 2) != 0 &&
                   strncmp(p + len, " = ", 3) != 0)
                len++;
            if (isalpha((unsigned char)*p))
                add_name(defined, p, len);
            p += len + (p + len < end ? (p[len] == ',' ? 2 : 3) : 0);
        }
    }
    return line;
}

/* Every symbol after the glossary: a subscripted name, a single letter
   (but the article "a"), N1, N2 and the Greek names; none may be missing
   from the glossary. Numbers' exponents and English words are not
   symbols. */
static void check_symbols(const char *text, const name_set *defined, const char *what)
{
    static const char *const greek[] = {"alpha", "beta", "gamma", "N1", "N2"};
    for (const char *p = text; *p; p++) {
        if (!isalpha((unsigned char)*p) ||
            (p > text && (isalnum((unsigned char)p[-1]) || strchr("_.'", p[-1]))))
            continue;
        const char *start = p;
        while (isalnum((unsigned char)*p))
            p++;
        int subscripted = 0;
        while (*p == '_' && (isalnum((unsigned char)p[1]) || p[1] == '{')) {
            subscripted = 1;
            if (p[1] == '{')
                p = strchr(p, '}') + 1;
            else
                for (p++; isalnum((unsigned char)*p);)
                    p++;
        }
        const size_t len = (size_t)(p - start);
        name_set one = {.n = 0};
        add_name(&one, start, len);
        int symbol = subscripted || (len == 1 && *start != 'a');
        for (size_t i = 0; i < 5; i++)
            symbol |= len == strlen(greek[i]) && strncmp(start, greek[i], len) == 0;
        if (symbol && !has(defined, one.names[0]))
            fail_msg("%s: '%.*s' is not defined above the formulas", what, (int)len, start);
        p--;
    }
}

static void table_defines_every_symbol(void **state)
{
    (void)state;
    static const char *const modes[][3] = {
        {NULL}, {"--grad", NULL}, {"--explain", NULL}, {"--grad", "--explain", NULL}};
    for (size_t s = 0; s < CASES; s++)
        for (size_t m = 0; m < 4; m++) {
            program_run run = table_of(s, modes[m]);
            name_set defined = {.n = 0};
            const char *rest = read_glossary(run.out, &defined);
            assert_true(has(&defined, "x") && has(&defined, "v_") && has(&defined, "g_"));
            char what[32];
            snprintf(what, sizeof what, "case %zu, mode %zu", s, m);
            check_symbols(rest, &defined, what);
            program_run_free(&run);
        }
}

/* ---- values ---- */

/* The next number in text from *at (digits, a point, an exponent), not
   one inside a name (v_64, N1); its text in printed. 0 at the end. */
static int next_number(const char **at, char *printed, size_t size)
{
    for (const char *p = *at; *p; p++) {
        if (!isdigit((unsigned char)*p) ||
            (p > *at && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.')))
            continue;
        char *end;
        strtod(p, &end);
        snprintf(printed, size, "%.*s", (int)(end - p), p);
        *at = end;
        return 1;
    }
    return 0;
}

static int figures_of(const char *text)
{
    int n = 0, started = 0;
    for (const char *p = text; *p && *p != 'e'; p++)
        if (isdigit((unsigned char)*p)) {
            started |= *p != '0';
            n += started;
        }
    return n;
}

static int rounds_to(const char *printed, double value)
{
    const double shown = strtod(printed, NULL);
    return fabs(shown - value) <= printed_half_unit(printed) * (1.0 + 1e-9) ||
           (isinf(value) && isinf(shown));
}

/* The same text with --wide: the same numbers in the same order, each
   printed one the wide one rounded, with at most six significant figures;
   the wide ones go further. */
static void check_against_wide(const char *narrow, const char *wide, const char *what)
{
    const char *a = narrow, *b = wide;
    char x[64], y[64];
    size_t numbers = 0;
    int longer = 0;
    while (next_number(&a, x, sizeof x)) {
        if (!next_number(&b, y, sizeof y))
            fail_msg("%s: %s has no counterpart in --wide", what, x);
        if (strpbrk(x, ".e") && figures_of(x) > 6)
            fail_msg("%s: %s has %d significant figures", what, x, figures_of(x));
        if (!rounds_to(x, strtod(y, NULL)))
            fail_msg("%s: %s, but --wide prints %s", what, x, y);
        longer |= figures_of(y) > 6;
        numbers++;
    }
    assert_false(next_number(&b, y, sizeof y));
    assert_true(longer);
    assert_true(numbers > 50);
}

static void table_values_are_wide_ones_rounded(void **state)
{
    (void)state;
    static const char *const modes[][4] = {{"--grad", "--explain", NULL},
                                           {"--grad", "--explain", "--wide", NULL}};
    for (size_t s = 0; s < CASES; s++) {
        program_run narrow = table_of(s, modes[0]), wide = table_of(s, modes[1]);
        char what[32];
        snprintf(what, sizeof what, "case %zu", s);
        check_against_wide(narrow.out, wide.out, what);
        program_run_free(&narrow);
        program_run_free(&wide);
    }
}

/* The value printed under a formula: the text after "\n    <prefix>" up to
   the next formula, continuation lines joined. */
static void value_of(const char *block, const char *prefix, char *value, size_t size)
{
    char key[64];
    snprintf(key, sizeof key, "\n    %s", prefix);
    const char *p = strstr(block, key);
    if (!p)
        fail_msg("no '%s' in:\n%.400s", prefix, block);
    p += 5;
    size_t n = 0;
    while (*p && n + 1 < size) {
        if (*p == '\n' && strncmp(p + 1, "        ", 8) != 0)
            break;
        value[n++] = *p++;
    }
    value[n] = '\0';
}

/* The n-th number from the end of text (1: the last). */
static void number_from_end(const char *text, int n, char *printed, size_t size)
{
    char all[32][64];
    int count = 0;
    for (const char *p = text; count < 32 && next_number(&p, all[count], sizeof all[0]);)
        count++;
    assert_true(count >= n);
    snprintf(printed, size, "%s", all[count - n]);
}

/* Field `column` of a CSV line (no field of the maths table is quoted
   but the formula, which has no comma), as a number. */
static double csv_field(const char *line, int column)
{
    for (int i = 0; i < column; i++)
        line = strchr(line, ',') + 1;
    return strtod(line, NULL);
}

static void expect_rounds(const char *printed, double value, const char *what, const char *name)
{
    if (!rounds_to(printed, value))
        fail_msg("%s, %s: printed %s, CSV %.17g", what, name, printed, value);
}

/* Each placement's figures at the top, as the text prints them, against
   the CSV's stream_var (3), stream_size (4) and update_ratio (5). */
static void table_values_are_the_csvs(void **state)
{
    (void)state;
    for (size_t s = 0; s < 2; s++) {
        program_run text = table_of(s, (const char *const[]){NULL});
        program_run csv = table_of(s, (const char *const[]){"--format", "csv", NULL});
        size_t placements = 0;
        for (const char *row = strchr(csv.out, '\n'); row && row[1]; row = strchr(row + 1, '\n')) {
            char name[32], heading[48], v[512], printed[64], what[64];
            sscanf(row + 1, "%31[^,]", name);
            snprintf(heading, sizeof heading, "\n\n%s    ", name);
            const char *block = strstr(text.out, heading);
            assert_non_null(block);
            const int K = (int)csv_field(row + 1, 2);
            snprintf(what, sizeof what, "case %zu, %s", s, name);
            snprintf(heading, sizeof heading, "v_%d = ", K);
            value_of(block + 2, heading, v, sizeof v);
            number_from_end(v, 1, printed, sizeof printed);
            expect_rounds(printed, csv_field(row + 1, 3), what, "stream_var");
            snprintf(heading, sizeof heading, "sqrt(v_%d / v_0) = ", K);
            value_of(block + 2, heading, v, sizeof v);
            number_from_end(v, 1, printed, sizeof printed);
            expect_rounds(printed, csv_field(row + 1, 4), what, "stream_size");
            snprintf(heading, sizeof heading, "u_%d = ", K);
            value_of(block + 2, heading, v, sizeof v);
            number_from_end(v, 2, printed, sizeof printed); /* the one before its % */
            expect_rounds(printed, csv_field(row + 1, 5), what, "update_ratio");
            placements++;
        }
        assert_int_equal(placements, 7);
        program_run_free(&text);
        program_run_free(&csv);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_fits_80_columns),
        cmocka_unit_test(table_defines_every_symbol),
        cmocka_unit_test(table_values_are_wide_ones_rounded),
        cmocka_unit_test(table_values_are_the_csvs),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
