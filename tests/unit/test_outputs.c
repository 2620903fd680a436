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

#include <cmocka.h>

#include "run_program.h"

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

/* Post-LN at 2000 layers: a share of 2^-2000 is 0 as a double, and the CSV
 * keeps it by its log2 in the last column, as JSON always has. */
static void csv_keeps_a_vanishing_share_by_its_log2(void **state)
{
    (void)state;
    program_run run =
        RUN("--placement", "post-ln", "--layers", "2000", "--every", "1000", "--format", "csv");
    assert_int_equal(run.status, 0);
    assert_true(strncmp(run.out + strcspn(run.out, "\n") - strlen(",log2_embedding_share"),
                        ",log2_embedding_share", strlen(",log2_embedding_share")) == 0);
    char line[512];
    line_starting(run.out, "closed,post-ln,,2000,4000,", line, sizeof line);
    /* embedding_share (column 12) is 0; its log2 is -K/2 = -2000 */
    assert_contains(line, ",1,1,1,1,0,");
    const char *last = strrchr(line, ',');
    assert_string_equal(last, ",-2000");
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_keeps_a_vanishing_share_by_its_log2),
    };
    return cmocka_run_group_tests_name("outputs", tests, NULL, NULL);
}
