/* The command line read: the options parsed, their values checked, errors reported. */
#include "options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "output_file.h"
#include "dash_lookalike.h"
#include "nearest_name.h"
#include "option_table.h"
#include "varprof/parse.h"

static const struct {
    const char *name;
    unsigned command;
} commands[] = {
    {"profile", CMD_PROFILE}, {"table", CMD_TABLE}, {"models", CMD_MODELS},
    {"figures", CMD_FIGURES}, {"train", CMD_TRAIN}, {"merge", CMD_MERGE},
};

const char *cli_option_name(option_id id)
{
    static char names[OPT_COUNT][32];
    if (!names[id][0])
        snprintf(names[id], sizeof names[id], "--%s", cli_options[id].name);
    return names[id];
}

static void vreport(const char *format, va_list args)
{
    fputs("varprof: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
}

void cli_warning(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("varprof: warning: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

int cli_usage_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vreport(format, args);
    va_end(args);
    fputs("Try 'varprof --help'.\n", stderr);
    return EXIT_USAGE;
}

int cli_runtime_error(const char *format, ...)
{
    if (errno == EPIPE && output_reader_gone())
        return EXIT_CLOSED_PIPE; // `varprof | head`: the reader has had enough
    va_list args;
    va_start(args, format);
    vreport(format, args);
    va_end(args);
    return EXIT_RUNTIME;
}

/* What the user can do about a library failure: one row per status that an
 * option fixes, "add --force to replace it". */
static const struct {
    vp_status status;
    const char *verb;
    option_id option;
    const char *effect;
} fixes[] = {
    {VP_EEXIST, "add", OPT_FORCE, "to replace it"},
};

int cli_library_error(const char *context, vp_status status, const vp_error *err)
{
    const char *message = err && err->message[0] ? err->message : vp_strerror(status);
    for (size_t i = 0; i < sizeof fixes / sizeof *fixes; i++)
        if (fixes[i].status == status)
            return cli_runtime_error("%s%s%s; %s %s %s", context ? context : "",
                                     context ? ": " : "", message, fixes[i].verb,
                                     cli_option_name(fixes[i].option), fixes[i].effect);
    return cli_runtime_error("%s%s%s", context ? context : "", context ? ": " : "", message);
}

/* The option of that name for the command, else any of that name (so that
 * the error can say it does not apply), else -1. Two commands may each have
 * an option of the same name, such as --format. */
static int find_option(const char *name, size_t length, unsigned command)
{
    int any = -1;
    for (int i = 0; i < OPT_COUNT; i++) {
        if (strlen(cli_options[i].name) != length ||
            strncmp(cli_options[i].name, name, length) != 0)
            continue;
        if (cli_options[i].commands & command)
            return i;
        any = i;
    }
    return any;
}

static const char *command_name(unsigned command)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].command == command)
            return commands[i].name;
    return "?";
}

/* "did you mean --layers?" for an unknown option of the command */
static const char *nearest_option(const char *name, size_t length, unsigned command)
{
    const char *names[OPT_COUNT];
    size_t n = 0;
    for (int i = 0; i < OPT_COUNT; i++)
        if (cli_options[i].commands & command)
            names[n++] = cli_options[i].name;
    return nearest_name(name, length, names, n);
}

/* The command named by argv[i], "help [COMMAND]" included. Returns EXIT_OK
 * with *i past what was read. */
static int read_command(int argc, char **argv, int *i, cli_args *args)
{
    const size_t n_commands = sizeof commands / sizeof commands[0];
    const char *names[sizeof commands / sizeof commands[0] + 1];
    for (size_t c = 0; c < n_commands; c++)
        names[c] = commands[c].name;
    names[n_commands] = "help";
    const char *name = argv[*i];
    const dash_lookalike *dash = find_dash_lookalike(name);
    if (dash)
        return refuse_dash_lookalike(NULL, name, dash);
    const int help = strcmp(name, "help") == 0;
    if (help) { /* varprof help [COMMAND]: that command's help, or all of it */
        args->given[OPT_HELP] = 1;
        if (++*i >= argc || argv[*i][0] == '-')
            return EXIT_OK;
        name = argv[*i];
        if (strcmp(name, "help") == 0) { /* help on help: all of it */
            ++*i;
            return EXIT_OK;
        }
    }
    for (size_t c = 0; c < n_commands; c++)
        if (strcmp(name, commands[c].name) == 0) {
            args->command = commands[c].command;
            args->command_name = commands[c].name;
            args->command_given = 1;
            ++*i;
            return EXIT_OK;
        }
    const char *near = nearest_name(name, strlen(name), names, n_commands + !help);
    char hint[64] = "";
    if (near)
        snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
    return cli_usage_error("unknown command '%s'; %scommands: profile (the default), table, "
                           "models, figures, train, help",
                           name, hint);
}

/* A value that names a file may hold any character; elsewhere a dash from a
 * PDF is refused, saying which it is. */
static int check_value_text(const option_spec *spec, const char *value)
{
    if (strstr(spec->metavar, "FILE") || strstr(spec->metavar, "DIR"))
        return EXIT_OK;
    const dash_lookalike *dash = find_dash_lookalike(value);
    char option[40];
    snprintf(option, sizeof option, "--%s", spec->name);
    return dash ? refuse_dash_lookalike(option, value, dash) : EXIT_OK;
}

/* An argument that is not a --option: one dash (-h and -V aside), a bare
 * word, or "--" alone. */
/* One of merge's files, in the order given. */
static int add_operand(cli_args *args, const char *arg)
{
    if (args->n_operands == CLI_MAX_OPERANDS)
        return cli_usage_error("merge: more than %d files; merge them in groups", CLI_MAX_OPERANDS);
    args->operands[args->n_operands++] = arg;
    return EXIT_OK;
}

static int refuse_non_option(char **argv, int i, const cli_args *args)
{
    const char *arg = argv[i];
    if (arg[0] == '-' && arg[1] != '-' && arg[1] != '\0') { /* -x, -layers: one dash */
        const char *near = nearest_option(arg + 1, strlen(arg + 1), args->command);
        return cli_usage_error("unknown option '%s'; options start with '--' (-h and -V "
                               "aside)%s%s%s",
                               arg, near ? "; did you mean --" : "", near ? near : "",
                               near ? "?" : "");
    }
    const char *before = i > 1 ? argv[i - 1] : "";
    if (*before && before[strlen(before) - 1] == ',')
        return cli_usage_error("unexpected argument '%s' after '%s': a list takes no "
                               "spaces; write %s%s",
                               arg, before, before, arg);
    return cli_usage_error("unexpected argument '%s'; options start with '--'", arg);
}

/* One --name or --name=value, its value the next argument where it takes
 * one and none is joined. */
static int read_option(int argc, char **argv, int *i, cli_args *args)
{
    const char *arg = argv[*i];
    const char *name = arg + 2;
    const char *equals = strchr(name, '=');
    size_t length = equals ? (size_t)(equals - name) : strlen(name);
    int id = find_option(name, length, args->command);
    if (id < 0) {
        const char *near = nearest_option(name, length, args->command);
        if (near)
            return cli_usage_error("unknown option '--%.*s'; did you mean --%s?", (int)length, name,
                                   near);
        return cli_usage_error("unknown option '--%.*s'", (int)length, name);
    }
    const option_spec *spec = &cli_options[id];
    if (!(spec->commands & args->command))
        return cli_usage_error("--%s does not apply to 'varprof %s'", spec->name,
                               command_name(args->command));
    const char *value = NULL;
    if (spec->metavar) {
        if (equals)
            value = equals + 1;
        else if (*i + 1 < argc)
            value = argv[++*i];
        else
            return cli_usage_error("--%s needs a value: %s", spec->name, spec->metavar);
        const int rc = check_value_text(spec, value);
        if (rc != EXIT_OK)
            return rc;
    } else if (equals) {
        return cli_usage_error("--%s takes no value, but was given '%s'", spec->name, equals + 1);
    }
    args->value[id] = value;
    args->given[id] = 1;
    return EXIT_OK;
}

int cli_parse(int argc, char **argv, cli_args *args)
{
    memset(args, 0, sizeof *args);
    args->command = CMD_PROFILE;
    args->command_name = "profile";
    int i = 1;
    int rc;
    if (i < argc && argv[i][0] != '-' && (rc = read_command(argc, argv, &i, args)) != EXIT_OK)
        return rc;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        const dash_lookalike *dash = find_dash_lookalike(arg);
        if (dash)
            return refuse_dash_lookalike(NULL, arg, dash);
        /* the short forms every program has */
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "-V") == 0) {
            args->given[arg[1] == 'h' ? OPT_HELP : OPT_VERSION] = 1;
            continue;
        }
        if (args->command == CMD_MERGE && arg[0] != '-') {
            if ((rc = add_operand(args, arg)) != EXIT_OK)
                return rc;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
            return refuse_non_option(argv, i, args);
        if ((rc = read_option(argc, argv, &i, args)) != EXIT_OK)
            return rc;
    }
    return EXIT_OK;
}

int cli_size(const cli_args *args, option_id id, size_t min, size_t max, size_t *out)
{
    if (!args->given[id])
        return EXIT_OK;
    vp_error err;
    if (vp_parse_size(args->value[id], min, max, out, &err) != VP_OK)
        return cli_usage_error("%s: %s", cli_option_name(id), err.message);
    return EXIT_OK;
}

int cli_double(const cli_args *args, option_id id, double min, int min_exclusive, double *out)
{
    if (!args->given[id])
        return EXIT_OK;
    vp_error err;
    double value;
    if (vp_parse_double(args->value[id], &value, &err) != VP_OK)
        return cli_usage_error("%s: %s; it must be a finite number %s %g", cli_option_name(id),
                               err.message, min_exclusive ? ">" : ">=", min);
    if (min_exclusive ? !(value > min) : !(value >= min))
        return cli_usage_error("%s: '%s' is out of range; it must be a finite number %s %g",
                               cli_option_name(id), args->value[id],
                               min_exclusive ? ">" : ">=", min);
    *out = value == 0.0 ? 0.0 : value; /* -0 reads as 0, not "-0" */
    return EXIT_OK;
}

int cli_choice(const cli_args *args, option_id id, const char *const *choices, int *out)
{
    if (!args->given[id])
        return EXIT_OK;
    for (int i = 0; choices[i]; i++) {
        if (strcmp(args->value[id], choices[i]) == 0) {
            *out = i;
            return EXIT_OK;
        }
    }
    char allowed[256] = "";
    for (int i = 0; choices[i]; i++) {
        strncat(allowed, i ? ", " : "", sizeof allowed - strlen(allowed) - 1);
        strncat(allowed, choices[i], sizeof allowed - strlen(allowed) - 1);
    }
    return cli_usage_error("%s: '%s' is not one of: %s", cli_option_name(id), args->value[id],
                           allowed);
}
