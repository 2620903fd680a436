/* The tics of a log y axis and of a swept x axis, each labelled here with
 * its own value. gnuplot's `set format y '10^{%L}'` labels a tic with the
 * power of ten at or below it, so that an axis with tics at 2e-4 and 5e-4
 * read 10^-4 twice, and a reader took pre-norm's 2e-4 for 1e-4. A decade
 * now reads 10^-4, any other tic 2×10^-4, or plainly (0.002) on an axis
 * that stays between 0.001 and 10000. A swept axis has a tic at every swept
 * value (train-lr had none at its middle rate, 0.003), labelled where the
 * labels have room. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/plot_internal.h"

#define MAX_TICS 256
#define MAX_DECADE_LABELS 6
/* the least distance between two labels of a swept axis, a share of the axis */
#define LABEL_ROOM 0.1

typedef struct {
    double at;
    int minor; /* gnuplot's level: 0 labelled, 1 a minor tic without a label */
} tic;

static int in_powers(double lo, double hi)
{
    return lo < 1e-3 || hi > 1e4;
}

/* "10^{-4}", "2×10^{-4}" ("10^-4", "2x10^-4" in text), or plainly "0.002". */
static void tic_label(double v, int powers, vp_plot_format format, char *buf, size_t size)
{
    if (!powers || !(v > 0.0)) {
        snprintf(buf, size, "%.6g", v);
        return;
    }
    int exponent = (int)floor(log10(v));
    char mantissa[16];
    snprintf(mantissa, sizeof mantissa, "%.3g", v / pow(10.0, exponent));
    if (strcmp(mantissa, "10") == 0) { /* 9.9996e-4 reads 10^-3, not 10×10^-4 */
        exponent++;
        snprintf(mantissa, sizeof mantissa, "1");
    }
    const int dumb = format == VP_PLOT_DUMB;
    if (strcmp(mantissa, "1") == 0)
        snprintf(buf, size, dumb ? "10^%d" : "10^{%d}", exponent);
    else
        snprintf(buf, size, dumb ? "%sx10^%d" : "%s×10^{%d}", mantissa, exponent);
}

static size_t add_tic(tic *tics, size_t n, double at, int minor)
{
    if (n < MAX_TICS)
        tics[n++] = (tic){at, minor};
    return n;
}

/* Every step-th decade labelled, so that at most six are. */
static int decade_step(int e0, int e1)
{
    static const int steps[] = {1, 2, 3, 5, 10, 20, 25, 50};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        int count = 0;
        for (int e = e0; e <= e1; e++)
            count += e % steps[i] == 0;
        if (count <= MAX_DECADE_LABELS)
            return steps[i];
    }
    return 100;
}

/* Two decades or more: the labelled decades, the skipped ones as minor tics,
 * and where the axis spans at most three decades 2 to 9 times each. */
static size_t decade_tics(double lo, double hi, tic *tics)
{
    const int e0 = (int)ceil(log10(lo)), e1 = (int)floor(log10(hi));
    const int step = decade_step(e0, e1);
    const int fine = step == 1 && log10(hi / lo) <= 3.0;
    size_t n = 0;
    for (int e = e0 - 1; e <= e1; e++) {
        const double decade = pow(10.0, e);
        if (e >= e0 && (e % step == 0 || step <= 10))
            n = add_tic(tics, n, decade, e % step != 0);
        for (int m = 2; m <= 9 && fine; m++)
            if (m * decade >= lo && m * decade <= hi)
                n = add_tic(tics, n, m * decade, 1);
    }
    return n;
}

/* Less than two decades: 1, 2 and 5 times each decade, or each of 1 to 9
 * where that gives fewer than two. */
static size_t mantissa_tics(double lo, double hi, tic *tics)
{
    static const int one_two_five[] = {1, 2, 5}, every[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    size_t n = 0;
    for (int pass = 0; pass < 2 && n < 2; pass++) {
        const int *m = pass ? every : one_two_five;
        const size_t count = pass ? 9 : 3;
        n = 0;
        for (int e = (int)floor(log10(lo)); e <= (int)ceil(log10(hi)); e++)
            for (size_t i = 0; i < count; i++)
                if (m[i] * pow(10.0, e) >= lo && m[i] * pow(10.0, e) <= hi)
                    n = add_tic(tics, n, m[i] * pow(10.0, e), 0);
    }
    return n;
}

/* "set ytics ('10^{-4}' 0.0001 0, '' 0.0002 1, ...)": each label written
 * out. A label holds digits, signs, "x", "×", "^" and braces: no quote. */
static void write_tic_list(FILE *out, const char *axis, const tic *tics, size_t n, int powers,
                           vp_plot_format format)
{
    fprintf(out, "set %stics (", axis);
    for (size_t i = 0; i < n; i++) {
        char label[48] = "";
        if (!tics[i].minor)
            tic_label(tics[i].at, powers, format, label, sizeof label);
        fprintf(out, "%s'%s' %.17g %d", i ? ", " : "", label, tics[i].at, tics[i].minor);
    }
    fputs(")\n", out);
}

void plot_write_log_tics(FILE *out, const char *axis, double lo, double hi, vp_plot_format format)
{
    tic tics[MAX_TICS];
    const size_t n =
        log10(hi / lo) >= 2.0 ? decade_tics(lo, hi, tics) : mantissa_tics(lo, hi, tics);
    size_t labelled = 0;
    for (size_t i = 0; i < n; i++)
        labelled += !tics[i].minor;
    /* where gnuplot chooses the tics, it labels them with their values */
    fprintf(out, "set format %s '%%g'\n", axis);
    if (labelled < 2)
        fprintf(out, "set %stics autofreq\n", axis);
    else
        write_tic_list(out, axis, tics, n, in_powers(lo, hi), format);
}

size_t plot_log_tics_chars(double lo, double hi)
{
    tic tics[MAX_TICS];
    const size_t n =
        log10(hi / lo) >= 2.0 ? decade_tics(lo, hi, tics) : mantissa_tics(lo, hi, tics);
    size_t widest = 0;
    for (size_t i = 0; i < n; i++) {
        char label[48];
        if (tics[i].minor)
            continue;
        tic_label(tics[i].at, in_powers(lo, hi), VP_PLOT_SVG, label, sizeof label);
        size_t chars = 0; /* bytes but markup: gnuplot's own estimate counts "×" twice */
        for (const char *c = label; *c; c++)
            chars += *c != '^' && *c != '{' && *c != '}';
        widest = chars > widest ? chars : widest;
    }
    return widest;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The distinct x values of the panel's drawable points, ascending; at most
 * MAX_TICS (0 beyond: too many to mark). */
static size_t swept_values(const vp_panel *panel, double *xs)
{
    size_t n = 0;
    for (size_t i = 0; i < panel->n_series; i++)
        for (size_t k = 0; k < panel->series[i].n; k++) {
            const double x = panel->series[i].x[k];
            if (!plot_drawable(panel, &panel->series[i], k))
                continue;
            size_t j = 0;
            while (j < n && fabs(xs[j] - x) > 1e-12 * fabs(x))
                j++;
            if (j == n && n == MAX_TICS)
                return 0;
            if (j == n)
                xs[n++] = x;
        }
    qsort(xs, n, sizeof *xs, by_value);
    return n;
}

/* Whether x falls on one of the panel's step-by-step major tics. */
static int on_major(const vp_panel *panel, double x)
{
    const double start = panel->x_tic_start, step = panel->x_tic_step;
    const double k = (panel->flags & VP_AXIS_LOG_X)
                         ? log(x / (start > 0.0 ? start : 1.0)) / log(step)
                         : (x - start) / step;
    return fabs(k - round(k)) < 1e-9;
}

/* The swept values are the tics: labelled left to right where a label has
 * room after the last, the others minor tics. */
static void write_swept_tics(FILE *out, const vp_panel *panel, const double *xs, size_t n,
                             vp_plot_format format)
{
    const int log_x = (panel->flags & VP_AXIS_LOG_X) != 0;
    const double span = log_x ? log(xs[n - 1] / xs[0]) : xs[n - 1] - xs[0];
    tic tics[MAX_TICS];
    double last = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const double from_first = log_x ? log(xs[i] / xs[0]) : xs[i] - xs[0];
        const double at = span > 0.0 ? from_first / span : 0.0;
        tics[i] = (tic){xs[i], at - last < LABEL_ROOM};
        if (!tics[i].minor)
            last = at;
    }
    fputs("unset mxtics\n", out);
    write_tic_list(out, "x", tics, n, log_x && in_powers(xs[0], xs[n - 1]), format);
}

void plot_write_x_tics(FILE *out, const vp_panel *panel, vp_plot_format format)
{
    double xs[MAX_TICS] = {0};
    const size_t n = (panel->flags & VP_AXIS_X_SWEPT) ? swept_values(panel, xs) : 0;
    if (n > 0 && !(panel->x_tic_step > 0.0)) {
        write_swept_tics(out, panel, xs, n, format);
        return;
    }
    /* on a log axis gnuplot reads the step as a factor: 2 gives 0.25, 0.5, 1, 2, 4 */
    if (panel->x_tic_step > 0.0 && panel->x_tic_start > 0.0)
        fprintf(out, "set xtics %.17g, %.17g\n", panel->x_tic_start, panel->x_tic_step);
    else if (panel->x_tic_step > 0.0)
        fprintf(out, "set xtics %.17g\n", panel->x_tic_step);
    else
        fputs("set xtics autofreq\n", out);
    if (panel->x_minor_tics > 1 && n == 0)
        fprintf(out, "set mxtics %d\n", panel->x_minor_tics);
    else
        fputs("unset mxtics\n", out);
    const char *sep = "set xtics add ("; /* the swept values between the major tics */
    for (size_t i = 0; i < n; i++)
        if (!on_major(panel, xs[i])) {
            fprintf(out, "%s'' %.17g 1", sep, xs[i]);
            sep = ", ";
        }
    if (*sep == ',')
        fputs(")\n", out);
}
