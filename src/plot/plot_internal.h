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

/* The smallest value a log axis draws: gnuplot fails on a range reaching
 * down into subnormals ("y range must be greater than 0 for log scale"), as a
 * thousand-layer Post-LN share does. */
#define PLOT_LOG_AXIS_FLOOR 1e-300

/* Whether point i of s can be drawn on panel: finite, at or above
 * PLOT_LOG_AXIS_FLOOR on a log axis (a band's lower bound too), and for a
 * colour map a cell above the floor on its log scale. */
int plot_drawable(const vp_panel *panel, const vp_series *s, size_t i);

/* How many of s's points plot_drawable draws. */
size_t plot_drawable_points(const vp_panel *panel, const vp_series *s);

/* How finely a value is drawn: to `digits` significant digits on a log
 * axis, to the nearest multiple of `step` on a linear one
 * (panel_values.c says why). */
typedef struct {
    int log;
    int digits;
    double step;
} plot_precision;

/* The precision of a panel's y values, lower and upper bounds included. */
plot_precision plot_y_precision(const vp_panel *panel);

/* The precision of the figure's colour maps, which share one log scale. */
plot_precision plot_z_precision(const vp_figure *figure);

/* v at that precision, as gnuplot draws it; v itself where not finite (or
 * not above 0 on a log axis). */
double plot_rounded(plot_precision precision, double v);

/* The figure's layout (figure_layout.c). The default size fits a book's
 * text width, 5.5 in: 3.4 in high for one panel, 7 in for three (a page's
 * height less its caption); the text plot is 120 columns, 30 lines a panel. */
#define PLOT_SVG_PX_PER_IN 96.0 /* CSS's pixel */
#define PLOT_DUMB_COLUMNS 120
#define PLOT_DUMB_PANEL_LINES 30

/* The figure's size in its format's unit (inches, PNG's pixels) and its
 * text's size in points, the target's where given. */
void plot_figure_size(vp_plot_format format, size_t n_panels, const vp_plot_target *size,
                      double *width, double *height, double *font);

/* Whether a panel of the figure is a colour map. */
int plot_has_heatmap(const vp_figure *figure);

/* The characters a title line holds. */
size_t plot_title_width(vp_plot_format format, const vp_figure *figure, const vp_plot_target *size);

/* The left margin in gnuplot's characters: room for the y tic labels and,
 * left of them, the y label. */
int plot_left_margin(const vp_figure *figure);

/* The right margin in gnuplot's characters: the widest legend entry. */
int plot_right_margin(const vp_figure *figure);

/* Writes the margins of stacked panels after `set multiplot layout`, and
 * puts in *key_at where their shared key is centred. */
void plot_write_layout(FILE *out, const vp_figure *figure, vp_plot_format format,
                       const vp_plot_target *size, size_t title_lines, double *key_at);

/* Writes a colour map's scale (colour_scale.c). VP_EINVAL for a label
 * vp_plot_check_text refuses. */
vp_status plot_write_colour_scale(FILE *out, const vp_figure *figure, const vp_panel *panel,
                                  vp_error *err);

/* Writes the gnuplot functions the plots round with (vp_sig, vp_step). */
void plot_write_rounding(FILE *out);

/* Writes "(vp_sig($COLUMN,DIGITS))" or "(vp_step($COLUMN,STEP))": column
 * as `using` draws it at that precision. */
void plot_write_rounded_column(FILE *out, plot_precision precision, int column);

/* The range a log y axis needs: every drawable value (at its precision) and
 * marker, with a twentieth of its span in decades (at least 5 %) either
 * side. 0 when there is nothing. */
int plot_log_y_range(const vp_panel *panel, double *lo, double *hi);

/* Writes the tics of a log axis ("y", "cb") from lo to hi, each labelled
 * with its own value (axis_tics.c). */
void plot_write_log_tics(FILE *out, const char *axis, double lo, double hi, vp_plot_format format);

/* The width of the widest label plot_write_log_tics writes from lo to hi,
 * in characters as gnuplot estimates it ("10^{-3}": 4). */
size_t plot_log_tics_chars(double lo, double hi);

/* Writes the x tics of a panel: its tic step, or gnuplot's choice; on a
 * swept axis (VP_AXIS_X_SWEPT) a tic at every swept value. */
void plot_write_x_tics(FILE *out, const vp_panel *panel, vp_plot_format format);

/* Where series i of a panel lies on others, point for point (within 1e-9):
 * the first of them (leader; i itself when none comes before), how many of
 * them come before i (rank) and how many there are, i included (size). */
typedef struct {
    size_t leader, rank, size;
} plot_overlap;
plot_overlap plot_series_overlap(const vp_panel *panel, size_t i);

/* The legend's text for series i of panel, a panel of figure: its label,
 * and where it lies on an earlier series, in every panel that holds both,
 * " (= THAT SERIES' LABEL)". */
void plot_legend_label(const vp_figure *figure, const vp_panel *panel, size_t i, char *buf,
                       size_t size);

/* Writes text as a title of lines of at most max_chars, broken only between
 * words of prose or after a clause's comma, semicolon or colon (title_wrap.c),
 * joined with gnuplot's "\n" between quoted pieces; *lines (may be NULL)
 * receives how many. VP_EINVAL as vp_plot_check_text. */
vp_status plot_write_title(FILE *out, const char *text, size_t max_chars, const char *what,
                           size_t *lines, vp_error *err);

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
vp_status plot_draw_named(const vp_figure *figure, const vp_figures_options *opts, const char *name,
                          vp_error *err);

#endif
