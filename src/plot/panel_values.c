/* Which of a panel's values are drawn, and how finely.
 *
 * The forward pass and training sum in another order on each instruction
 * set (kern_table.h), so their values differ in the last bits between the
 * scalar, AVX2 and AVX-512 kernels (about 1e-7 of the value), and gnuplot,
 * which writes an SVG's coordinates to 0.01 px, turns some of those bits
 * into a coordinate one hundredth of a pixel off: the committed figures
 * changed with the machine that drew them. Each value is therefore drawn
 * rounded to a thousandth of its axis: on a log axis to the significant
 * digits that resolve a thousandth of its decades, on a linear one to a
 * power of ten at most a thousandth of its span; on the figures' panels,
 * 130 to 300 px high, a tenth of a pixel or less (a third at worst). The data stay in the script as computed (%.17g); gnuplot rounds as
 * it reads them (vp_sig, vp_step), and the axis ranges are taken from the
 * rounded values. A value in the last bits of a rounding boundary still
 * falls either way: rounding makes that unlikely, not impossible. */
#include <math.h>

#include "plot/plot_internal.h"

/* A thousandth of an axis: ten thousand times the instruction sets'
 * differences, a tenth of a pixel on a panel 100 px high. */
#define AXIS_STEPS 1000.0

static int is_log_y(const vp_panel *panel)
{
    return (panel->flags & VP_AXIS_LOG_Y) != 0;
}

static int on_log_axis(double v)
{
    return v >= PLOT_LOG_AXIS_FLOOR;
}

int plot_drawable(const vp_panel *panel, const vp_series *s, size_t i)
{
    if (!isfinite(s->x[i]) || !isfinite(s->y[i]))
        return 0;
    if (((panel->flags & VP_AXIS_LOG_X) && !on_log_axis(s->x[i])) ||
        (is_log_y(panel) && !on_log_axis(s->y[i])))
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

size_t plot_drawable_points(const vp_panel *panel, const vp_series *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += (size_t)plot_drawable(panel, s, i);
    return n;
}

/* The smallest and largest y (bounds included) a panel draws, below y_max
 * where it is cut; 0 when there is none. */
static int y_extent(const vp_panel *panel, double *min, double *max)
{
    *min = INFINITY;
    *max = -INFINITY;
    for (size_t i = 0; i < panel->n_series; i++) {
        const vp_series *s = &panel->series[i];
        for (size_t k = 0; k < s->n && s->style != VP_SERIES_HEATMAP; k++) {
            if (!plot_drawable(panel, s, k))
                continue;
            const int band = s->style == VP_SERIES_BAND;
            *min = fmin(*min, band ? fmin(s->lo[k], s->y[k]) : s->y[k]);
            *max = fmax(*max, band ? fmax(s->hi[k], s->y[k]) : s->y[k]);
        }
    }
    if (panel->y_max > 0.0)
        *max = fmin(*max, panel->y_max);
    return isfinite(*min) && isfinite(*max) && *min <= *max;
}

/* The significant digits that resolve a thousandth of a log axis spanning
 * `decades`: the last digit's step, 10^(1 - digits) of the value at worst,
 * is 10^(1 - digits) / ln 10 of a decade. */
static plot_precision log_precision(double decades)
{
    const double step = fmax(decades, 0.05) * log(10.0) / AXIS_STEPS;
    const double digits = ceil(1.0 - log10(step));
    return (plot_precision){.log = 1, .digits = (int)fmin(fmax(digits, 3.0), 15.0)};
}

plot_precision plot_y_precision(const vp_panel *panel)
{
    double min, max;
    const int any = y_extent(panel, &min, &max);
    if (is_log_y(panel))
        return log_precision(any ? log10(max / min) : 1.0);
    double span = any ? max - min : 1.0;
    if (!(span > 0.0)) /* a flat line: its own size sets the scale */
        span = any && fabs(max) > 0.0 ? fabs(max) : 1.0;
    return (plot_precision){.step = pow(10.0, floor(log10(span / AXIS_STEPS)))};
}

plot_precision plot_z_precision(const vp_figure *figure)
{
    double lo = INFINITY, hi = 0.0;
    for (size_t p = 0; p < figure->n_panels; p++)
        for (size_t i = 0; i < figure->panels[p].n_series; i++) {
            const vp_series *s = &figure->panels[p].series[i];
            for (size_t k = 0; k < s->n && s->style == VP_SERIES_HEATMAP; k++)
                if (plot_drawable(&figure->panels[p], s, k)) {
                    lo = fmin(lo, s->z[k]);
                    hi = fmax(hi, s->z[k]);
                }
        }
    return log_precision(hi > 0.0 && lo < hi ? log10(hi / lo) : 1.0);
}

double plot_rounded(plot_precision precision, double v)
{
    if (!isfinite(v))
        return v;
    if (precision.log) {
        if (!(v > 0.0))
            return v;
        const double q = pow(10.0, floor(log10(v)) - precision.digits + 1);
        return q * floor(v / q + 0.5);
    }
    if (!(fabs(v / precision.step) < 1e15)) // beyond a double's integers: as it is
        return v;
    return precision.step * floor(v / precision.step + 0.5);
}

void plot_write_rounding(FILE *out)
{
    fputs("# each value drawn to a thousandth of its axis, so that the last bits of a sum,\n"
          "# which differ between instruction sets, move no coordinate\n"
          "vp_sig(v, d) = v > 0 ? (vp_q = 10.0**(floor(log10(v)) - d + 1), "
          "vp_q * floor(v / vp_q + 0.5)) : v\n"
          "vp_step(v, q) = abs(v / q) < 1e15 ? q * floor(v / q + 0.5) : v\n",
          out);
}

void plot_write_rounded_column(FILE *out, plot_precision precision, int column)
{
    if (precision.log)
        fprintf(out, "(vp_sig($%d,%d))", column, precision.digits);
    else
        fprintf(out, "(vp_step($%d,%.17g))", column, precision.step);
}

int plot_log_y_range(const vp_panel *panel, double *lo, double *hi)
{
    const plot_precision precision = plot_y_precision(panel);
    double min, max;
    if (!y_extent(panel, &min, &max))
        min = INFINITY, max = 0.0;
    min = plot_rounded(precision, min);
    max = plot_rounded(precision, max);
    for (size_t i = 0; i < panel->n_markers; i++) {
        min = fmin(min, panel->markers[i].y);
        max = fmax(max, panel->markers[i].y);
    }
    if (panel->y_max > 0.0)
        max = fmin(max, plot_rounded(precision, panel->y_max));
    if (!(max > 0.0) || !isfinite(min) || min > max)
        return 0;
    const double pad = fmax(1.05, pow(max / min, 0.05));
    *lo = fmax(min / pad, PLOT_LOG_AXIS_FLOOR);
    *hi = max * pad;
    return 1;
}
