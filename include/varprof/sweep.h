/* Sweeps: every combination of placements, gains, depths and widths, run in
 * one go, and the top of each combination's stack against the swept value.
 *
 * The program's `--gain 0.5,1,2 --layers 8,16,32 --width 64,256` and the
 * chapter's gain- and depth-sweep figures (vp_figures_write) walk the same
 * combinations in the same order and draw them with the same vp_plot_sweep.
 */
#ifndef VARPROF_SWEEP_H
#define VARPROF_SWEEP_H

#include <stddef.h>
#include <stdio.h>

#include "varprof/placement.h"
#include "varprof/plot.h"
#include "varprof/profile.h"
#include "varprof/status.h"
#include "varprof/text.h"

/* A run holds at most this many combinations: more is a sweep to split, not
 * to wait for (each combination is a whole profile, or several). */
#define VP_SWEEP_MAX_COMBINATIONS 256

/* The values swept, each list in the order given, each at least one long.
 * widths[i] == 0 stands for each engine's own width (the closed form has
 * none). */
typedef struct {
    const vp_placement *placements;
    size_t n_placements;
    const double *gains;
    size_t n_gains;
    const size_t *layers;
    size_t n_layers;
    const size_t *widths;
    size_t n_widths;
} vp_sweep;

/* One combination. */
typedef struct {
    vp_placement placement;
    double gain;
    size_t layers;
    size_t width; /* 0: none given (the closed form has none) */
} vp_sweep_point;

/* The variables a sweep may vary; an x axis shows one of them. */
typedef enum { VP_SWEEP_GAIN, VP_SWEEP_LAYERS, VP_SWEEP_WIDTH } vp_sweep_axis;

/* How many combinations the sweep makes, into *count. VP_EINVAL when a list
 * is empty or the count passes VP_SWEEP_MAX_COMBINATIONS (err says how many
 * it makes and the limit). */
vp_status vp_sweep_count(const vp_sweep *sweep, size_t *count, vp_error *err);

/* The i-th combination, i < the count: placements vary slowest, then gains,
 * then layers, then widths fastest, each in its list's order. */
vp_sweep_point vp_sweep_point_at(const vp_sweep *sweep, size_t i);

/* Whether the sweep gives the variable more than one value. */
int vp_sweep_varies(const vp_sweep *sweep, vp_sweep_axis axis);

/* The variable an x axis shows: gains if they vary, else layers, else widths
 * (a sweep that varies none of them shows gains). */
vp_sweep_axis vp_sweep_x_axis(const vp_sweep *sweep);

/* The top of one engine's stack at one combination. */
typedef struct {
    vp_sweep_point point;
    vp_profile_top top;
} vp_sweep_top;

/* Writes the text table of the tops, one line per entry in order: placement,
 * gain, layers, width (with_width only; "-" where a top has none), engine,
 * sub-blocks, stream size, last update and embedding share (VP_TEXT_WIDE, to
 * 109 columns); VP_TEXT_FIT_80 leaves out the sub-blocks and the share's
 * power of two. VP_EIO on a stream error. */
vp_status vp_sweep_write_tops(FILE *out, const vp_sweep_top *tops, size_t n, int with_width,
                              vp_text_width text_width);

/* A figure of the tops against the variable x: one panel per quantity
 * (VP_QUANTITY_ALL: stream size, last update ratio, embedding share; else the
 * one asked for), log y, a log x for the gain and the width, and one line per
 * placement and engine (and per value of any other variable the tops vary
 * in, which its label names), one point per swept value of x, in x order.
 * Tops that overflowed, or whose value is 0 (an underflowed share), are left
 * out of their line. Against the width, a top of width 0 (the closed form)
 * is drawn level at every width the others have. title NULL: what the tops
 * hold fixed makes one ("stream size at the top, 32 layers"). A line ending
 * 30 times above the median line's top cuts the y axis at the power of ten
 * above the others, and the panel's title says where it leaves. The caller
 * frees *out with vp_figure_free. VP_EINVAL for n == 0 or an unknown
 * quantity (the gradient's, VP_QUANTITY_GRAD and VP_QUANTITY_WEIGHT_GRAD,
 * which the tops do not hold, among them), axis or placement; VP_ENOMEM. */
vp_status vp_plot_sweep(const vp_sweep_top *tops, size_t n, vp_sweep_axis x,
                        vp_plot_quantity quantity, const char *title, vp_figure **out,
                        vp_error *err);

#endif
