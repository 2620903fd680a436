/* What the plotting module's files share and nothing outside it calls: the
 * markers, the quoting of text for gnuplot, the check of a figure before it
 * is drawn, the script written for gnuplot's temporary file, and where
 * gnuplot is found. The public half is include/varprof/plot.h. */
#ifndef VARPROF_PLOT_INTERNAL_H
#define VARPROF_PLOT_INTERNAL_H

#include <stdio.h>

#include "varprof/figures.h"
#include "varprof/plot.h"

/* gnuplot's point type for a colour key: a marker of its own per placement,
 * so that curves which coincide stay told apart; 1 for a key out of range. */
int plot_point_type(int colour);

/* Writes text as a single-quoted gnuplot string ('it''s'), after
 * vp_plot_check_text. VP_EIO when the stream reports an error. */
vp_status plot_write_quoted(FILE *out, const char *text, const char *what, vp_error *err);

/* Checks a figure before it is drawn: 1..VP_PLOT_MAX_PANELS panels, and every
 * text, output (may be NULL) included, passing vp_plot_check_text. VP_EINVAL
 * with the first problem in err. A panel with no point that can be drawn
 * (none finite, or none >= 1e-300 on a log axis) is allowed: it is drawn
 * empty, with a note saying so. */
vp_status plot_figure_check(const vp_figure *figure, const char *output, vp_error *err);

/* As vp_plot_write_script, with the format and the path gnuplot writes to
 * given separately (output NULL: no `set output`); vp_plot_run uses it to
 * point gnuplot at its temporary file. */
vp_status plot_write_script_as(FILE *out, const vp_figure *figure, vp_plot_format format,
                               const char *output, const vp_plot_target *size, vp_error *err);

/* Gives the drawn file at path its title (the figure's, else its first
 * panel's), which gnuplot
 * cannot: an SVG's first <title> element is replaced, a PDF gets an
 * incremental update with an Info dictionary holding /Title. PNG and the
 * dumb terminal are left alone. VP_EIO when the file cannot be read or
 * written or is not what gnuplot writes. */
vp_status plot_set_document_title(const char *path, vp_plot_format format, const vp_figure *figure,
                                  vp_error *err);

/* Appends to figure a panel of one quantity (not VP_QUANTITY_ALL) drawn from
 * profiles as vp_plot_profiles draws it, below the panels already there,
 * with the quantity's title where title is NULL and the legend beside or
 * above it when show_key is set; the caller checks the profiles and the
 * quantity, as vp_plot_profiles_on does. Stacked panels share their x axis:
 * the caller clears the x label of all but the last. VP_EINVAL when the
 * figure is full, VP_ENOMEM. */
vp_status plot_profiles_panel(vp_figure *figure, const vp_profile *const *profiles, size_t n,
                              vp_plot_quantity quantity, vp_plot_x_axis x_axis, const char *title,
                              int show_key, vp_error *err);

/* The gnuplot program: $VARPROF_GNUPLOT if set and not empty, else "gnuplot". */
const char *plot_gnuplot_program(void);

/* The largest y of a series; 0 for none above 0. */
double plot_series_max(const vp_series *series);

/* Where a panel's tame curves end: *limit is far times the median of the
 * series' maxima, *tame the largest maximum at or below it (0 where none is
 * above 0), *highest the largest of all. A curve whose maximum passes *limit
 * runs away. VP_ENOMEM. */
vp_status plot_tame_top(const vp_panel *panel, double far, double *limit, double *tame,
                        double *highest, vp_error *err);

/* Replaces the string at *slot (a title or label the figure owns) with a
 * copy of text, freeing the old one. VP_ENOMEM, leaving *slot as it was. */
vp_status plot_replace_text(char **slot, const char *text, vp_error *err);

/* Draws figure as opts->outdir/NAME.opts->extension at the set's size, and
 * writes its script as opts->script_dir/NAME.gp first where asked (a partial
 * script removed). VP_EINVAL for a name too long, VP_EIO, or as vp_plot_run. */
vp_status plot_draw_named(const vp_figure *figure, const vp_figures_options *opts,
                          const char *name, vp_error *err);

#endif
