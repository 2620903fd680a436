/* --format: the output format named or implied by the output file's extension. */
#include "output_format.h"

#include <string.h>
#include <strings.h>

/* In output_format's order: --format's word, the extension that implies it
 * (NULL: none does) and its name in a sentence. */
static const struct {
    const char *name;
    const char *extension;
    const char *title;
} formats[] = {
    [FORMAT_TEXT] = {"text", NULL, "text"},
    [FORMAT_CSV] = {"csv", ".csv", "CSV"},
    [FORMAT_JSON] = {"json", ".json", "JSON"},
    [FORMAT_MARKDOWN] = {"markdown", ".md", "Markdown"},
    [FORMAT_LATEX] = {"latex", ".tex", "LaTeX"},
};

#define FORMAT_COUNT (sizeof formats / sizeof *formats)

/* The format a file name's extension names, or -1. Case-insensitive, as
 * "PROFILE.CSV" is as plainly a CSV file. */
static int format_of_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot)
        return -1;
    for (size_t f = 0; f < FORMAT_COUNT; f++)
        if (formats[f].extension && strcasecmp(dot, formats[f].extension) == 0)
            return (int)f;
    return -1;
}

int read_output_format(const cli_args *args, output_format *format)
{
    const char *names[FORMAT_COUNT + 1] = {NULL};
    for (size_t f = 0; f < FORMAT_COUNT; f++)
        names[f] = formats[f].name;
    int chosen = FORMAT_TEXT;
    int rc = cli_choice(args, OPT_FORMAT, names, &chosen);
    if (rc != EXIT_OK)
        return rc;
    const char *path = args->given[OPT_OUTPUT] ? args->value[OPT_OUTPUT] : NULL;
    const int implied = path && strcmp(path, "-") != 0 ? format_of_name(path) : -1;
    if (implied >= 0 && args->given[OPT_FORMAT] && implied != chosen)
        return cli_usage_error("--format %s, but --output '%s' names a %s file; drop --format "
                               "or give the file a name that fits",
                               formats[chosen].name, path, formats[implied].title);
    *format = (output_format)(implied >= 0 ? implied : chosen);
    return EXIT_OK;
}
