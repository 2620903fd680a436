/* Writing training runs (vp_train_many's jobs, each with its result): the
 * losses as a text table, one row per step per run as CSV or JSON. */
#ifndef VARPROF_TRAIN_OUTPUT_H
#define VARPROF_TRAIN_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "varprof/plot.h"
#include "varprof/status.h"
#include "varprof/train.h"

/* The CSV's columns: the configuration (placement, layers, base_lr,
 * warmup, seed), then the step's: step, lr, loss, grad_norm. */
#define VP_TRAIN_CSV_HEADER "placement,layers,base_lr,warmup,seed,step,lr,loss,grad_norm"

/* The text, within 80 columns: a heading of what the runs share, naming
 * the loss (cross-entropy in nats) and its chance level ln V; then a table,
 * a row per run labelled by what differs among them (the placement always;
 * numbered, with the labels listed, when they are too long) and a column
 * per step 0, every, 2 every, ... and the last, in blocks that fit, each
 * loss to three significant figures, "diverged" from where a run did, and
 * why under the table. every >= 1. VP_ENOMEM, VP_EIO when writing fails. */
vp_status vp_train_write_text(FILE *out, const vp_train_job *jobs, size_t n, size_t every);

/* The header and every run's every step; numbers %.17g, a loss that is
 * not finite as nan or inf. VP_EIO when writing fails. */
vp_status vp_train_write_csv(FILE *out, const vp_train_job *jobs, size_t n);

/* {"runs": [{configuration, "diverged_at": step or null, "steps": [{step,
 * lr, loss, grad_norm}, ...]}, ...]}; a number that is not finite as null.
 * VP_ENOMEM, VP_EIO. */
vp_status vp_train_write_json(FILE *out, const vp_train_job *jobs, size_t n);

/* The runs' figure: the loss against the step on a log axis, a line per
 * run, coloured by placement; with one axis swept besides the placement
 * (learning rate, warm-up, layers or seed), a second panel of the final
 * loss against it, a line per placement, diverged runs left out (their
 * curves' labels say where they diverged). VP_ENOMEM. */
vp_status vp_plot_training(const vp_train_job *jobs, size_t n, vp_figure **out, vp_error *err);

/* One run's gradient norm per layer and step: grad[step * layers + layer],
 * the L2 norm over every tensor named layers.LAYER.* (before clipping). */
typedef struct {
    const char *label; /* the panel's title: "Post-LN, no warm-up" */
    size_t steps, layers;
    const double *grad;
} vp_layer_grad_map;

/* The layers' gradient norms as colour maps, a panel per run (1 to
 * VP_PLOT_MAX_PANELS), step across and layer up, one log colour scale for
 * all. VP_EINVAL for no maps or too many, VP_ENOMEM. */
vp_status vp_plot_layer_grads(const vp_layer_grad_map *maps, size_t n, vp_figure **out,
                              vp_error *err);

#endif
