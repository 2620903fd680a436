/* Where a figure's parts go: its size, the room its titles, tic labels and
 * key take, and the margins of stacked panels. */
#include <math.h>

#include "plot/plot_internal.h"

#define WIDTH_IN 5.5
#define SINGLE_PANEL_IN 3.4
#define PANEL_IN 2.4
/* gnuplot's margin unit, a character of the terminal's font: 8.4 px of svg's
 * 12 px (measured), 0.7 of the font's size */
#define MARGIN_CHAR 0.7
/* the left margin that holds y tic labels up to 5 characters ("10^{-10}") */
#define LEFT_CHARS 10
#define BASE_TIC_CHARS 5

void plot_figure_size(vp_plot_format format, size_t n_panels, const vp_plot_target *size,
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

int plot_has_heatmap(const vp_figure *figure)
{
    for (size_t p = 0; p < figure->n_panels; p++)
        for (size_t i = 0; i < figure->panels[p].n_series; i++)
            if (figure->panels[p].series[i].style == VP_SERIES_HEATMAP)
                return 1;
    return 0;
}

/* The characters beyond the base that the widest log y tic label takes
 * ("5×10^{-3}" two more than "10^{-3}"), over the figure's panels: gnuplot
 * puts the y label left of the tic labels and drops it where that is off
 * the page, as it did train-depth's "final loss". */
static int wide_tic_chars(const vp_figure *figure)
{
    size_t widest = 0;
    for (size_t p = 0; p < figure->n_panels; p++) {
        double lo, hi;
        if ((figure->panels[p].flags & VP_AXIS_LOG_Y) &&
            plot_log_y_range(&figure->panels[p], &lo, &hi)) {
            const size_t chars = plot_log_tics_chars(lo, hi);
            widest = chars > widest ? chars : widest;
        }
    }
    return widest > BASE_TIC_CHARS ? (int)(widest - BASE_TIC_CHARS) : 0;
}

int plot_left_margin(const vp_figure *figure)
{
    return LEFT_CHARS + wide_tic_chars(figure);
}

int plot_right_margin(const vp_figure *figure)
{
    size_t widest = 0;
    int any_key = 0;
    for (size_t p = 0; p < figure->n_panels; p++) {
        const vp_panel *panel = &figure->panels[p];
        if (!panel->show_key)
            continue;
        for (size_t i = 0; i < panel->n_series; i++) {
            char label[512];
            plot_legend_label(figure, panel, i, label, sizeof label);
            size_t chars = 0; // UTF-8 code points, not bytes
            for (const char *c = label; *c; c++)
                chars += (*c & 0xc0) != 0x80;
            widest = chars > widest ? chars : widest;
            any_key = 1;
        }
    }
    /* the sample line and marker beside the widest label; a colour map's bar
       and its label ten more */
    return (any_key ? (int)widest + 7 : 3) + (plot_has_heatmap(figure) ? 10 : 0);
}

/* The characters a title line holds: the width a title is centred in over a
 * character's. A character of DejaVu Sans or Liberation Sans (what
 * "sans-serif" becomes) averages 0.6 of the font's size. gnuplot centres a
 * single panel's title over its plot area, which the key at the right
 * pushes left: a line spans at most twice the room left of that centre;
 * and never more than 0.85 of the figure (measured on the gain sweep at
 * 5.5 in, rendered by rsvg-convert). */
size_t plot_title_width(vp_plot_format format, const vp_figure *figure, const vp_plot_target *size)
{
    if (format == VP_PLOT_DUMB)
        return PLOT_DUMB_COLUMNS - 4;
    double width, height, font;
    plot_figure_size(format, figure->n_panels, size, &width, &height, &font);
    const double inches = format == VP_PLOT_PNG ? width / VP_PLOT_PNG_DPI : width;
    double room = 0.85 * inches;
    if (figure->n_panels == 1) {
        const double column = MARGIN_CHAR * font / 72.0;
        const double left = plot_left_margin(figure) * column;
        const double right = plot_right_margin(figure) * column;
        const double centre = (left + inches - right) / 2.0;
        room = fmin(room, 0.95 * 2.0 * fmin(centre, inches - centre));
    }
    const double chars = room * 72.0 / (0.6 * font);
    return chars > 20.0 ? (size_t)chars : 20;
}

/* Stacked panels: equal plot areas, whatever the key and titles take, with
 * the figure's title and the one key above them all. gnuplot's own layout
 * takes the key's room from the first panel alone, and a key outside a
 * panel is sized differently by each terminal; so the margins are given in
 * screen fractions, from the height of a line of text. */
void plot_write_layout(FILE *out, const vp_figure *figure, vp_plot_format format,
                       const vp_plot_target *size, size_t title_lines, double *key_at)
{
    double width, height, font;
    plot_figure_size(format, figure->n_panels, size, &width, &height, &font);
    double line, column; // a line's height and a character's width, as fractions
    if (format == VP_PLOT_DUMB) {
        line = 1.0 / (double)(PLOT_DUMB_PANEL_LINES * figure->n_panels);
        column = 1.0 / PLOT_DUMB_COLUMNS;
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
    /* under the key, the first panel's title, or where it has none (the
       training figures) only the gap its top tic label needs: a band a
       title's height was left empty there */
    const double under_key = figure->panels[0].title[0] ? 2.8 : 1.4;
    const double top = 1.0 - line * ((double)title_lines + key_rows + under_key);
    *key_at = 1.0 - line * ((double)title_lines + key_rows / 2.0 + 0.6);
    /* a colour map's bar and its label need ten columns more at the right */
    const double right = plot_has_heatmap(figure) ? 13.0 : 3.0;
    /* a margin character is 0.7 of the font, a column 0.55 */
    const double left = 12.0 + wide_tic_chars(figure) * MARGIN_CHAR / 0.55;
    fprintf(out, " margins %.4f, %.4f, %.4f, %.4f spacing 0, %.4f", left * column,
            1.0 - right * column, 3.6 * line, top, 4.4 * line);
}
