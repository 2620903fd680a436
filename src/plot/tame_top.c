/* Where a panel's tame curves end, for cutting an axis above them when some
 * curve runs away (none's stream reaches 1e38 while the others stay below
 * 20): the profile and the sweep figures both cut there. */
#include <stdlib.h>

#include "plot/plot_internal.h"

static double series_max(const vp_series *s)
{
    double max = 0.0;
    for (size_t i = 0; i < s->n; i++)
        max = s->y[i] > max ? s->y[i] : max;
    return max;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double plot_series_max(const vp_series *series)
{
    return series_max(series);
}

vp_status plot_tame_top(const vp_panel *panel, double far, double *limit, double *tame,
                        double *highest, vp_error *err)
{
    const size_t n = panel->n_series;
    *limit = *tame = *highest = 0.0;
    if (n == 0)
        return VP_OK;
    double *tops = malloc(n * sizeof *tops);
    if (!tops)
        return vp_fail(err, VP_ENOMEM, "no memory to scale a panel");
    for (size_t i = 0; i < n; i++)
        tops[i] = series_max(&panel->series[i]);
    qsort(tops, n, sizeof *tops, by_value);
    *limit = far * tops[n / 2];
    for (size_t i = 0; i < n; i++)
        if (tops[i] <= *limit)
            *tame = tops[i];
    *highest = tops[n - 1];
    free(tops);
    return VP_OK;
}
