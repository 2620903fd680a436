/* A figure as a complete gnuplot script: terminal, output, data inline as
 * datablocks, style, one plot per panel in a multiplot. */
#include "varprof/plot.h"

#include <math.h>
#include <string.h>

#include "varprof/version.h"
#include "plot/plot_internal.h"

/* Sizes fit for a web page: 900 px wide, 300 px a panel (400 for one alone). */
#define WIDTH_PX 900
#define PANEL_PX 300
#define SINGLE_PANEL_PX 400
#define DUMB_COLUMNS 120
#define DUMB_PANEL_LINES 30

static int is_log_x(const vp_panel *panel)
{
    return (panel->flags & VP_AXIS_LOG_X) != 0;
}
static int is_log_y(const vp_panel *panel)
{
    return (panel->flags & VP_AXIS_LOG_Y) != 0;
}

/* The smallest value a log axis draws: gnuplot fails on a range reaching
 * down into subnormals ("y range must be greater than 0 for log scale"), as a
 * thousand-layer Post-LN share does. */
#define LOG_AXIS_FLOOR 1e-300

static int on_log_axis(double v)
{
    return v >= LOG_AXIS_FLOOR;
}

/* Whether point i can be drawn: finite, and on the axis where it is log. */
static int drawable(const vp_panel *panel, const vp_series *s, size_t i)
{
    if (!isfinite(s->x[i]) || !isfinite(s->y[i]))
        return 0;
    if ((is_log_x(panel) && !on_log_axis(s->x[i])) || (is_log_y(panel) && !on_log_axis(s->y[i])))
        return 0;
    if (s->style == VP_SERIES_BAND) {
        if (!isfinite(s->lo[i]) || !isfinite(s->hi[i]))
            return 0;
        if (is_log_y(panel) && !on_log_axis(s->lo[i]))
            return 0;
    }
    return 1;
}

static size_t drawable_points(const vp_panel *panel, const vp_series *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += (size_t)drawable(panel, s, i);
    return n;
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
            drawn += drawable_points(panel, &panel->series[i]);
        }
        for (size_t i = 0; i < panel->n_markers && status == VP_OK; i++)
            status = vp_plot_check_text(panel->markers[i].label, "a marker's label", err);
        (void)drawn; /* an empty panel is drawn with a note (write_plot) */
    }
    return status;
}

static void write_terminal(FILE *out, vp_plot_format format, size_t n_panels)
{
    const size_t px = n_panels == 1 ? SINGLE_PANEL_PX : PANEL_PX * n_panels;
    switch (format) {
    case VP_PLOT_PNG:
        fprintf(out,
                "set terminal pngcairo size %d,%zu font 'sans,11' noenhanced "
                "background '#ffffff'\n",
                WIDTH_PX, px);
        break;
    case VP_PLOT_SVG:
        fprintf(out,
                "set terminal svg size %d,%zu fixed font 'sans,12' noenhanced "
                "background '#ffffff'\n",
                WIDTH_PX, px);
        break;
    case VP_PLOT_PDF:
        // 100 px to the inch, as the other formats
        fprintf(out, "set terminal pdfcairo size %gin,%gin font 'sans,10' noenhanced\n",
                WIDTH_PX / 100.0, (double)px / 100.0);
        break;
    case VP_PLOT_DUMB:
        fprintf(out, "set terminal dumb size %d,%zu noenhanced nofeed\n", DUMB_COLUMNS,
                DUMB_PANEL_LINES * n_panels);
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
            if (drawable_points(panel, s) == 0)
                continue;
            fprintf(out, "$d%zu_%zu << EOD\n", p + 1, i + 1);
            fputs(s->style == VP_SERIES_BAND ? "# x y lo hi\n" : "# x y\n", out);
            for (size_t k = 0; k < s->n; k++) {
                if (!drawable(panel, s, k))
                    continue;
                fprintf(out, "%.17g %.17g", s->x[k], s->y[k]);
                if (s->style == VP_SERIES_BAND)
                    fprintf(out, " %.17g %.17g", s->lo[k], s->hi[k]);
                putc('\n', out);
            }
            fputs("EOD\n", out);
        }
    }
}

/* The dumb terminal cannot turn text on its side and drops the y label:
 * there it joins the title, "update ratio [y: u_k (log)]". */
static vp_status write_labels(FILE *out, const vp_panel *panel, vp_plot_format format,
                              vp_error *err)
{
    const int dumb = format == VP_PLOT_DUMB;
    vp_status status;
    fputs("set title ", out);
    if ((status = plot_write_quoted(out, panel->title, "a panel's title", err)) != VP_OK)
        return status;
    if (dumb && panel->y_label[0]) {
        fputs(".' [y: '.", out);
        if ((status = plot_write_quoted(out, panel->y_label, "a y axis label", err)) != VP_OK)
            return status;
        fputs(".']'", out);
    }
    fputs("\nset xlabel ", out);
    if ((status = plot_write_quoted(out, panel->x_label, "an x axis label", err)) != VP_OK)
        return status;
    fputs("\nset ylabel ", out);
    if ((status = plot_write_quoted(out, dumb ? "" : panel->y_label, "a y axis label", err)) !=
        VP_OK)
        return status;
    putc('\n', out);
    return VP_OK;
}

static void write_axes(FILE *out, const vp_panel *panel)
{
    fputs("unset logscale\nset autoscale xfix\n", out);
    if (is_log_x(panel))
        fputs("set logscale x 10\n", out);
    if (is_log_y(panel))
        fputs("set logscale y 10\n", out);
    fputs("set format x '%g'\nset format y '%g'\n", out);
    if (panel->y_max > 0.0)
        fprintf(out, "set yrange [*:%.17g]\n", panel->y_max);
    else
        fputs("set yrange [*:*]\n", out);
    /* on a log axis gnuplot reads the step as a factor: 2 gives 0.25, 0.5, 1, 2, 4 */
    if (panel->x_tic_step > 0.0 && panel->x_tic_start > 0.0)
        fprintf(out, "set xtics %.17g, %.17g\n", panel->x_tic_start, panel->x_tic_step);
    else if (panel->x_tic_step > 0.0)
        fprintf(out, "set xtics %.17g\n", panel->x_tic_step);
    else
        fputs("set xtics autofreq\n", out);
    if (panel->x_minor_tics > 1)
        fprintf(out, "set mxtics %d\n", panel->x_minor_tics);
    else
        fputs("unset mxtics\n", out);
}

static vp_status write_markers(FILE *out, const vp_panel *panel, vp_error *err)
{
    fputs("unset arrow\nunset label\n", out);
    for (size_t i = 0; i < panel->n_markers; i++) {
        const vp_marker *m = &panel->markers[i];
        fprintf(out,
                "set arrow from graph 0, first %.17g to graph 1, first %.17g nohead "
                "dt 2 lw 1.5 lc rgb '#555555' front\n",
                m->y, m->y);
        fputs("set label ", out);
        vp_status status = plot_write_quoted(out, m->label, "a marker's label", err);
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
        if (drawable_points(panel, &panel->series[i]) > 0)
            return 0;
    return 1;
}

static vp_status write_plot(FILE *out, size_t p, const vp_panel *panel, vp_plot_format format,
                            vp_error *err)
{
    const char *sep = "plot ";
    if (panel_is_empty(panel)) {
        fputs("set xrange [0:1]\nset yrange [1:10]\n"
              "set label 'nothing to draw here: no value is above 0' at graph 0.5, 0.5 center\n"
              "plot NaN notitle\nset autoscale x\n",
              out);
        return VP_OK;
    }
    // bands first, so that every line is drawn over every band
    if (format != VP_PLOT_DUMB)
        for (size_t i = 0; i < panel->n_series; i++) {
            const vp_series *s = &panel->series[i];
            if (s->style != VP_SERIES_BAND || drawable_points(panel, s) == 0)
                continue;
            fprintf(out, "%s$d%zu_%zu using 1:3:4 with filledcurves lc rgb '%s' notitle", sep,
                    p + 1, i + 1, vp_plot_colour(s->colour));
            sep = ", \\\n     ";
        }
    for (size_t i = 0; i < panel->n_series; i++) {
        const vp_series *s = &panel->series[i];
        const size_t n = drawable_points(panel, s);
        if (n == 0)
            continue;
        /* Curves that coincide (post-ln and deepnorm at 1; pre-norm, sandwich
         * and output-norm) would hide one another: each placement also gets
         * its own marker, every eighth of the curve, staggered by placement
         * so that coinciding curves show their markers side by side. */
        const size_t every = n >= 16 ? n / 8 : 1;
        const size_t first = every * (size_t)s->colour / VP_PLOT_COLOURS;
        const int point = plot_point_type(s->colour);
        if (format == VP_PLOT_DUMB) {
            /* text has no colours: the curve's own characters and marker make its legend */
            fprintf(out, "%s$d%zu_%zu using 1:2 with linespoints pt %d pi %zu title ", sep, p + 1,
                    i + 1, point, every);
            vp_status status = plot_write_quoted(out, s->label, "a legend label", err);
            if (status != VP_OK)
                return status;
            sep = ", \\\n     ";
            continue;
        }
        fprintf(out, "%s$d%zu_%zu using 1:2 with lines lw 2 dt %d lc rgb '%s' notitle", sep, p + 1,
                i + 1, s->dash, vp_plot_colour(s->colour));
        sep = ", \\\n     ";
        fprintf(out,
                "%s$d%zu_%zu using 1:2 every %zu::%zu with points pt %d ps 0.9 "
                "lc rgb '%s' notitle",
                sep, p + 1, i + 1, every, first, point, vp_plot_colour(s->colour));
        fprintf(out, "%skeyentry with linespoints lw 2 dt %d pt %d ps 0.9 lc rgb '%s' title ", sep,
                s->dash, point, vp_plot_colour(s->colour));
        vp_status status = plot_write_quoted(out, s->label, "a legend label", err);
        if (status != VP_OK)
            return status;
    }
    putc('\n', out);
    return VP_OK;
}

vp_status plot_write_script_as(FILE *out, const vp_figure *figure, vp_plot_format format,
                               const char *output, vp_error *err)
{
    vp_status status = plot_figure_check(figure, output, err);
    if (status != VP_OK)
        return status;
    fprintf(out,
            "# A varprof figure (libvarprof %s), complete with its data.\n"
            "# Redraw it with: gnuplot THIS_FILE\n",
            VP_VERSION);
    fputs("set encoding utf8\n", out);
    write_terminal(out, format, figure->n_panels);
    if (output && (status = write_output(out, output, err)) != VP_OK)
        return status;
    write_data(out, figure);

    fputs("\n# the house style\n"
          "set border 3 lw 1 lc rgb '#444444'\n"
          "set tics nomirror out\n"
          "set style fill transparent solid 0.2 noborder\n"
          "set key outside right top vertical Left reverse samplen 3 spacing 1.2\n"
          "set lmargin 11\nset rmargin 30\n",
          out);
    // dots all over a text plot hide the curves: a grid only in pictures
    if (format != VP_PLOT_DUMB)
        fputs("set grid xtics ytics back lt 1 lw 1 lc rgb '#e3e3e3'\n", out);
    fprintf(out, "set multiplot layout %zu,1", figure->n_panels);
    if (figure->title[0]) {
        fputs(" title ", out);
        if ((status = plot_write_quoted(out, figure->title, "the figure's title", err)) != VP_OK)
            return status;
    }
    putc('\n', out);
    for (size_t p = 0; p < figure->n_panels; p++) {
        const vp_panel *panel = &figure->panels[p];
        fprintf(out, "\n# panel %zu\n", p + 1);
        if ((status = write_labels(out, panel, format, err)) != VP_OK)
            return status;
        write_axes(out, panel);
        if ((status = write_markers(out, panel, err)) != VP_OK)
            return status;
        fputs(panel->show_key ? "set key on\n" : "set key off\n", out);
        if ((status = write_plot(out, p, panel, format, err)) != VP_OK)
            return status;
    }
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
                                err);
}
