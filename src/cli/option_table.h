/* The option table: every option's name, value, commands and help. */
#ifndef VARPROF_CLI_OPTION_TABLE_H
#define VARPROF_CLI_OPTION_TABLE_H

#include "options.h"

typedef struct {
    const char *name;    /* without the leading dashes */
    const char *metavar; /* NULL for a flag */
    unsigned commands;
    const char *help;
} option_spec;

/* One row per option_id; the help's "{name}" numbers are help.c's. */
extern const option_spec cli_options[OPT_COUNT];

#endif
