/* Series that lie on one another. In the depth sweep Post-LN lies exactly
 * under DeepNorm and pre-norm under sandwich, output norm and parallel: the
 * last line drawn hides the others, and at a marker on every point so did
 * its markers. Such series are found here, point for point, so that their
 * markers take turns (write_plot) and the legend says which lies on which. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot/plot_internal.h"

/* Equal to 1e-9 of their size: far below a pixel, far above rounding. */
static int close_enough(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* Whether a and b draw the same points, one for one. */
static int same_points(const vp_panel *panel, const vp_series *a, const vp_series *b)
{
    if (a->style == VP_SERIES_HEATMAP || b->style == VP_SERIES_HEATMAP)
        return 0;
    size_t i = 0, j = 0, compared = 0;
    for (;;) {
        while (i < a->n && !plot_drawable(panel, a, i))
            i++;
        while (j < b->n && !plot_drawable(panel, b, j))
            j++;
        if (i == a->n || j == b->n)
            return i == a->n && j == b->n && compared > 0;
        if (!close_enough(a->x[i], b->x[j]) || !close_enough(a->y[i], b->y[j]))
            return 0;
        i++, j++, compared++;
    }
}

plot_overlap plot_series_overlap(const vp_panel *panel, size_t i)
{
    plot_overlap overlap = {.leader = i, .rank = 0, .size = 1};
    for (size_t j = 0; j < panel->n_series; j++) {
        if (j == i || !same_points(panel, &panel->series[i], &panel->series[j]))
            continue;
        if (j < i && overlap.leader == i)
            overlap.leader = j;
        overlap.rank += j < i;
        overlap.size++;
    }
    return overlap;
}

/* The series of panel labelled label; NULL where none is. */
static const vp_series *series_named(const vp_panel *panel, const char *label)
{
    for (size_t i = 0; i < panel->n_series; i++)
        if (strcmp(panel->series[i].label, label) == 0)
            return &panel->series[i];
    return NULL;
}

/* Whether series a and b, by their labels, lie on one another in every
 * panel of the figure that holds both: stacked panels share one key. */
static int same_in_every_panel(const vp_figure *figure, const char *a, const char *b)
{
    for (size_t p = 0; p < figure->n_panels; p++) {
        const vp_series *x = series_named(&figure->panels[p], a);
        const vp_series *y = series_named(&figure->panels[p], b);
        if (x && y && !same_points(&figure->panels[p], x, y))
            return 0;
    }
    return 1;
}

void plot_legend_label(const vp_figure *figure, const vp_panel *panel, size_t i, char *buf,
                       size_t size)
{
    const plot_overlap overlap = plot_series_overlap(panel, i);
    const char *label = panel->series[i].label, *under = panel->series[overlap.leader].label;
    if (overlap.rank == 0 || !same_in_every_panel(figure, label, under))
        snprintf(buf, size, "%s", label);
    else
        snprintf(buf, size, "%s (= %s)", label, under);
}
