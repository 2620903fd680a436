/* The chapter's figure set, regenerated: the first six from the closed form.
 *
 *     stream-gain1   stream size, every placement, 32 layers, gain 1
 *     stream-gain2   the same at gain 2: pre-norm doubles, output-norm unmoved
 *     share          embedding share, log y, 2^-32 marked (Post-LN at 32 layers)
 *     update         update ratio, log y
 *     gain-sweep     stream size at the top of 32 layers, gain 0.25..4 (log x, log y)
 *     depth-sweep    stream size at the top, 1..128 layers at gain 1 (log y)
 *     mc-comparison  the closed form against the Monte Carlo at width 64
 *     forward-comparison  the three engines on a random network, width 256
 *     gradient       the backward half: gradient size and weight gradient (log y),
 *                    pre-norm against Post-LN, the three engines
 *
 * The two sweeps are the program's sweeps (vp_sweep, vp_plot_sweep): varprof(1),
 * SWEEPS, gives the commands that draw them.
 */
#ifndef VARPROF_FIGURES_H
#define VARPROF_FIGURES_H

#include <stddef.h>
#include <stdio.h>

#include "varprof/progress.h"
#include "varprof/status.h"

typedef struct {
    const char *name;    /* the file's name without its extension: "stream-gain1" */
    const char *caption; /* one sentence for a README */
} vp_figure_info;

/* The figures, in order; *n receives how many. Static, never NULL. */
const vp_figure_info *vp_figures_list(size_t *n);

/* How vp_figures_write_with draws the set. */
typedef struct {
    const char *outdir;          /* where the figures go */
    const char *extension;       /* "svg", "png" or "pdf" */
    int force;                   /* replace existing figures */
    double width, height;        /* as vp_plot_target's: 0 for the default size */
    double font_size;            /* points; 0 for the default */
    const char *script_dir;      /* not NULL: also write each figure's gnuplot script there as
                               NAME.gp (the folder is made if missing; older scripts are
                               replaced) */
    const vp_progress *progress; /* told of each figure made; NULL for none */
    size_t threads;              /* the training figures' runs; 0 for one */
    int no_title;                /* as vp_plot_target's: no title drawn, for a caption */
} vp_figures_options;

/* Writes every figure as outdir/NAME.EXT, extension "svg", "png" or "pdf",
 * through gnuplot (vp_plot_run). outdir is created if missing (its parent must
 * exist). An existing figure is replaced only when force is set; the figures
 * are generated files, so callers regenerating them pass 1. Stops at the first
 * failure: VP_EINVAL for an unknown extension or a bad outdir name, VP_EEXIST
 * for an existing figure without force, VP_EIO when outdir cannot be made or
 * gnuplot fails (see vp_plot_run), VP_ENOMEM. */
vp_status vp_figures_write(const char *outdir, const char *extension, int force, vp_error *err);

/* As vp_figures_write, with a size, a font size and the scripts; VP_EINVAL
 * also for a size out of range (vp_plot_check_size), VP_EIO when a script
 * cannot be written. */
vp_status vp_figures_write_with(const vp_figures_options *opts, vp_error *err);

/* Writes a Markdown list of the figures for a README, one image a line:
 * "![CAPTION](DIR/NAME.EXT)". VP_EIO when the stream reports an error. */
vp_status vp_figures_write_markdown(FILE *out, const char *dir, const char *extension,
                                    vp_error *err);

/* The seed's training claims as figures, each from varprof train's runs of
 * the seed's experiment (24 MLP layers of width 48, vocab 24, batch 16 x 12,
 * 301 steps of Adam at 1e-3, PyTorch's init drawn from seed 1, copy task):
 *
 *     train-warmup   loss curves, pre-norm and Post-LN, warm-up 0 and 100
 *     train-depth    the same at 8 and 24 layers
 *     train-lr       the same at lr 1e-3, 3e-3 and 1e-2
 *     train-layers   Post-LN's gradient norm per layer and step, without
 *                    warm-up and with 100 steps of it: what warm-up does
 *                    to which layer
 *
 * The list, in order; *n receives how many. Static, never NULL. */
const vp_figure_info *vp_training_figures_list(size_t *n);

/* Trains the runs on opts->threads and draws the training figures as
 * vp_figures_write_with draws the chapter's (about a minute on two cores).
 * Fails as it does, and as vp_train_many. */
vp_status vp_training_figures_write(const vp_figures_options *opts, vp_error *err);

#endif
