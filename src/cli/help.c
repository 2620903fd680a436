/* varprof --help: each command's usage and options, the numbers from the library's headers. */
#include <stdio.h>
#include <string.h>

#include "option_table.h"
#include "wrap_text.h"
#include "varprof/forward.h"
#include "varprof/mc.h"
#include "varprof/placement.h"
#include "varprof/plot.h"
#include "varprof/train.h"

#define HELP_INDENT 30 /* "  --option METAVAR" in 26, two spaces each side */

/* Prints text from column `column`, wrapped to 80 columns unless wide. */
static void print_wrapped(const char *text, size_t column, size_t indent, int wide)
{
    write_wrapped(stdout, text, column, indent, wide ? 0 : TEXT_COLUMNS);
}

/* An option's help, without the engines it applies to where the command has
 * no engines: "Monte Carlo and forward:" says something to the profile,
 * where --engine chooses, and only misleads in train's help. */
static const char *help_for(const option_spec *spec, unsigned command)
{
    static const char *const scopes[] = {"Monte Carlo and forward: ", "Monte Carlo: ", "forward: "};
    if (command == CMD_PROFILE)
        return spec->help;
    for (size_t i = 0; i < sizeof scopes / sizeof *scopes; i++)
        if (strncmp(spec->help, scopes[i], strlen(scopes[i])) == 0)
            return spec->help + strlen(scopes[i]);
    return spec->help;
}

/* The numbers the help quotes, from the library's headers: "{name}" in a
   help text is the value of name. */
static const struct {
    const char *name;
    double value;
} help_numbers[] = {
    {"max_layers", VP_MAX_LAYERS},
    {"default_layers", VP_DEFAULT_LAYERS},
    {"mc_max_width", VP_MC_MAX_WIDTH},
    {"mc_default_width", VP_MC_DEFAULT_WIDTH},
    {"forward_max_width", VP_FORWARD_MAX_WIDTH},
    {"mc_max_trials", VP_MC_MAX_TRIALS},
    {"mc_default_trials", VP_MC_DEFAULT_TRIALS},
    {"max_threads", VP_MC_MAX_THREADS},
    {"default_heads", VP_FORWARD_DEFAULT_HEADS},
    {"max_ffn_mult", VP_FORWARD_MAX_FFN_MULT},
    {"max_ffn_width", VP_FORWARD_MAX_FFN_WIDTH},
    {"min_inches", VP_PLOT_MIN_INCHES},
    {"max_inches", VP_PLOT_MAX_INCHES},
    {"min_pixels", VP_PLOT_MIN_PIXELS},
    {"max_pixels", VP_PLOT_MAX_PIXELS},
    {"png_dpi", VP_PLOT_PNG_DPI},
    {"min_font_pt", VP_PLOT_MIN_FONT_PT},
    {"max_font_pt", VP_PLOT_MAX_FONT_PT},
    {"default_font_pt", VP_PLOT_DEFAULT_FONT_PT},
    {"max_steps", VP_TRAIN_MAX_STEPS},
    {"default_eps", VP_MC_DEFAULT_EPS},
    {"default_ffn_mult", VP_FORWARD_DEFAULT_FFN_MULT},
    {"default_vocab", VP_FORWARD_DEFAULT_VOCAB},
    {"default_batch", VP_FORWARD_DEFAULT_BATCH},
    {"default_tokens", VP_FORWARD_DEFAULT_TOKENS},
    {"train_max_layers", VP_TRAIN_MAX_LAYERS},
    {"train_default_layers", VP_TRAIN_SEED_LAYERS},
    {"train_default_width", VP_TRAIN_SEED_WIDTH},
    {"train_default_vocab", VP_TRAIN_SEED_VOCAB},
    {"train_default_ffn_mult", VP_TRAIN_SEED_FFN_MULT},
    {"train_default_batch", VP_TRAIN_SEED_BATCH},
    {"train_default_tokens", VP_TRAIN_SEED_TOKENS},
    {"train_default_lr", VP_TRAIN_DEFAULT_LR},
    {"train_default_steps", VP_TRAIN_DEFAULT_STEPS},
};

/* A number as the help writes it: a small one as 1e-5, never 1e-05 or
   0.00001; the others with %.10g. */
static int format_number(char *out, size_t size, double value)
{
    if (value > 0.0 && value < 0.01) {
        int exponent = 0;
        double mantissa = value;
        while (mantissa < 1.0)
            mantissa *= 10.0, exponent--;
        return snprintf(out, size, "%.10ge%d", mantissa, exponent);
    }
    return snprintf(out, size, "%.10g", value);
}

/* text with each "{name}" of help_numbers written as its number, into out
   (cut short at size). */
static void expand_numbers(const char *text, char *out, size_t size)
{
    size_t n = 0;
    while (*text && n + 1 < size) {
        const char *close = *text == '{' ? strchr(text, '}') : NULL;
        size_t i = 0;
        while (close && i < sizeof help_numbers / sizeof *help_numbers &&
               (strlen(help_numbers[i].name) != (size_t)(close - text - 1) ||
                strncmp(help_numbers[i].name, text + 1, (size_t)(close - text - 1)) != 0))
            i++;
        if (!close || i == sizeof help_numbers / sizeof *help_numbers) {
            out[n++] = *text++;
            continue;
        }
        const int w = format_number(out + n, size - n, help_numbers[i].value);
        n = w < 0 || (size_t)w >= size - n ? size - 1 : n + (size_t)w;
        text = close + 1;
    }
    out[n] = '\0';
}

static void print_options(unsigned command, int wide)
{
    for (int i = 0; i < OPT_COUNT; i++) {
        const option_spec *spec = &cli_options[i];
        if (!(spec->commands & command))
            continue;
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", spec->name, spec->metavar ? " " : "",
                 spec->metavar ? spec->metavar : "");
        if (strlen(left) > 26)
            printf("  %s\n  %-26s  ", left, "");
        else
            printf("  %-26s  ", left);
        char help[1024];
        expand_numbers(help_for(spec, command), help, sizeof help);
        print_wrapped(help, HELP_INDENT, HELP_INDENT, wide);
    }
}

/* Each command's usage line and what it does, in the help's order. */
static const struct {
    unsigned command;
    const char *usage;
    const char *summary;
} command_help[] = {
    {CMD_PROFILE, "varprof [profile] [OPTIONS]",
     "varprof [profile]: the profile of one or more placements"},
    {CMD_TABLE, "varprof table [OPTIONS]",
     "varprof table: the maths table, each formula with its value, to check by hand"},
    {CMD_MODELS, "varprof models [OPTIONS]",
     "varprof models: the models table: each model's layers, placement, norm, QK-norm and the "
     "source of each fact"},
    {CMD_FIGURES, "varprof figures [OPTIONS]",
     "varprof figures: regenerate the chapter's figure set"},
    {CMD_TRAIN, "varprof train [OPTIONS]",
     "varprof train: train the stacks as the seed does (copy task, Adam, 301 steps), every "
     "combination of the listed placements, layers, learning rates, warm-ups and seeds"},
    {CMD_MERGE, "varprof merge [OPTIONS] FILE...",
     "varprof merge: join the CSV or JSON outputs of a sweep's parts (--shard K/N), given in "
     "the order K = 1 to N, into the whole sweep's output, byte for byte"},
};

void cli_print_help(unsigned command, int wide)
{
    const size_t n = sizeof command_help / sizeof command_help[0];
    for (size_t c = 0, first = 1; c < n; c++)
        if (!command || command_help[c].command == command) {
            printf("%s %s\n", first ? "Usage:" : "      ", command_help[c].usage);
            first = 0;
        }
    if (!command)
        printf("       varprof help [COMMAND]\n"
               "\n"
               "How the residual stream of a transformer grows, sub-block by sub-block, for\n"
               "each placement of its norms: stream size, update ratio and embedding share.\n");
    for (size_t c = 0; c < n; c++) {
        if (command && command_help[c].command != command)
            continue;
        putchar('\n');
        print_wrapped(command_help[c].summary, 0, 0, wide);
        print_options(command_help[c].command, wide);
    }
    printf("\nExit status: 0 success, 1 a failure at run time, 2 a usage error.\n"
           "See varprof(1) for the formulas, the CSV columns and examples.\n");
}
