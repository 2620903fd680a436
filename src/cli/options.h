/* The program's options: one table that both parses the command line and
 * prints --help, in the manner of git's parse-options. */
#ifndef VARPROF_CLI_OPTIONS_H
#define VARPROF_CLI_OPTIONS_H

#include <stddef.h>

#include "varprof/status.h"

/* Exit codes of the program. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_CLOSED_PIPE = 141 };

/* The subcommands; an option lists those it applies to. */
enum {
    CMD_PROFILE = 1u << 0,
    CMD_TABLE = 1u << 1,
    CMD_MODELS = 1u << 2,
    CMD_FIGURES = 1u << 3,
    CMD_TRAIN = 1u << 4,
    CMD_MERGE = 1u << 5
};

/* The most files one merge reads. */
#define CLI_MAX_OPERANDS 4096

typedef enum {
    OPT_PLACEMENT,
    OPT_MODEL,
    OPT_LAYERS,
    OPT_GAIN,
    OPT_GAINS,
    OPT_GAMMA,
    OPT_ALPHA,
    OPT_BETA,
    OPT_EMBEDDING_VAR,
    OPT_ENGINE,
    OPT_WIDTH,
    OPT_TRIALS,
    OPT_SEED,
    OPT_THREADS,
    OPT_NORM,
    OPT_METHOD,
    OPT_NORM_EPS,
    OPT_HEADS,
    OPT_KV_HEADS,
    OPT_HEAD_DIM,
    OPT_FFN_MULT,
    OPT_FFN_WIDTH,
    OPT_MLP,
    OPT_BIAS,
    OPT_TIE_EMBEDDINGS,
    OPT_WEIGHT_STORAGE,
    OPT_ACTIVATIONS,
    OPT_VOCAB,
    OPT_BATCH,
    OPT_TOKENS,
    OPT_QK_NORM,
    OPT_POSITIONS,
    OPT_ROPE_THETA,
    OPT_ROPE_FRACTION,
    OPT_LOGIT_SCALE,
    OPT_RESIDUAL,
    OPT_EMBEDDING_NORM,
    OPT_SLIDING_WINDOW,
    OPT_WINDOW_PATTERN,
    OPT_BLOCK,
    OPT_GRAD,
    OPT_FINAL_NORM,
    OPT_INIT,
    OPT_WEIGHTS,
    OPT_TOKEN_IDS,
    OPT_LOSS,
    OPT_GRADS_OUT,
    OPT_NAMES,
    OPT_FORMAT,
    OPT_COLUMNS,
    OPT_OUTPUT,
    OPT_FORCE,
    OPT_EVERY,
    OPT_PLOT,
    OPT_PLOT_SCRIPT,
    OPT_QUANTITY,
    OPT_SIZE,
    OPT_FONT_SIZE,
    OPT_X_AXIS,
    OPT_NO_TITLE,
    OPT_FIGURE_SCRIPTS,
    OPT_OUTDIR,
    OPT_FIGURE_FORMAT,
    OPT_EXPLAIN,
    OPT_PROGRESS,
    OPT_QUIET,
    OPT_WIDE,
    OPT_SHARD,
    /* varprof train's own: its defaults are the seed's experiment */
    OPT_TRAIN_PLACEMENT,
    OPT_TRAIN_LAYERS,
    OPT_TRAIN_WIDTH,
    OPT_TRAIN_VOCAB,
    OPT_TRAIN_FFN_MULT,
    OPT_TRAIN_BATCH,
    OPT_TRAIN_TOKENS,
    OPT_TRAIN_BLOCK,
    OPT_TRAIN_INIT,
    OPT_TRAIN_SEED,
    OPT_TRAIN_FINAL_NORM,
    OPT_TRAIN_EVERY,
    OPT_TRAIN_FORMAT,
    OPT_TASK,
    OPT_LR,
    OPT_WARMUP,
    OPT_STEPS,
    OPT_SCHEDULE,
    OPT_CLIP_NORM,
    OPT_WEIGHT_DECAY,
    OPT_TOKEN_STREAM,
    OPT_LAYER_STATS,
    OPT_SAVE,
    OPT_TRAINING,
    OPT_HELP,
    OPT_VERSION,
    OPT_COUNT
} option_id;

/* What the command line said: each option's last value (NULL if absent). */
typedef struct {
    unsigned command;
    const char *command_name;
    int command_given; /* named on the command line, not profile by default */
    const char *value[OPT_COUNT];
    int given[OPT_COUNT];
    const char *operands[CLI_MAX_OPERANDS]; /* merge's files, in order */
    size_t n_operands;
} cli_args;

/* Parses argv into args. Returns EXIT_OK, or EXIT_USAGE after printing the
 * error and the hint to standard error. */
int cli_parse(int argc, char **argv, cli_args *args);

/* Prints the help to standard output: command's alone (CMD_TABLE, ...), or
 * every command's for 0; wrapped to 80 columns unless wide. */
void cli_print_help(unsigned command, int wide);

/* Prints "varprof: MESSAGE" and the hint to standard error; returns EXIT_USAGE. */
int cli_usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Prints "varprof: warning: MESSAGE" to standard error: the run goes on. */
void cli_warning(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Prints "varprof: MESSAGE" to standard error; returns EXIT_RUNTIME. A
 * failure to write (errno EPIPE) to a standard output whose reader has gone
 * is said by nobody: it returns EXIT_CLOSED_PIPE (128 + SIGPIPE, what the
 * shell shows when SIGPIPE ends a filter), quietly. */
int cli_runtime_error(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Prints a library failure, "varprof: [CONTEXT: ]MESSAGE" (context may be
 * NULL), and where an option fixes it, which: for VP_EEXIST, "; add --force
 * to replace it". The library states the fact; the program names the option.
 * Returns EXIT_RUNTIME. */
int cli_library_error(const char *context, vp_status status, const vp_error *err);

/* Strict conversions of an option's value: on failure each prints a usage
 * error naming the option, its value and what is allowed, and returns
 * EXIT_USAGE; absent options leave *out untouched. */
int cli_size(const cli_args *args, option_id id, size_t min, size_t max, size_t *out);
/* min_exclusive: whether the value must be > min rather than >= min */
int cli_double(const cli_args *args, option_id id, double min, int min_exclusive, double *out);
/* Picks one of the NULL-terminated choices; *out is its index. */
int cli_choice(const cli_args *args, option_id id, const char *const *choices, int *out);

/* "--layers" for OPT_LAYERS. */
const char *cli_option_name(option_id id);

#endif
