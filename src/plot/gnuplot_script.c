/* A figure as a complete gnuplot script: terminal, output, data inline as
 * datablocks, style, one plot per panel in a multiplot. */
#include "varprof/plot.h"

#include <math.h>
#include <string.h>

#include "varprof/version.h"
#include "plot/plot_internal.h"

/* The default size fits a book's text width, 5.5 in: 3.4 in high for one
 * panel, 7 in for three (a page's height less its caption). */
#define WIDTH_IN 5.5
#define SINGLE_PANEL_IN 3.4
#define PANEL_IN 2.4
#define SVG_PX_PER_IN 96.0 /* CSS's pixel */
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
    if (s->style == VP_SERIES_HEATMAP) /* on its log colour scale */
        return isfinite(s->z[i]) && on_log_axis(s->z[i]);
    return 1;
}

static int is_heatmap_panel(const vp_panel *panel)
{
    for (size_t i = 0; i < panel->n_series; i++)
        if (panel->series[i].style == VP_SERIES_HEATMAP)
            return 1;
    return 0;
}

static int has_heatmap(const vp_figure *figure)
{
    for (size_t p = 0; p < figure->n_panels; p++)
        if (is_heatmap_panel(&figure->panels[p]))
            return 1;
    return 0;
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

/* The figure's size in its format's unit (inches, PNG's pixels) and its
 * text's size in points, the target's where given. */
static void figure_size(vp_plot_format format, size_t n_panels, const vp_plot_target *size,
                        double *width, double *height, double *font)
{
    *width = WIDTH_IN;
    *height = n_panels == 1 ? SINGLE_PANEL_IN : 0.3 + PANEL_IN * (double)n_panels;
    if (format == VP_PLOT_PNG) {
        *width *= VP_PLOT_PNG_DPI;
        *height *= VP_PLOT_PNG_DPI;
    }
    if (size && size->width > 0.0 && size->height > 0.0) {
        *width = size->width;
        *height = size->height;
    }
    *font = size && size->font_size > 0.0 ? size->font_size : VP_PLOT_DEFAULT_FONT_PT;
}

/* gnuplot's cairo terminals take a font's size at 96 dpi and pdfcairo halves
 * it again (its fontscale 0.5): the fontscales below make a point a point at
 * the figure's size, 5.5 in wide in print by default. */
static void write_terminal(FILE *out, vp_plot_format format, const vp_figure *figure,
                           const vp_plot_target *size)
{
    const size_t n_panels = figure->n_panels;
    double width, height, font;
    figure_size(format, n_panels, size, &width, &height, &font);
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
                width * SVG_PX_PER_IN, height * SVG_PX_PER_IN, font * SVG_PX_PER_IN / 72.0);
        break;
    case VP_PLOT_PDF:
        fprintf(out,
                "set terminal pdfcairo size %gin,%gin font 'sans,%g' fontscale 0.75 "
                "enhanced\n",
                width, height, font);
        break;
    case VP_PLOT_DUMB:
        fprintf(out, "set terminal dumb size %zu,%zu noenhanced nofeed\n",
                figure->text_columns >= 20 ? figure->text_columns : (size_t)DUMB_COLUMNS,
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
            fputs(s->style == VP_SERIES_BAND      ? "# x y lo hi\n"
                  : s->style == VP_SERIES_HEATMAP ? "# x y z\n"
                                                  : "# x y\n",
                  out);
            for (size_t k = 0; k < s->n; k++) {
                /* a colour map keeps its grid whole: an undrawable cell is
                   NaN, which gnuplot leaves blank */
                const int map = s->style == VP_SERIES_HEATMAP;
                if (!drawable(panel, s, k) && !map)
                    continue;
                fprintf(out, "%.17g %.17g", s->x[k], s->y[k]);
                if (s->style == VP_SERIES_BAND)
                    fprintf(out, " %.17g %.17g", s->lo[k], s->hi[k]);
                if (map && drawable(panel, s, k))
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

/* A title as lines of at most max_chars, broken at spaces and joined with
 * gnuplot's "\n" between quoted pieces: gnuplot does not wrap a title, and
 * one wider than the figure is clipped at both ends. */
static vp_status write_title(FILE *out, const char *text, size_t max_chars, const char *what,
                             size_t *lines, vp_error *err)
{
    size_t written = 0;
    char line[512];
    const char *rest = text;
    vp_status status = VP_OK;
    for (int first = 1; status == VP_OK; first = 0) {
        size_t n = strlen(rest), cut = n, chars = 0;
        if (n >= sizeof line)
            cut = n = sizeof line - 1;
        for (size_t i = 0; i < n; i++) {
            chars += (rest[i] & 0xc0) != 0x80;
            if (chars > max_chars) {
                size_t space = i;
                while (space > 0 && rest[space] != ' ')
                    space--;
                cut = space > 0 ? space : i;
                break;
            }
        }
        memcpy(line, rest, cut);
        line[cut] = '\0';
        if (!first)
            fputs(".\"\\n\".", out);
        status = plot_write_quoted(out, line, what, err);
        written++;
        rest += cut;
        while (*rest == ' ')
            rest++;
        if (!*rest)
            break;
    }
    if (lines)
        *lines = written;
    return status;
}

/* The dumb terminal cannot turn text on its side and drops the y label:
 * there it joins the title, "update ratio [y: u_k]". Titles are
 * literal text; axis labels enhanced (write_markup). */
static vp_status write_labels(FILE *out, const vp_panel *panel, vp_plot_format format,
                              size_t title_chars, vp_error *err)
{
    const int dumb = format == VP_PLOT_DUMB;
    vp_status status;
    fputs("set title ", out);
    if ((status = write_title(out, panel->title, title_chars, "a panel's title", NULL, err)) !=
        VP_OK)
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

/* The range a log y axis needs: every drawable value and marker, with a
 * twentieth of its span in decades (at least 5 %) either side, so that it
 * ends near the data rather than at the next whole decade. 0 when there is
 * nothing. */
static int log_y_range(const vp_panel *panel, double *lo, double *hi)
{
    double min = INFINITY, max = 0.0;
    for (size_t i = 0; i < panel->n_series; i++) {
        const vp_series *s = &panel->series[i];
        for (size_t k = 0; k < s->n; k++) {
            if (!drawable(panel, s, k))
                continue;
            const double a = s->style == VP_SERIES_BAND ? s->lo[k] : s->y[k];
            const double b = s->style == VP_SERIES_BAND ? s->hi[k] : s->y[k];
            min = fmin(min, fmin(a, s->y[k]));
            max = fmax(max, fmax(b, s->y[k]));
        }
    }
    for (size_t i = 0; i < panel->n_markers; i++) {
        min = fmin(min, panel->markers[i].y);
        max = fmax(max, panel->markers[i].y);
    }
    if (panel->y_max > 0.0)
        max = fmin(max, panel->y_max);
    if (!(max > 0.0) || !isfinite(min) || min > max)
        return 0;
    const double pad = fmax(1.05, pow(max / min, 0.05));
    *lo = fmax(min / pad, LOG_AXIS_FLOOR);
    *hi = max * pad;
    return 1;
}

/* Tics on a log y axis: powers of ten (10^-6) where the values are very
 * small or large; plain numbers otherwise; and where the axis spans less
 * than two decades, which gives gnuplot one labelled tic or none, a tic at
 * each 1, 2 and 5. */
static void write_log_y_tics(FILE *out, double lo, double hi, vp_plot_format format)
{
    if (lo < 1e-3 || hi > 1e4)
        fputs(format == VP_PLOT_DUMB ? "set format y '10^%L'\n" : "set format y '10^{%L}'\n", out);
    else
        fputs("set format y '%g'\n", out);
    if (hi / lo >= 100.0) {
        fputs("set ytics autofreq\n", out);
        return;
    }
    const char *sep = "set ytics (";
    for (int exponent = (int)floor(log10(lo)); exponent <= (int)ceil(log10(hi)); exponent++)
        for (int m = 0; m < 3; m++) {
            const double decade = pow(10.0, exponent);
            const double tic = decade * (const double[]){1.0, 2.0, 5.0}[m];
            if (tic >= lo && tic <= hi) {
                fprintf(out, "%s%.6g", sep, tic);
                sep = ", ";
            }
        }
    fputs(*sep == ',' ? ")\n" : "set ytics autofreq\n", out);
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
    if (is_log_y(panel) && log_y_range(panel, &lo, &hi)) {
        fprintf(out, "set yrange [%.17g:%.17g]\n", lo, hi);
        write_log_y_tics(out, lo, hi, format);
    } else {
        fputs("set format y '%g'\nset ytics autofreq\n", out);
        if (panel->y_max > 0.0)
            fprintf(out, "set yrange [*:%.17g]\n", panel->y_max);
        else
            fputs("set yrange [*:*]\n", out);
    }
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
    if (format == VP_PLOT_DUMB && is_heatmap_panel(panel)) {
        fputs("set label 'a colour map: draw it as svg, png or pdf' at graph 0.5, 0.5 center\n"
              "plot NaN notitle\n",
              out);
        return VP_OK;
    }
    // colour maps, then bands, so that every line is drawn over them
    for (size_t i = 0; i < panel->n_series; i++) {
        const vp_series *s = &panel->series[i];
        if (s->style != VP_SERIES_HEATMAP || drawable_points(panel, s) == 0)
            continue;
        fprintf(out, "%s$d%zu_%zu using 1:2:3 with image notitle", sep, p + 1, i + 1);
        sep = ", \\\n     ";
    }
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
        if (n == 0 || s->style == VP_SERIES_HEATMAP)
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
            fputs(" noenhanced", out);
            sep = ", \\\n     ";
            continue;
        }
        fprintf(out, "%s$d%zu_%zu using 1:2 with lines lw 2 dt %d lc rgb '%s' notitle", sep, p + 1,
                i + 1, s->dash, vp_plot_colour(s->colour));
        sep = ", \\\n     ";
        fprintf(out,
                "%s$d%zu_%zu using 1:2 every %zu::%zu with points pt %d ps 0.7 "
                "lc rgb '%s' notitle",
                sep, p + 1, i + 1, every, first, point, vp_plot_colour(s->colour));
        fprintf(out, "%skeyentry with linespoints lw 2 dt %d pt %d ps 0.7 lc rgb '%s' title ", sep,
                s->dash, point, vp_plot_colour(s->colour));
        vp_status status = plot_write_quoted(out, s->label, "a legend label", err);
        if (status != VP_OK)
            return status;
        fputs(" noenhanced", out);
    }
    putc('\n', out);
    return VP_OK;
}

/* A colour map's scale: log, one range for every map of the figure (so that
 * their colours compare), a perceptually even palette from dark blue to
 * yellow (viridis's ends and midpoints), its bar beside the panel, labelled
 * with the map's label. */
static vp_status write_colour_scale(FILE *out, const vp_figure *figure, const vp_panel *panel,
                                    vp_error *err)
{
    double lo = INFINITY, hi = 0.0;
    const char *label = "";
    for (size_t p = 0; p < figure->n_panels; p++)
        for (size_t i = 0; i < figure->panels[p].n_series; i++) {
            const vp_series *s = &figure->panels[p].series[i];
            if (s->style != VP_SERIES_HEATMAP)
                continue;
            for (size_t k = 0; k < s->n; k++)
                if (drawable(&figure->panels[p], s, k)) {
                    lo = fmin(lo, s->z[k]);
                    hi = fmax(hi, s->z[k]);
                }
        }
    for (size_t i = 0; i < panel->n_series && !*label; i++)
        if (panel->series[i].style == VP_SERIES_HEATMAP)
            label = panel->series[i].label;
    if (hi > 0.0 && lo < hi)
        fprintf(out, "set cbrange [%.17g:%.17g]\n", lo, hi);
    else
        fputs("set cbrange [*:*]\n", out);
    fputs("set logscale cb 10\nset format cb '10^{%L}'\n"
          "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', "
          "4 '#fde725')\n"
          "set colorbox vertical user origin graph 1.02, graph 0 size graph 0.03, graph 1\n"
          "set style fill solid 1 noborder\n" /* the bar's colours as the map's, not faded */
          "set autoscale xfix\nset autoscale yfix\n" /* the axes end with the cells */
          "set cblabel ",
          out);
    vp_status status = plot_write_quoted(out, label, "a colour map's label", err);
    fputs(" noenhanced\n", out);
    return status;
}

/* The characters a title line holds: the width a title is centred in over a
 * character's. A character of DejaVu Sans or Liberation Sans (what
 * "sans-serif" becomes) averages 0.6 of the font's size; gnuplot centres a
 * panel's title over its plot area, which a key at the right pushes left, so
 * a line may span 0.85 of the figure without running off its left edge
 * (measured on the gain sweep at 5.5 in, rendered by rsvg-convert). */
static size_t title_width(vp_plot_format format, size_t n_panels, const vp_plot_target *size)
{
    if (format == VP_PLOT_DUMB)
        return DUMB_COLUMNS - 4;
    double width, height, font;
    figure_size(format, n_panels, size, &width, &height, &font);
    const double inches = format == VP_PLOT_PNG ? width / VP_PLOT_PNG_DPI : width;
    const double chars = 0.85 * inches * 72.0 / (0.6 * font);
    return chars > 20.0 ? (size_t)chars : 20;
}

/* Stacked panels: equal plot areas, whatever the key and titles take, with
 * the figure's title and the one key above them all. gnuplot's own layout
 * takes the key's room from the first panel alone, and a key outside a
 * panel is sized differently by each terminal; so the margins are given in
 * screen fractions, from the height of a line of text. *key_at receives the
 * key's centre. */
static void write_layout(FILE *out, const vp_figure *figure, vp_plot_format format,
                         const vp_plot_target *size, size_t title_lines, double *key_at)
{
    double width, height, font;
    figure_size(format, figure->n_panels, size, &width, &height, &font);
    double line, column; // a line's height and a character's width, as fractions
    if (format == VP_PLOT_DUMB) {
        line = 1.0 / (double)(DUMB_PANEL_LINES * figure->n_panels);
        column = 1.0 / DUMB_COLUMNS;
    } else {
        const double dpi = format == VP_PLOT_PNG ? VP_PLOT_PNG_DPI : 1.0;
        // gnuplot's svg sets its lines wider apart than cairo does
        line = (format == VP_PLOT_SVG ? 1.75 : 1.35) * font / 72.0 / (height / dpi);
        column = 0.55 * font / 72.0 / (width / dpi);
    }
    size_t keyed = 0;
    for (size_t p = 0; p < figure->n_panels; p++)
        if (figure->panels[p].show_key)
            keyed = keyed > figure->panels[p].n_series ? keyed : figure->panels[p].n_series;
    const double key_rows = ceil((double)keyed / 2.0); // two columns
    const double top = 1.0 - line * ((double)title_lines + key_rows + 2.8);
    *key_at = 1.0 - line * ((double)title_lines + key_rows / 2.0 + 0.6);
    /* a colour map's bar and its label need ten columns more at the right */
    const double right = has_heatmap(figure) ? 13.0 : 3.0;
    fprintf(out, " margins %.4f, %.4f, %.4f, %.4f spacing 0, %.4f", 12.0 * column,
            1.0 - right * column, 3.6 * line, top, 4.4 * line);
}

/* The right margin, in characters, that holds the widest legend label beside
 * a panel with its sample line and marker; the same for every panel so that
 * their x axes line up. */
static int right_margin(const vp_figure *figure)
{
    size_t widest = 0;
    int any_key = 0;
    for (size_t p = 0; p < figure->n_panels; p++) {
        const vp_panel *panel = &figure->panels[p];
        if (!panel->show_key)
            continue;
        for (size_t i = 0; i < panel->n_series; i++) {
            size_t chars = 0; // UTF-8 code points, not bytes
            for (const char *c = panel->series[i].label; *c; c++)
                chars += (*c & 0xc0) != 0x80;
            widest = chars > widest ? chars : widest;
            any_key = 1;
        }
    }
    return any_key ? (int)widest + 7 : 3;
}

vp_status plot_write_script_as(FILE *out, const vp_figure *figure, vp_plot_format format,
                               const char *output, const vp_plot_target *size, vp_error *err)
{
    vp_status status = plot_figure_check(figure, output, err);
    if (status == VP_OK && size)
        status = vp_plot_check_size(format, size->width, size->height, size->font_size, err);
    if (status != VP_OK)
        return status;
    fprintf(out,
            "# A varprof figure (libvarprof %s), complete with its data.\n"
            "# Redraw it with: gnuplot THIS_FILE\n",
            VP_VERSION);
    fputs("set encoding utf8\n", out);
    write_terminal(out, format, figure, size);
    if (output && (status = write_output(out, output, err)) != VP_OK)
        return status;
    write_data(out, figure);

    fputs("\n# the house style\n"
          "set border 3 lw 1 lc rgb '#444444'\n"
          "set tics nomirror out\n"
          "set style fill transparent solid 0.2 noborder\n"
          "set key outside right top vertical Left reverse samplen 2.5 spacing 1.15\n"
          "set lmargin 10\n",
          out);
    // one panel has its key beside it; stacked panels share one, above them (write_layout)
    if (figure->n_panels == 1)
        fprintf(out, "set rmargin %d\n", right_margin(figure) + (has_heatmap(figure) ? 10 : 0));
    const size_t title_chars = title_width(format, figure->n_panels, size);
    // dots all over a text plot hide the curves: a grid only in pictures
    if (format != VP_PLOT_DUMB)
        fputs("set grid xtics ytics back lt 1 lw 1 lc rgb '#e3e3e3'\n", out);
    size_t title_lines = 0;
    double key_at = 0.0;
    fprintf(out, "set multiplot layout %zu,1", figure->n_panels);
    if (figure->title[0]) {
        fputs(" title ", out);
        if ((status = write_title(out, figure->title, title_chars, "the figure's title",
                                  &title_lines, err)) != VP_OK)
            return status;
        fputs(" noenhanced", out);
    }
    if (figure->n_panels > 1)
        write_layout(out, figure, format, size, title_lines, &key_at);
    putc('\n', out);
    for (size_t p = 0; p < figure->n_panels; p++) {
        const vp_panel *panel = &figure->panels[p];
        fprintf(out, "\n# panel %zu\n", p + 1);
        if ((status = write_labels(out, panel, format, title_chars, err)) != VP_OK)
            return status;
        write_axes(out, panel, format);
        if (is_heatmap_panel(panel) && format != VP_PLOT_DUMB)
            status = write_colour_scale(out, figure, panel, err);
        else if (has_heatmap(figure))
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
                                target, err);
}
