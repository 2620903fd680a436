/* The figure model: panels, series and markers, each owning its strings and
 * arrays. */
#include "varprof/plot.h"
#include "plot/plot_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *copy_text(const char *text)
{
    if (!text)
        text = "";
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, text, n);
    return copy;
}

vp_figure *vp_figure_alloc(const char *title)
{
    vp_figure *figure = calloc(1, sizeof *figure);
    if (!figure)
        return NULL;
    figure->title = copy_text(title);
    if (!figure->title) {
        free(figure);
        return NULL;
    }
    return figure;
}

vp_status plot_replace_text(char **slot, const char *text, vp_error *err)
{
    char *copy = strdup(text);
    if (!copy)
        return vp_fail(err, VP_ENOMEM, "no memory for a figure's text");
    free(*slot);
    *slot = copy;
    return VP_OK;
}

static void series_free(vp_series *series)
{
    free(series->label);
    free(series->x);
    free(series->y);
    free(series->lo);
    free(series->hi);
    free(series->z);
}

static void panel_free(vp_panel *panel)
{
    free(panel->title);
    free(panel->x_label);
    free(panel->y_label);
    for (size_t i = 0; i < panel->n_series; i++)
        series_free(&panel->series[i]);
    free(panel->series);
    for (size_t i = 0; i < panel->n_markers; i++)
        free(panel->markers[i].label);
    free(panel->markers);
}

void vp_figure_free(vp_figure *figure)
{
    if (!figure)
        return;
    for (size_t i = 0; i < figure->n_panels; i++)
        panel_free(&figure->panels[i]);
    free(figure->title);
    free(figure);
}

vp_status vp_figure_add_panel(vp_figure *figure, const char *title, const char *x_label,
                              const char *y_label, unsigned flags, vp_panel **out, vp_error *err)
{
    *out = NULL;
    if (figure->n_panels >= VP_PLOT_MAX_PANELS)
        return vp_fail(err, VP_EINVAL, "a figure holds at most %d panels", VP_PLOT_MAX_PANELS);
    vp_panel panel = {.flags = flags, .show_key = 1};
    panel.title = copy_text(title);
    panel.x_label = copy_text(x_label);
    panel.y_label = copy_text(y_label);
    if (!panel.title || !panel.x_label || !panel.y_label) {
        panel_free(&panel);
        return vp_fail(err, VP_ENOMEM, "no memory for a panel's labels");
    }
    figure->panels[figure->n_panels] = panel;
    *out = &figure->panels[figure->n_panels++];
    return VP_OK;
}

static double *alloc_points(size_t n)
{
    return n <= SIZE_MAX / sizeof(double) ? malloc(n * sizeof(double)) : NULL;
}

vp_status vp_panel_add_series(vp_panel *panel, const char *label, int colour, int dash,
                              vp_series_style style, size_t capacity, vp_series **out,
                              vp_error *err)
{
    *out = NULL;
    if (!vp_plot_colour(colour))
        return vp_fail(err, VP_EINVAL, "colour key %d is out of range 0..%d", colour,
                       VP_PLOT_COLOURS - 1);
    if (capacity == 0)
        return vp_fail(err, VP_EINVAL, "a series needs room for at least one point");
    if (style != VP_SERIES_LINE && style != VP_SERIES_BAND && style != VP_SERIES_HEATMAP)
        return vp_fail(err, VP_EINVAL, "unknown series style %d", (int)style);
    vp_series *grown = realloc(panel->series, (panel->n_series + 1) * sizeof *grown);
    if (!grown)
        return vp_fail(err, VP_ENOMEM, "no memory for another series");
    panel->series = grown;
    vp_series series = {
        .colour = colour, .dash = dash > 0 ? dash : 1, .style = style, .capacity = capacity};
    series.label = copy_text(label);
    series.x = alloc_points(capacity);
    series.y = alloc_points(capacity);
    if (style == VP_SERIES_BAND) {
        series.lo = alloc_points(capacity);
        series.hi = alloc_points(capacity);
    }
    if (style == VP_SERIES_HEATMAP)
        series.z = alloc_points(capacity);
    if (!series.label || !series.x || !series.y ||
        (style == VP_SERIES_BAND && (!series.lo || !series.hi)) ||
        (style == VP_SERIES_HEATMAP && !series.z)) {
        series_free(&series);
        return vp_fail(err, VP_ENOMEM, "no memory for a series of %zu points", capacity);
    }
    panel->series[panel->n_series] = series;
    *out = &panel->series[panel->n_series++];
    return VP_OK;
}

vp_status vp_series_add_point(vp_series *series, double x, double y, double lo, double hi,
                              vp_error *err)
{
    if (series->style == VP_SERIES_HEATMAP)
        return vp_fail(err, VP_EINVAL, "series '%s' is a colour map: its cells take a value",
                       series->label);
    if (series->n >= series->capacity)
        return vp_fail(err, VP_EINVAL, "series '%s' is full (%zu points)", series->label,
                       series->capacity);
    const int band = series->style == VP_SERIES_BAND;
    if (!isfinite(x) || !isfinite(y) || (band && (!isfinite(lo) || !isfinite(hi))))
        return vp_fail(err, VP_EINVAL, "series '%s': point %zu is not finite", series->label,
                       series->n);
    series->x[series->n] = x;
    series->y[series->n] = y;
    if (band) {
        series->lo[series->n] = lo;
        series->hi[series->n] = hi;
    }
    series->n++;
    return VP_OK;
}

vp_status vp_series_add_cell(vp_series *series, double x, double y, double z, vp_error *err)
{
    if (series->style != VP_SERIES_HEATMAP)
        return vp_fail(err, VP_EINVAL, "series '%s' is not a colour map", series->label);
    if (series->n >= series->capacity)
        return vp_fail(err, VP_EINVAL, "series '%s' is full (%zu cells)", series->label,
                       series->capacity);
    if (!isfinite(x) || !isfinite(y) || !isfinite(z))
        return vp_fail(err, VP_EINVAL, "series '%s': cell %zu is not finite", series->label,
                       series->n);
    series->x[series->n] = x;
    series->y[series->n] = y;
    series->z[series->n] = z;
    series->n++;
    return VP_OK;
}

vp_status vp_panel_add_marker(vp_panel *panel, double y, const char *label, vp_error *err)
{
    if (!isfinite(y) || ((panel->flags & VP_AXIS_LOG_Y) && !(y > 0.0)))
        return vp_fail(err, VP_EINVAL, "a marker at y = %g cannot be drawn on this axis", y);
    vp_marker *grown = realloc(panel->markers, (panel->n_markers + 1) * sizeof *grown);
    if (!grown)
        return vp_fail(err, VP_ENOMEM, "no memory for another marker");
    panel->markers = grown;
    char *copy = copy_text(label);
    if (!copy)
        return vp_fail(err, VP_ENOMEM, "no memory for a marker's label");
    panel->markers[panel->n_markers++] = (vp_marker){.y = y, .label = copy};
    return VP_OK;
}
