#include "output_format.h"

#include <string.h>

/* In output_format's order: --format's word. */
static const struct {
    const char *name;
} formats[] = {
    [FORMAT_TEXT] = {"text"},         [FORMAT_CSV] = {"csv"},     [FORMAT_JSON] = {"json"},
    [FORMAT_MARKDOWN] = {"markdown"}, [FORMAT_LATEX] = {"latex"},
};

#define FORMAT_COUNT (sizeof formats / sizeof *formats)

int read_output_format(const cli_args *args, output_format *format)
{
    const char *names[FORMAT_COUNT + 1] = {NULL};
    for (size_t f = 0; f < FORMAT_COUNT; f++)
        names[f] = formats[f].name;
    int chosen = FORMAT_TEXT;
    int rc = cli_choice(args, OPT_FORMAT, names, &chosen);
    if (rc != EXIT_OK)
        return rc;
    *format = (output_format)chosen;
    return EXIT_OK;
}
