#include "output_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"

void expect_output(const char *const *args, const char *says, const char *lacks)
{
    program_run run = run_varprof(args);
    if (run.status != 0 || !strstr(run.out, says) || (lacks && strstr(run.out, lacks)))
        fail_msg("exit %d, want '%s'%s%s in:\n%.600s", run.status, says, lacks ? " and no " : "",
                 lacks ? lacks : "", run.out);
    program_run_free(&run);
}

void drop_lines(char *text, const char *prefix)
{
    const size_t n = strlen(prefix);
    char *to = text;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        const size_t length = end ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, prefix, n) != 0) {
            memmove(to, line, length);
            to += length;
        }
        line += length;
    }
    *to = '\0';
}
