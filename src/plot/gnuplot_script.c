/* A figure as a complete gnuplot script: terminal, output, data inline as
 * datablocks, style, one plot per panel in a multiplot. */
#include "varprof/plot.h"

#include <math.h>
#include <string.h>

#include "varprof/version.h"
#include "plot/plot_internal.h"

static int is_log_x(const vp_panel *panel)
{
    return (panel->flags & VP_AXIS_LOG_X) != 0;
}
static int is_log_y(const vp_panel *panel)
{
    return (panel->flags & VP_AXIS_LOG_Y) != 0;
}

static int is_heatmap_panel(const vp_panel *panel)
{
    for (size_t i = 0; i < panel->n_series; i++)
        if (panel->series[i].style == VP_SERIES_HEATMAP)
            return 1;
    return 0;
}

/* Every check before a byte is written, so a refused figure writes nothing. */
vp_status plot_figure_check(const vp_figure *figure, const char *output, vp_error *err)
{
    if (figure->n_panels == 0 || figure->n_panels > VP_PLOT_MAX_PANELS)
        return vp_fail(err, VP_EINVAL, "a figure needs 1 to %d panels, not %zu", VP_PLOT_MAX_PANELS,
                       figure->n_panels);
    vp_status status = vp_plot_check_text(output, "the plot file name", err);
    if (status == VP_OK)
        status = vp_plot_check_text(figure->title, "the figure's title", err);
    for (size_t p = 0; p < figure->n_panels && status == VP_OK; p++) {
        const vp_panel *panel = &figure->panels[p];
        status = vp_plot_check_text(panel->title, "a panel's title", err);
        if (status == VP_OK)
            status = vp_plot_check_text(panel->x_label, "an x axis label", err);
        if (status == VP_OK)
            status = vp_plot_check_text(panel->y_label, "a y axis label", err);
        size_t drawn = 0;
        for (size_t i = 0; i < panel->n_series && status == VP_OK; i++) {
            status = vp_plot_check_text(panel->series[i].label, "a legend label", err);
            drawn += plot_drawable_points(panel, &panel->series[i]);
        }
        for (size_t i = 0; i < panel->n_markers && status == VP_OK; i++)
            status = vp_plot_check_text(panel->markers[i].label, "a marker's label", err);
        (void)drawn; /* an empty panel is drawn with a note (write_plot) */
    }
    return status;
}

/* gnuplot's cairo terminals take a font's size at 96 dpi and pdfcairo halves
 * it again (its fontscale 0.5): the fontscales below make a point a point at
 * the figure's size, 5.5 in wide in print by default. */
static void write_terminal(FILE *out, vp_plot_format format, const vp_figure *figure,
                           const vp_plot_target *size)
{
    const size_t n_panels = figure->n_panels;
    double width, height, font;
    plot_figure_size(format, n_panels, size, &width, &height, &font);
    switch (format) {
    case VP_PLOT_PNG:
        fprintf(out,
                "set terminal pngcairo size %.0f,%.0f font 'sans,%g' fontscale %.6g "
                "linewidth %.6g pointscale %.6g enhanced background '#ffffff'\n",
                width, height, font, VP_PLOT_PNG_DPI / 96.0, VP_PLOT_PNG_DPI / 96.0,
                VP_PLOT_PNG_DPI / 96.0);
        break;
    case VP_PLOT_SVG:
        // the name is an identifier only: the real <title> is set after drawing
        fprintf(out,
                "set terminal svg size %.0f,%.0f fixed name 'varprof_figure' "
                "linewidth 0.7 font 'sans-serif,%.4g' enhanced background '#ffffff'\n",
                width * PLOT_SVG_PX_PER_IN, height * PLOT_SVG_PX_PER_IN,
                font * PLOT_SVG_PX_PER_IN / 72.0);
        break;
    case VP_PLOT_PDF:
        fprintf(out,
                "set terminal pdfcairo size %gin,%gin font 'sans,%g' fontscale 0.75 "
                "enhanced\n",
                width, height, font);
        break;
    case VP_PLOT_DUMB:
        fprintf(out, "set terminal dumb size %zu,%zu noenhanced nofeed\n",
                figure->text_columns >= 20 ? figure->text_columns : (size_t)PLOT_DUMB_COLUMNS,
                PLOT_DUMB_PANEL_LINES * n_panels);
        break;
    }
}

/* gnuplot opens an output name starting with | as a pipe and expands a
 * leading ~: "./" makes either an ordinary file in the current folder. */
static vp_status write_output(FILE *out, const char *output, vp_error *err)
{
    fputs("set output ", out);
    if (output[0] == '|' || output[0] == '~') {
        fputs("'./", out);
        for (const char *p = output; *p; p++) {
            if (*p == '\'')
                putc('\'', out);
            putc(*p, out);
        }
        fputs("'\n", out);
        return VP_OK;
    }
    vp_status status = plot_write_quoted(out, output, "the plot file name", err);
    putc('\n', out);
    return status;
}

static void write_data(FILE *out, const vp_figure *figure)
{
    for (size_t p = 0; p < figure->n_panels; p++) {
        const vp_panel *panel = &figure->panels[p];
        for (size_t i = 0; i < panel->n_series; i++) {
            const vp_series *s = &panel->series[i];
            if (plot_drawable_points(panel, s) == 0)
                continue;
            fprintf(out, "$d%zu_%zu << EOD\n", p + 1, i + 1);
            fputs(s->style == VP_SERIES_BAND      ? "# x y lo hi\n"
                  : s->style == VP_SERIES_HEATMAP ? "# x y z\n"
                                                  : "# x y\n",
                  out);
            for (size_t k = 0; k < s->n; k++) {
                /* a colour map keeps its grid whole: an undrawable cell is
                   NaN, which gnuplot leaves blank */
                const int map = s->style == VP_SERIES_HEATMAP;
                if (!plot_drawable(panel, s, k) && !map)
                    continue;
                fprintf(out, "%.17g %.17g", s->x[k], s->y[k]);
                if (s->style == VP_SERIES_BAND)
                    fprintf(out, " %.17g %.17g", s->lo[k], s->hi[k]);
                if (map && plot_drawable(panel, s, k))
                    fprintf(out, " %.17g", s->z[k]);
                else if (map)
                    fputs(" NaN", out);
                putc('\n', out);
            }
            fputs("EOD\n", out);
        }
    }
}

/* An axis or marker label, enhanced text: as it is for a picture, without
 * its braces on the dumb terminal, which shows "10^{-6}" as "10^-6". */
static vp_status write_markup(FILE *out, const char *text, vp_plot_format format, const char *what,
                              vp_error *err)
{
    if (format != VP_PLOT_DUMB)
        return plot_write_quoted(out, text, what, err);
    char plain[512];
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < sizeof plain; p++)
        if (*p != '{' && *p != '}')
            plain[n++] = *p;
    plain[n] = '\0';
    return plot_write_quoted(out, plain, what, err);
}

/* The dumb terminal cannot turn text on its side and drops the y label:
 * there it joins the title, "update ratio [y: u_k]". Titles are
 * literal text; axis labels enhanced (write_markup). title is the panel's,
 * or "" where none is drawn. */
static vp_status write_labels(FILE *out, const vp_panel *panel, const char *title,
                              vp_plot_format format, size_t title_chars, vp_error *err)
{
    const int dumb = format == VP_PLOT_DUMB;
    vp_status status;
    fputs("set title ", out);
    if ((status = plot_write_title(out, title, title_chars, "a panel's title", NULL, err)) != VP_OK)
        return status;
    if (dumb && panel->y_label[0]) {
        fputs(".' [y: '.", out);
        if ((status = write_markup(out, panel->y_label, format, "a y axis label", err)) != VP_OK)
            return status;
        fputs(".']'", out);
    }
    fputs(" noenhanced\nset xlabel ", out);
    if ((status = write_markup(out, panel->x_label, format, "an x axis label", err)) != VP_OK)
        return status;
    fputs("\nset ylabel ", out);
    if ((status = write_markup(out, dumb ? "" : panel->y_label, format, "a y axis label", err)) !=
        VP_OK)
        return status;
    putc('\n', out);
    return VP_OK;
}

static void write_axes(FILE *out, const vp_panel *panel, vp_plot_format format)
{
    fputs("unset logscale\nset autoscale xfix\n", out);
    if (is_log_x(panel))
        fputs("set logscale x 10\n", out);
    if (is_log_y(panel))
        fputs("set logscale y 10\n", out);
    fputs("set format x '%g'\n", out);
    fputs(panel->x_from_zero && !is_log_x(panel) ? "set xrange [0:*]\n" : "set xrange [*:*]\n",
          out);
    double lo, hi;
    if (is_log_y(panel) && plot_log_y_range(panel, &lo, &hi)) {
        fprintf(out, "set yrange [%.17g:%.17g]\n", lo, hi);
        plot_write_log_tics(out, "y", lo, hi, format);
    } else {
        fputs("set format y '%g'\nset ytics autofreq\n", out);
        if (panel->y_max > 0.0) // at the data's precision, as the data are drawn
            fprintf(out, "set yrange [*:%.17g]\n",
                    plot_rounded(plot_y_precision(panel), panel->y_max));
        else
            fputs("set yrange [*:*]\n", out);
    }
    plot_write_x_tics(out, panel, format);
}

static vp_status write_markers(FILE *out, const vp_panel *panel, vp_plot_format format,
                               vp_error *err)
{
    fputs("unset arrow\nunset label\n", out);
    for (size_t i = 0; i < panel->n_markers; i++) {
        const vp_marker *m = &panel->markers[i];
        fprintf(out,
                "set arrow from graph 0, first %.17g to graph 1, first %.17g nohead "
                "dt 2 lw 1.5 lc rgb '#555555' front\n",
                m->y, m->y);
        fputs("set label ", out);
        vp_status status = write_markup(out, m->label, format, "a marker's label", err);
        if (status != VP_OK)
            return status;
        fprintf(out, " at graph 0.02, first %.17g offset 0,0.8 textcolor rgb '#555555' front\n",
                m->y);
    }
    return VP_OK;
}

/* A panel with nothing to draw (a gain of 0 leaves no update ratio above 0
 * for a log axis) still takes its place, saying so. */
static int panel_is_empty(const vp_panel *panel)
{
    for (size_t i = 0; i < panel->n_series; i++)
        if (plot_drawable_points(panel, &panel->series[i]) > 0)
            return 0;
    return 1;
}

/* Colour maps, then bands, so that every line is drawn over them; each
 * value at its precision (plot_precision). */
static const char *write_fills(FILE *out, size_t p, const vp_figure *figure, const vp_panel *panel,
                               vp_plot_format format, const char *sep)
{
    const plot_precision y = plot_y_precision(panel), z = plot_z_precision(figure);
    for (size_t i = 0; i < panel->n_series; i++) {
        const vp_series *s = &panel->series[i];
        if (s->style != VP_SERIES_HEATMAP || plot_drawable_points(panel, s) == 0)
            continue;
        fprintf(out, "%s$d%zu_%zu using 1:2:", sep, p + 1, i + 1);
        plot_write_rounded_column(out, z, 3);
        fputs(" with image notitle", out);
        sep = ", \\\n     ";
    }
    for (size_t i = 0; i < panel->n_series && format != VP_PLOT_DUMB; i++) {
        const vp_series *s = &panel->series[i];
        if (s->style != VP_SERIES_BAND || plot_drawable_points(panel, s) == 0)
            continue;
        fprintf(out, "%s$d%zu_%zu using 1:", sep, p + 1, i + 1);
        plot_write_rounded_column(out, y, 3);
        putc(':', out);
        plot_write_rounded_column(out, y, 4);
        fprintf(out, " with filledcurves lc rgb '%s' notitle", vp_plot_colour(s->colour));
        sep = ", \\\n     ";
    }
    return sep;
}

/* Series i's line, its markers and its legend entry. Each placement has a
 * marker of its own, every eighth of the curve (every point of a short
 * one), staggered by placement and engine so that curves which meet show
 * their markers side by side; series that lie on one another point for
 * point (plot_series_overlap) take turns, every one of their points marked
 * by one of them, and the legend says which lies on which. */
static vp_status write_line(FILE *out, size_t p, const vp_figure *figure, size_t i,
                            vp_plot_format format, const char *sep, vp_error *err)
{
    const vp_panel *panel = &figure->panels[p];
    const vp_series *s = &panel->series[i];
    const size_t n = plot_drawable_points(panel, s);
    const plot_overlap overlap = plot_series_overlap(panel, i);
    size_t every = n >= 16 ? n / 8 : 1;
    /* by placement, and by dash (engine) within it: the Monte Carlo's line
       lies under the closed form's, its markers beside them */
    size_t first =
        (every * (size_t)s->colour / VP_PLOT_COLOURS + every * (size_t)(s->dash - 1) / 3) % every;
    if (overlap.size > 1) {
        every = every > overlap.size ? every : overlap.size;
        first = every * overlap.rank / overlap.size;
    }
    const int point = plot_point_type(s->colour);
    const char *colour = vp_plot_colour(s->colour);
    fprintf(out, "%s$d%zu_%zu using 1:", sep, p + 1, i + 1);
    plot_write_rounded_column(out, plot_y_precision(panel), 2);
    if (format == VP_PLOT_DUMB) // no colours: the curve's characters and marker make its legend
        fprintf(out, " with linespoints pt %d pi %zu title ", point, every);
    else {
        fprintf(out, " with lines lw 2 dt %d lc rgb '%s' notitle", s->dash, colour);
        fprintf(out, ", \\\n     $d%zu_%zu using 1:", p + 1, i + 1);
        plot_write_rounded_column(out, plot_y_precision(panel), 2);
        fprintf(out, " every %zu::%zu with points pt %d ps 0.7 lc rgb '%s' notitle", every, first,
                point, colour);
        fprintf(out,
                ", \\\n     keyentry with linespoints lw 2 dt %d pt %d ps 0.7 lc rgb '%s' title ",
                s->dash, point, colour);
    }
    char label[512];
    plot_legend_label(figure, panel, i, label, sizeof label);
    vp_status status = plot_write_quoted(out, label, "a legend label", err);
    fputs(" noenhanced", out);
    return status;
}

static vp_status write_plot(FILE *out, size_t p, const vp_figure *figure, vp_plot_format format,
                            vp_error *err)
{
    const vp_panel *panel = &figure->panels[p];
    if (panel_is_empty(panel)) {
        fputs("set xrange [0:1]\nset yrange [1:10]\n"
              "set label 'nothing to draw here: no value is above 0' at graph 0.5, 0.5 center\n"
              "plot NaN notitle\nset autoscale x\n",
              out);
        return VP_OK;
    }
    if (format == VP_PLOT_DUMB && is_heatmap_panel(panel)) {
        fputs("set label 'a colour map: draw it as svg, png or pdf' at graph 0.5, 0.5 center\n"
              "plot NaN notitle\n",
              out);
        return VP_OK;
    }
    const char *sep = write_fills(out, p, figure, panel, format, "plot ");
    vp_status status = VP_OK;
    for (size_t i = 0; i < panel->n_series && status == VP_OK; i++) {
        const vp_series *s = &panel->series[i];
        if (plot_drawable_points(panel, s) == 0 || s->style == VP_SERIES_HEATMAP)
            continue;
        status = write_line(out, p, figure, i, format, sep, err);
        sep = ", \\\n     ";
    }
    putc('\n', out);
    return status;
}

/* Panel p: its labels, axes, colour scale, markers, key and plot. title is
 * the panel's, or "" where none is drawn; key_at where a stacked figure's
 * key is centred. */
static vp_status write_panel(FILE *out, const vp_figure *figure, size_t p, const char *title,
                             vp_plot_format format, size_t title_chars, double key_at,
                             vp_error *err)
{
    const vp_panel *panel = &figure->panels[p];
    fprintf(out, "\n# panel %zu\n", p + 1);
    vp_status status = write_labels(out, panel, title, format, title_chars, err);
    if (status != VP_OK)
        return status;
    write_axes(out, panel, format);
    if (is_heatmap_panel(panel) && format != VP_PLOT_DUMB)
        status = plot_write_colour_scale(out, figure, panel, err);
    else if (plot_has_heatmap(figure))
        fputs("unset colorbox\nset style fill transparent solid 0.2 noborder\n", out);
    if (status != VP_OK || (status = write_markers(out, panel, format, err)) != VP_OK)
        return status;
    if (!panel->show_key)
        fputs("set key off\n", out);
    else if (figure->n_panels == 1)
        fputs("set key on\n", out);
    else // above the panels, where the sample has room to show a dash (Monte Carlo's)
        fprintf(out,
                "set key on at screen 0.5, screen %.4f center center vertical Left "
                "reverse maxrows %zu samplen 4\n",
                key_at, (panel->n_series + 1) / 2);
    return write_plot(out, p, figure, format, err);
}

static void write_style(FILE *out, const vp_figure *figure, vp_plot_format format)
{
    fputs("\n# the house style\n"
          "set border 3 lw 1 lc rgb '#444444'\n"
          "set tics nomirror out\n"
          "set style fill transparent solid 0.2 noborder\n"
          "set key outside right top vertical Left reverse samplen 2.5 spacing 1.15\n",
          out);
    fprintf(out, "set lmargin %d\n", plot_left_margin(figure));
    // one panel has its key beside it; stacked panels share one, above them (write_layout)
    if (figure->n_panels == 1)
        fprintf(out, "set rmargin %d\n", plot_right_margin(figure));
    // dots all over a text plot hide the curves: a grid only in pictures
    if (format != VP_PLOT_DUMB)
        fputs("set grid xtics ytics back lt 1 lw 1 lc rgb '#e3e3e3'\n", out);
    plot_write_rounding(out);
}

/* With size->no_title neither the figure's title nor a single panel's, which
 * is the figure's, is drawn: a book's caption carries it. Stacked panels
 * keep their names ("update ratio"). */
vp_status plot_write_script_as(FILE *out, const vp_figure *figure, vp_plot_format format,
                               const char *output, const vp_plot_target *size, vp_error *err)
{
    vp_status status = plot_figure_check(figure, output, err);
    if (status == VP_OK && size)
        status = vp_plot_check_size(format, size->width, size->height, size->font_size, err);
    if (status != VP_OK)
        return status;
    const int no_title = size && size->no_title;
    fprintf(out,
            "# A varprof figure (libvarprof %s), complete with its data.\n"
            "# Redraw it with: gnuplot THIS_FILE\n",
            VP_VERSION);
    fputs("set encoding utf8\n", out);
    write_terminal(out, format, figure, size);
    if (output && (status = write_output(out, output, err)) != VP_OK)
        return status;
    write_data(out, figure);
    write_style(out, figure, format);
    const size_t title_chars = plot_title_width(format, figure, size);
    size_t title_lines = 0;
    double key_at = 0.0;
    fprintf(out, "set multiplot layout %zu,1", figure->n_panels);
    if (figure->title[0] && !no_title) {
        fputs(" title ", out);
        if ((status = plot_write_title(out, figure->title, title_chars, "the figure's title",
                                       &title_lines, err)) != VP_OK)
            return status;
        fputs(" noenhanced", out);
    }
    if (figure->n_panels > 1)
        plot_write_layout(out, figure, format, size, title_lines, &key_at);
    putc('\n', out);
    for (size_t p = 0; p < figure->n_panels && status == VP_OK; p++) {
        const char *title = no_title && figure->n_panels == 1 ? "" : figure->panels[p].title;
        status = write_panel(out, figure, p, title, format, title_chars, key_at, err);
    }
    if (status != VP_OK)
        return status;
    fputs("unset multiplot\nunset output\n", out);
    return ferror(out) ? vp_fail(err, VP_EIO, "cannot write the gnuplot script") : VP_OK;
}

vp_status vp_plot_write_script(FILE *out, const vp_figure *figure, const vp_plot_target *target,
                               vp_error *err)
{
    vp_plot_format format;
    vp_status status = vp_plot_format_for_path(target->path, &format, err);
    if (status != VP_OK)
        return status;
    return plot_write_script_as(out, figure, format, format == VP_PLOT_DUMB ? NULL : target->path,
                                target, err);
}
