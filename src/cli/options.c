/* The option table: every option's name, the commands it applies to, its help and parser. */
#include "options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "output_file.h"
#include "dash_lookalike.h"
#include "nearest_name.h"
#include "wrap_text.h"
#include "varprof/parse.h"

typedef struct {
    const char *name;    /* without the leading dashes */
    const char *metavar; /* NULL for a flag */
    unsigned commands;
    const char *help;
} option_spec;

#define BOTH (CMD_PROFILE | CMD_TABLE)

static const option_spec options[OPT_COUNT] = {
    [OPT_PLACEMENT] = {"placement", "NAME[,NAME...]|all", CMD_PROFILE,
                       "post-ln, pre-norm (pre-ln), sandwich (peri-norm), output-norm, "
                       "deepnorm, parallel, none; default pre-norm"},
    [OPT_MODEL] = {"model", "NAME", CMD_PROFILE,
                   "take placement and layers from the models table ('varprof models'); "
                   "--layers still overrides"},
    [OPT_LAYERS] = {"layers", "L[,L...]", BOTH,
                    "layers in the stack, 1 to 1000000; default 32; a list sweeps (profile)"},
    [OPT_GAIN] = {"gain", "G[,G...]", BOTH,
                  "every branch's gain g >= 0; default 1; a list sweeps (profile)"},
    [OPT_GAINS] = {"gains", "FILE", CMD_PROFILE,
                   "one gain per sub-block: a single column, or a CSV with a 'gain' column"},
    [OPT_GAMMA] = {"gamma", "G", BOTH,
                   "scale of a normalised branch output (sandwich, "
                   "output-norm), >= 0; default 1"},
    [OPT_ALPHA] = {"alpha", "A", BOTH, "DeepNorm's residual scale > 0; default (2L)^(1/4)"},
    [OPT_BETA] = {"beta", "B", BOTH, "DeepNorm's init scale >= 0; default (8L)^(-1/4)"},
    [OPT_EMBEDDING_VAR] = {"embedding-var", "V", CMD_PROFILE,
                           "the embedding's variance v_0 > 0; default 1"},
    [OPT_ENGINE] = {"engine", "closed|mc|forward[,...]|all", CMD_PROFILE,
                    "closed form, Monte Carlo, the forward pass of a random network, a list "
                    "of them, or all; compared side by side when closed is with another; "
                    "default closed"},
    [OPT_WIDTH] = {"width", "D[,D...]", CMD_PROFILE,
                   "Monte Carlo and forward: the stream's width, 1 to 1048576 (2 up with "
                   "layernorm; forward up to 65536); default 512; a list sweeps"},
    [OPT_TRIALS] = {"trials", "N", CMD_PROFILE,
                    "Monte Carlo: tokens sampled, 2 to 1000000000; default 4096"},
    [OPT_SEED] = {"seed", "S", CMD_PROFILE,
                  "Monte Carlo and forward: the seed of draws, weights and tokens, 0 to "
                  "2^64-1; default 1"},
    [OPT_THREADS] = {"threads", "T", CMD_TRAIN | CMD_PROFILE,
                     "Monte Carlo and forward: threads, 1 to 1024; default all cores; the "
                     "result is the same for any T"},
    [OPT_NORM] = {"norm", "layernorm|rmsnorm", CMD_TRAIN | CMD_PROFILE,
                  "Monte Carlo and forward: the norm; default layernorm"},
    [OPT_NORM_EPS] = {"norm-eps", "E", CMD_TRAIN | CMD_PROFILE,
                      "Monte Carlo and forward: the norms' eps, > 0 and < 1; default 1e-5"},
    [OPT_HEADS] = {"heads", "H", CMD_TRAIN | CMD_PROFILE,
                   "forward: attention heads, dividing the width; default 8"},
    [OPT_KV_HEADS] = {"kv-heads", "H", CMD_TRAIN | CMD_PROFILE,
                      "forward: key and value heads, dividing --heads: fewer is grouped-query "
                      "attention, 1 multi-query; default --heads"},
    [OPT_HEAD_DIM] = {"head-dim", "N", CMD_TRAIN | CMD_PROFILE,
                      "forward: each head's width, 1 to 65536 with --heads x N at most 65536 "
                      "(even with --positions rope); default width / heads"},
    [OPT_FFN_MULT] = {"ffn-mult", "M", CMD_PROFILE,
                      "forward: the MLP's hidden width in widths, 1 to 64; default 4"},
    [OPT_FFN_WIDTH] = {"ffn-width", "N", CMD_TRAIN | CMD_PROFILE,
                       "forward: the MLP's hidden width exactly, 1 to 262144 (11008, 14336, "
                       "...); instead of --ffn-mult"},
    [OPT_MLP] = {"mlp", "gelu|gelu-tanh|relu|swiglu|geglu|geglu-tanh", CMD_TRAIN | CMD_PROFILE,
                 "forward: the MLP's activation; swiglu, geglu and geglu-tanh (Gemma's) are "
                 "gated, down(act(gate h) * up h); default gelu (erf)"},
    [OPT_BIAS] = {"bias", "yes|no|qkv", CMD_TRAIN | CMD_PROFILE,
                  "forward: which projections carry a bias: yes, every one and the head "
                  "(GPT-2); no, none (Llama); qkv, the attention's q, k and v alone (Qwen2); "
                  "default yes"},
    [OPT_TIE_EMBEDDINGS] = {"tie-embeddings", "yes|no", CMD_TRAIN | CMD_PROFILE,
                            "forward: the head's weight is the embedding (GPT-2, Gemma), one "
                            "tensor whose gradient sums both uses; default no, or the model's"},
    [OPT_WEIGHT_STORAGE] = {"weight-storage", "drawn|stored", CMD_PROFILE,
                            "forward without --weights: drawn, each weight made by its "
                            "position right before the matmul reads it, never stored (the "
                            "memory is the activations'); stored, every matrix drawn whole "
                            "once and kept; the same bits either way; default drawn"},
    [OPT_ACTIVATIONS] = {"activations", "auto|keep|recompute", CMD_PROFILE,
                         "forward with --grad: what the backward keeps: every sub-block's "
                         "activations, or each one's input alone with the rest recomputed "
                         "before its backward (one more forward pass, the same bits); auto "
                         "keeps them unless that would not fit; default auto"},
    [OPT_VOCAB] = {"vocab", "V", CMD_PROFILE, "forward: vocabulary size; default 512"},
    [OPT_BATCH] = {"batch", "B", CMD_PROFILE, "forward: sequences in the batch; default 2"},
    [OPT_TOKENS] = {"tokens", "T", CMD_PROFILE, "forward: tokens per sequence; default 64"},
    [OPT_QK_NORM] = {"qk-norm", NULL, CMD_TRAIN | CMD_PROFILE,
                     "forward: RMSNorm over each head's queries and keys"},
    [OPT_POSITIONS] = {"positions", "none|learned|rope", CMD_TRAIN | CMD_PROFILE,
                       "forward: positional information: none, learned (GPT-2's wpe, "
                       "pos_embed.weight) or rope (rotary, Hugging Face Llama's rotate-half "
                       "pairing); default none, learned when --weights has pos_embed.weight"},
    [OPT_ROPE_THETA] = {"rope-theta", "T", CMD_TRAIN | CMD_PROFILE,
                        "forward with --positions rope: the rotary base theta > 0; default "
                        "10000"},
    [OPT_BLOCK] = {"block", "attn-mlp|mlp", CMD_PROFILE,
                   "a layer is attention then MLP, or the MLP alone (one sub-block); "
                   "default attn-mlp"},
    [OPT_GRAD] = {"grad", NULL, BOTH,
                  "also the backward half: the gradient's size and each branch's weight "
                  "gradient, in every engine"},
    [OPT_FINAL_NORM] = {"final-norm", "yes|no", BOTH,
                        "with --grad: a norm between the last sub-block and the head; default "
                        "the placement's (yes for pre-norm, sandwich, output-norm, parallel)"},
    [OPT_WEIGHTS] = {"weights", "FILE|DIR", CMD_TRAIN | CMD_PROFILE,
                     "forward: load every weight from a safetensors file (PyTorch's names; "
                     "see the manual); width, vocab, layers, MLP width, norm and QK-norm "
                     "follow from it; or a Hugging Face checkpoint directory (gpt2, llama, "
                     "mistral, qwen2, gemma2, olmo2), its config.json giving the rest"},
    [OPT_TOKEN_IDS] = {"token-ids", "FILE", CMD_PROFILE,
                       "forward: the batch's token ids, a CSV of B rows of T ids"},
    [OPT_LOSS] = {"loss", "copy|next|random", CMD_PROFILE,
                  "forward with --grad: the loss differentiated: the head's cross-entropy "
                  "against token t (copy) or t + 1 (next), or <r_t, y_t> with r_t Gaussian "
                  "(random, no head needed); default copy"},
    [OPT_GRADS_OUT] = {"grads-out", "FILE", CMD_PROFILE,
                       "forward with --grad: write each parameter's gradient as a CSV row "
                       "name,shape,frobenius,rms; never replaces a file without --force"},
    [OPT_NAMES] = {"names", "checkpoint|varprof", CMD_PROFILE,
                   "with --grads-out and a checkpoint directory: name the rows as the "
                   "checkpoint does, a fused tensor as one row (checkpoint), or by varprof's "
                   "own tensors; default checkpoint"},
    [OPT_INIT] = {"init", "gain|torch", CMD_PROFILE,
                  "forward: weights scaled to --gain, or PyTorch's default init; default gain"},
    [OPT_METHOD] = {"method", "full|reduced", CMD_PROFILE,
                    "Monte Carlo: every coordinate, or the few the recursion uses plus a "
                    "chi-square (exact in distribution); default reduced, full with --grad"},
    [OPT_FORMAT] = {"format", "text|csv|json|markdown|latex", CMD_PROFILE | CMD_TABLE | CMD_MODELS,
                    "output format; default text, or as --output's .csv, .json, .md or .tex "
                    "says"},
    [OPT_COLUMNS] = {"columns", "NAME[,NAME...]|all", CMD_MODELS,
                     "the columns of --format csv, json, markdown or latex, by their CSV "
                     "names; default: name, year, layers, placement, norm, qk_norm and "
                     "parameters on a page (markdown, latex), all in csv and json"},
    [OPT_OUTPUT] = {"output", "FILE", CMD_TRAIN | CMD_PROFILE,
                    "write to FILE instead of standard output; never replaces a file "
                    "without --force"},
    [OPT_FORCE] = {"force", NULL, CMD_TRAIN | CMD_PROFILE,
                   "let --output, --plot, --plot-script, --grads-out, --layer-stats and --save "
                   "replace an existing file"},
    [OPT_EVERY] = {"every", "N", CMD_PROFILE,
                   "show every Nth sub-block (the first and last always); default 1"},
    [OPT_PLOT] = {"plot", "FILE|-", CMD_TRAIN | CMD_PROFILE,
                  "draw the profile (train: the loss curves) with gnuplot: FILE.png, .svg or "
                  ".pdf, or - for the terminal"},
    [OPT_PLOT_SCRIPT] = {"plot-script", "FILE", CMD_TRAIN | CMD_PROFILE,
                         "with --plot, also write the gnuplot script, data inline, to rerun or "
                         "restyle"},
    [OPT_QUANTITY] = {"quantity", "all|stream|update|share|grad|weight-grad", CMD_PROFILE,
                      "what --plot draws; default all (three panels); grad and weight-grad "
                      "with --grad"},
    [OPT_SIZE] = {"size", "W,H", CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
                  "the figure's size: inches for .pdf and .svg (1 to 50), pixels for .png "
                  "(100 to 10000, at 200 dpi); default 5.5,3.4 in (7 in high for three panels)"},
    [OPT_FONT_SIZE] = {"font-size", "PT", CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
                       "the figures' text in points at that size, 5 to 48; default 9"},
    [OPT_X_AXIS] = {"x", "layer|sub-block", CMD_PROFILE,
                    "what --plot's x axis counts; default layer, so that parallel (one "
                    "sub-block a layer) lines up with the others at equal depth"},
    [OPT_NO_TITLE] = {"no-title", NULL, CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
                      "draw the figures without their titles, for a caption to carry them"},
    [OPT_FIGURE_SCRIPTS] = {"plot-script", "DIR", CMD_FIGURES,
                            "also write each figure's gnuplot script, data inline, as DIR/NAME.gp"},
    [OPT_OUTDIR] = {"outdir", "DIR", CMD_FIGURES, "where the figures go; default plots"},
    [OPT_FIGURE_FORMAT] = {"format", "svg|png|pdf", CMD_FIGURES,
                           "the figures' format; default svg"},
    [OPT_EXPLAIN] = {"explain", NULL, CMD_TABLE,
                     "walk the recursion step by step, with the arithmetic written out"},
    [OPT_PROGRESS] = {"progress", NULL, CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
                      "show the progress line on standard error even when it is not a "
                      "terminal"},
    [OPT_QUIET] = {"quiet", NULL, CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
                   "no progress line, even on a terminal"},
    [OPT_WIDE] = {"wide", NULL, CMD_TRAIN | BOTH | CMD_MODELS | CMD_FIGURES,
                  "text in its full width, lines beyond 80 columns; default: fit 80 columns"},
    [OPT_TRAIN_PLACEMENT] = {"placement", "NAME[,NAME...]", CMD_TRAIN,
                             "the placements to train, a list sweeps; default pre-norm,post-ln "
                             "(the seed's two)"},
    [OPT_TRAIN_LAYERS] = {"layers", "L[,L...]", CMD_TRAIN,
                          "layers, 1 to 1000; default 24; a list sweeps"},
    [OPT_TRAIN_WIDTH] = {"width", "D", CMD_TRAIN, "the stream's width; default 48"},
    [OPT_TRAIN_VOCAB] = {"vocab", "V", CMD_TRAIN, "vocabulary size; default 24"},
    [OPT_TRAIN_FFN_MULT] = {"ffn-mult", "M", CMD_TRAIN,
                            "the MLP's hidden width in widths, 1 to 64; default 2"},
    [OPT_TRAIN_BATCH] = {"batch", "B", CMD_TRAIN, "sequences per step; default 16"},
    [OPT_TRAIN_TOKENS] = {"tokens", "T", CMD_TRAIN, "tokens per sequence; default 12"},
    [OPT_TRAIN_BLOCK] = {"block", "mlp|attn-mlp", CMD_TRAIN,
                         "a layer is the MLP alone, or attention then MLP; default mlp"},
    [OPT_TRAIN_INIT] = {"init", "torch|gain", CMD_TRAIN,
                        "PyTorch's default init, or weights scaled to gain 1; default torch"},
    [OPT_TRAIN_SEED] = {"seed", "S[,S...]", CMD_TRAIN,
                        "the seed of the weights and the tokens, 0 to 2^64-1; default 1; a "
                        "list sweeps"},
    [OPT_TRAIN_FINAL_NORM] = {"final-norm", "yes|no", CMD_TRAIN,
                              "a norm between the last layer and the head; default no (the "
                              "seed's)"},
    [OPT_TRAIN_EVERY] = {"every", "N", CMD_TRAIN,
                         "text: the loss every N steps (and the last); default 100"},
    [OPT_TRAIN_FORMAT] = {"format", "text|csv|json", CMD_TRAIN,
                          "output format; default text, or as --output's .csv or .json says"},
    [OPT_TASK] = {"task", "copy|next", CMD_TRAIN,
                  "predict token t (copy, the seed's) or t + 1 of a fixed random successor "
                  "chain (next); default copy"},
    [OPT_LR] = {"lr", "R[,R...]", CMD_TRAIN,
                "Adam's learning rate, > 0; default 1e-3; a list sweeps"},
    [OPT_WARMUP] = {"warmup", "N[,N...]", CMD_TRAIN,
                    "linear warm-up: lr x min(1, (t+1)/N) at step t, 0 to --steps; default 0 "
                    "(none); a list sweeps"},
    [OPT_STEPS] = {"steps", "N", CMD_TRAIN, "optimiser steps, 1 to 10000000; default 301"},
    [OPT_SCHEDULE] = {"schedule", "constant|cosine", CMD_TRAIN,
                      "after warm-up: constant, or times (1 + cos(pi t / steps)) / 2; default "
                      "constant"},
    [OPT_CLIP_NORM] = {"clip-norm", "C", CMD_TRAIN,
                       "clip the global gradient norm to C > 0, as clip_grad_norm_; default "
                       "none"},
    [OPT_WEIGHT_DECAY] = {"weight-decay", "W", CMD_TRAIN,
                          "AdamW's decoupled decay, p <- p (1 - lr W), >= 0; default 0 (Adam)"},
    [OPT_TOKEN_STREAM] = {"token-stream", "FILE", CMD_TRAIN,
                          "replay a token stream: a CSV of steps x batch rows of T ids, "
                          "step-major, instead of drawing them"},
    [OPT_LAYER_STATS] = {"layer-stats", "FILE", CMD_TRAIN,
                         "also write per step and tensor its gradient norm, weight norm and "
                         "update ratio as CSV; never replaces a file without --force"},
    [OPT_SAVE] = {"save", "FILE", CMD_TRAIN,
                  "write the trained weights as safetensors (the names --weights reads), "
                  "for one run; never replaces a file without --force"},
    [OPT_TRAINING] = {"training", NULL, CMD_FIGURES,
                      "instead, the seed's training claims: train-warmup, train-depth, "
                      "train-lr and train-layers, from runs of its experiment (about a minute "
                      "on two cores)"},
    [OPT_HELP] = {"help", NULL, CMD_TRAIN | BOTH | CMD_MODELS | CMD_FIGURES,
                  "-h: print this help and exit; after a command, that command's alone"},
    [OPT_VERSION] = {"version", NULL, CMD_TRAIN | BOTH | CMD_MODELS | CMD_FIGURES,
                     "-V: print the version and exit"},
};

static const struct {
    const char *name;
    unsigned command;
} commands[] = {
    {"profile", CMD_PROFILE}, {"table", CMD_TABLE}, {"models", CMD_MODELS},
    {"figures", CMD_FIGURES}, {"train", CMD_TRAIN},
};

const char *cli_option_name(option_id id)
{
    static char names[OPT_COUNT][32];
    if (!names[id][0])
        snprintf(names[id], sizeof names[id], "--%s", options[id].name);
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
        if (strlen(options[i].name) != length || strncmp(options[i].name, name, length) != 0)
            continue;
        if (options[i].commands & command)
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
        if (options[i].commands & command)
            names[n++] = options[i].name;
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
        if (arg[0] == '-' && arg[1] != '-' && arg[1] != '\0') { /* -x, -layers: one dash */
            const char *near = nearest_option(arg + 1, strlen(arg + 1), args->command);
            return cli_usage_error("unknown option '%s'; options start with '--' (-h and -V "
                                   "aside)%s%s%s",
                                   arg, near ? "; did you mean --" : "", near ? near : "",
                                   near ? "?" : "");
        }
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            const char *before = i > 1 ? argv[i - 1] : "";
            if (*before && before[strlen(before) - 1] == ',')
                return cli_usage_error("unexpected argument '%s' after '%s': a list takes no "
                                       "spaces; write %s%s",
                                       arg, before, before, arg);
            return cli_usage_error("unexpected argument '%s'; options start with '--'", arg);
        }
        const char *name = arg + 2;
        const char *equals = strchr(name, '=');
        size_t length = equals ? (size_t)(equals - name) : strlen(name);
        int id = find_option(name, length, args->command);
        if (id < 0) {
            const char *near = nearest_option(name, length, args->command);
            if (near)
                return cli_usage_error("unknown option '--%.*s'; did you mean --%s?", (int)length,
                                       name, near);
            return cli_usage_error("unknown option '--%.*s'", (int)length, name);
        }
        const option_spec *spec = &options[id];
        if (!(spec->commands & args->command))
            return cli_usage_error("--%s does not apply to 'varprof %s'", spec->name,
                                   command_name(args->command));
        const char *value = NULL;
        if (spec->metavar) {
            if (equals)
                value = equals + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return cli_usage_error("--%s needs a value: %s", spec->name, spec->metavar);
            if ((rc = check_value_text(spec, value)) != EXIT_OK)
                return rc;
        } else if (equals) {
            return cli_usage_error("--%s takes no value, but was given '%s'", spec->name,
                                   equals + 1);
        }
        args->value[id] = value;
        args->given[id] = 1;
    }
    return EXIT_OK;
}

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

static void print_options(unsigned command, int wide)
{
    for (int i = 0; i < OPT_COUNT; i++) {
        const option_spec *spec = &options[i];
        if (!(spec->commands & command))
            continue;
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", spec->name, spec->metavar ? " " : "",
                 spec->metavar ? spec->metavar : "");
        if (strlen(left) > 26)
            printf("  %s\n  %-26s  ", left, "");
        else
            printf("  %-26s  ", left);
        print_wrapped(help_for(spec, command), HELP_INDENT, HELP_INDENT, wide);
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
