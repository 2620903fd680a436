/* The program's subcommands; each returns the process's exit code. */
#ifndef VARPROF_CLI_COMMANDS_H
#define VARPROF_CLI_COMMANDS_H

#include "options.h"
#include "varprof/config.h"
#include "varprof/forward.h"
#include "varprof/mc.h"
#include "varprof/models.h"
#include "varprof/plot.h"
#include "varprof/profile.h"
#include "varprof/sweep.h"

int run_profile(const cli_args *args);
int run_table(const cli_args *args);
int run_models(const cli_args *args);
int run_figures(const cli_args *args);
int run_train(const cli_args *args);
int run_merge(const cli_args *args);

/* Writes --plot-script if asked, runs gnuplot on the figure for --plot, and
 * frees the figure. Returns EXIT_OK or EXIT_RUNTIME after printing why. */
int plot_figure(const cli_args *args, vp_figure *figure);

/* Draws the profiles as --plot, --plot-script and --quantity say, under
 * title (NULL for none). Returns EXIT_OK or EXIT_RUNTIME after printing why. */
int plot_profiles(const cli_args *args, const vp_profile *const *profiles, size_t count,
                  const char *title);

/* Reads --width, --trials, --seed, --threads (default: the cores online),
 * --norm and --method into mc. Returns EXIT_OK or EXIT_USAGE after printing
 * the error. */
int read_sampling_options(const cli_args *args, vp_mc_options *mc);

/* The threads an engine runs on by default: the cores online, at most
 * VP_MC_MAX_THREADS. */
size_t default_threads(void);

/* Reads --width, --heads, --ffn-mult, --vocab, --batch, --tokens, --threads,
 * --norm, --norm-eps, --qk-norm, --init and --seed into fw. Returns EXIT_OK or
 * EXIT_USAGE after printing the error. */
int read_forward_options(const cli_args *args, vp_forward_options *fw);

/* Draws a sweep's tops against x as --plot, --plot-script and --quantity
 * say. Returns EXIT_OK or EXIT_RUNTIME after printing why. */
int plot_sweep_tops(const cli_args *args, const vp_sweep_top *tops, size_t count, vp_sweep_axis x);

/* Checks --plot, --plot-script, --quantity, --size, --font-size and --x
 * before any work is done. */
int check_plot_options(const cli_args *args);

/* Reads --size and --font-size for a figure of that format into target
 * (absent: left 0, the defaults); a usage error naming the option, the unit
 * and the allowed range otherwise. */
int read_plot_size(const cli_args *args, vp_plot_format format, vp_plot_target *target);

/* Reads the models table: $VARPROF_MODELS, else models.csv in ../data (a
 * build tree) or ../share/varprof (an install) beside the program. Returns
 * EXIT_OK or EXIT_RUNTIME after printing why. */
int load_models(vp_model_table *table);

/* Reads --layers (default_layers where absent), --gain, --gamma, --alpha,
 * --beta and --embedding-var into cfg (defaults where absent; alpha and beta
 * follow the layers). Returns EXIT_OK or EXIT_USAGE after printing the error. */
int read_stack_options(const cli_args *args, size_t default_layers, vp_config *cfg);

/* As read_stack_options with the layers and the gain given (one point of a
 * sweep): the rest from args, alpha and beta following these layers. */
int read_stack_at(const cli_args *args, size_t layers, double gain, vp_config *cfg);

/* Refuses --gamma, --alpha or --beta when none of the n placements has the
 * part it scales (the placement table's norm_out, residual_alpha and
 * branch_beta): an option that changes nothing is a usage error. Returns
 * EXIT_OK or EXIT_USAGE after printing which placements it applies to. */
int check_scales_apply(const cli_args *args, const vp_placement *placements, size_t n);

#endif
