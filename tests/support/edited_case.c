/* Copies of a conformance case with config.json edited, run beside the unedited case. */
#include "edited_case.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "run_program.h"
#include "text_file.h"

/* dir: a copy of the case with config.json edited */
void edited_case_copy(const kin_case *c, const char *dir)
{
    test_remove_tree(dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    static const char *const files[] = {"config.json", "model.safetensors", "tokens.csv"};
    char from[1024], to[1024];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(from, sizeof from, "%s/%s/%s", test_data_path("conformance"), c->base, files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        copy_file(from, to);
    }
    snprintf(to, sizeof to, "%s/config.json", dir);
    static char text[1 << 16], next[1 << 16];
    snprintf(text, sizeof text, "%s", read_text(to));
    for (size_t i = 0; i < 4 && c->edits[i].from; i++) {
        const char *at = strstr(text, c->edits[i].from);
        if (!at)
            fail_msg("%s: '%s' is not in config.json", c->base, c->edits[i].from);
        snprintf(next, sizeof next, "%.*s%s%s", (int)(at - text), text, c->edits[i].to,
                 at + strlen(c->edits[i].from));
        memcpy(text, next, sizeof text);
    }
    write_text(to, text);
}

/* The conformance test's command, on dir's own tokens. */
static program_run run_dir(const char *dir)
{
    char tokens[1100];
    snprintf(tokens, sizeof tokens, "%s/tokens.csv", dir);
    const char *args[] = {"--engine", "forward", "--weights", dir,        "--token-ids", tokens,
                          "--grad",   "--loss",  "next",      "--format", "csv",         NULL};
    return run_varprof(args);
}

/* A case beside its unedited base: refused (a non-zero exit, nothing out,
   every says in the message) or, with no says, exit 0 and the same output;
   1 if it is not. */
int edited_case_expect(const char *name, size_t i, const kin_case *c)
{
    char dir[512], base[1100];
    snprintf(dir, sizeof dir, "%s/%s%zu", test_scratch(), name, i);
    snprintf(base, sizeof base, "%s/%s", test_data_path("conformance"), c->base);
    edited_case_copy(c, dir);
    program_run want = run_dir(base), run = run_dir(dir);
    const int refuse = c->says[0] != NULL;
    const int same = want.status == 0 && run.status == 0 && strcmp(run.out, want.out) == 0;
    int bad = refuse ? run.status == 0 || run.out_length != 0 : !same || run.err[0] != '\0';
    for (size_t s = 0; s < 2 && c->says[s]; s++)
        bad |= !strstr(run.err, c->says[s]);
    if (bad)
        print_error("case %zu (%s, '%s' -> '%s'): exit %d, %zu bytes out, %s the unedited run's; "
                    "want %s '%s' '%s': %s",
                    i, c->base, c->edits[0].from, c->edits[0].to, run.status, run.out_length,
                    same ? "as" : "unlike",
                    refuse ? "a refusal naming" : "exit 0 and the same output",
                    c->says[0] ? c->says[0] : "", c->says[1] ? c->says[1] : "", run.err);
    else if (refuse)
        print_message("  %2zu %-10s exit %d: %s", i, c->base, run.status, run.err);
    else
        print_message("  %2zu %-10s exit 0, the unedited output (%zu bytes)\n", i, c->base,
                      run.out_length);
    program_run_free(&run);
    program_run_free(&want);
    test_remove_tree(dir);
    return bad;
}

int edited_cases_expect(const char *name, const kin_case *cases, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= edited_case_expect(name, i, &cases[i]);
    return bad;
}
