/* A sweep drawn: the top of each stack against the swept gain, depth or
 * width, one line per placement and engine. The program's --plot of a sweep
 * and the chapter's gain- and depth-sweep figures both come through here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "varprof/sweep.h"
#include "plot/plot_internal.h"

static const struct {
    const char *title, *y_label;
} quantities[] = {
    [VP_QUANTITY_STREAM] = {"stream size at the top", "sqrt(v_K/v_0)"},
    [VP_QUANTITY_UPDATE] = {"last update ratio", "u_K"},
    [VP_QUANTITY_SHARE] = {"embedding share at the top", "e_K"},
};

static const struct {
    const char *label;
    unsigned flags; /* the x axis's: the gain and width span factors, the depth steps */
} axes[] = {
    [VP_SWEEP_GAIN] = {"branch gain g", VP_AXIS_LOG_X},
    [VP_SWEEP_LAYERS] = {"layers L", 0},
    [VP_SWEEP_WIDTH] = {"width d", VP_AXIS_LOG_X},
};

static double axis_value(const vp_sweep_point *p, vp_sweep_axis axis)
{
    switch (axis) {
    case VP_SWEEP_GAIN: return p->gain;
    case VP_SWEEP_LAYERS: return (double)p->layers;
    case VP_SWEEP_WIDTH: return (double)p->width;
    }
    return NAN;
}

/* The top's value of the quantity; 0 where there is none to draw. */
static double top_value(const vp_profile_top *t, vp_plot_quantity quantity)
{
    if (t->overflow_at)
        return 0.0;
    switch (quantity) {
    case VP_QUANTITY_STREAM: return t->stream_size;
    case VP_QUANTITY_UPDATE: return t->sub_block > 0 ? t->update_ratio : 0.0;
    case VP_QUANTITY_SHARE: return t->embedding_share; /* 0 where it underflowed */
    case VP_QUANTITY_GRAD: /* per sub-block only: vp_plot_sweep refuses them */
    case VP_QUANTITY_WEIGHT_GRAD:
    case VP_QUANTITY_ALL: break;
    }
    return 0.0;
}

/* Whether the tops take more than one value of the variable (or engine). */
typedef struct {
    int gain, layers, width, engine;
} varying;

static varying what_varies(const vp_sweep_top *tops, size_t n)
{
    varying v = {0};
    for (size_t i = 1; i < n; i++) {
        v.gain |= tops[i].point.gain != tops[0].point.gain;
        v.layers |= tops[i].point.layers != tops[0].point.layers;
        v.width |= tops[i].point.width != tops[0].point.width;
        v.engine |= tops[i].top.engine != tops[0].top.engine;
    }
    return v;
}

/* Two tops lie on one line when they differ in x alone. */
static int same_line(const vp_sweep_top *a, const vp_sweep_top *b, vp_sweep_axis x)
{
    return a->point.placement == b->point.placement && a->top.engine == b->top.engine &&
           (x == VP_SWEEP_GAIN || a->point.gain == b->point.gain) &&
           (x == VP_SWEEP_LAYERS || a->point.layers == b->point.layers) &&
           (x == VP_SWEEP_WIDTH || a->point.width == b->point.width);
}

/* "Pre-norm", then the engine and the other variables' values where they vary. */
static void line_label(const vp_sweep_top *t, vp_sweep_axis x, varying v, char *buf, size_t size)
{
    int used = snprintf(buf, size, "%s", vp_placement_display_name(t->point.placement));
    if (v.engine && used > 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, ", %s", vp_engine_title(t->top.engine));
    if (v.gain && x != VP_SWEEP_GAIN && used > 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, ", g %.6g", t->point.gain);
    if (v.layers && x != VP_SWEEP_LAYERS && used > 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, ", L %zu", t->point.layers);
    if (v.width && x != VP_SWEEP_WIDTH && t->point.width && used > 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, ", d %zu", t->point.width);
}

/* A point at each width the tops were sampled at, each once. */
static vp_status add_at_every_width(vp_series *series, const vp_sweep_top *tops, size_t n, double y,
                                    vp_error *err)
{
    vp_status status = VP_OK;
    for (size_t i = 0; i < n && status == VP_OK; i++) {
        size_t first = 0;
        while (tops[first].point.width != tops[i].point.width)
            first++;
        if (first == i && tops[i].point.width > 0)
            status = vp_series_add_point(series, (double)tops[i].point.width, y, 0.0, 0.0, err);
    }
    return status;
}

/* Points in x order, whatever order the lists were given in. */
static void sort_by_x(vp_series *s)
{
    for (size_t i = 1; i < s->n; i++)
        for (size_t j = i; j > 0 && s->x[j - 1] > s->x[j]; j--) {
            const double x = s->x[j], y = s->y[j];
            s->x[j] = s->x[j - 1];
            s->y[j] = s->y[j - 1];
            s->x[j - 1] = x;
            s->y[j - 1] = y;
        }
}

/* What the tops hold fixed, for a title: "32 layers", "gain 1, width 64". */
static void fixed_values(const vp_sweep_top *tops, varying v, char *buf, size_t size)
{
    const vp_sweep_point *p = &tops[0].point;
    int used = 0;
    buf[0] = '\0';
    if (!v.layers)
        used = snprintf(buf, size, "%zu layer%s", p->layers, p->layers == 1 ? "" : "s");
    if (!v.gain && used >= 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, "%sgain %.6g", used ? ", " : "", p->gain);
    if (!v.width && p->width && used >= 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, ", width %zu", p->width);
}

/* Tics that read: a factor of 2 along a log axis from the first value, or
 * at most six steps of a power of two along the depth (beside a key that
 * notes coinciding lines, eight crowd their labels); every swept value has
 * a tic of its own besides (VP_AXIS_X_SWEPT). */
static void sweep_tics(vp_panel *panel, const vp_sweep_top *tops, size_t n, vp_sweep_axis x)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const double v = axis_value(&tops[i].point, x);
        if (x == VP_SWEEP_WIDTH && v == 0.0)
            continue; /* the closed form: no width of its own */
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (!(hi > lo))
        return;
    if (axes[x].flags & VP_AXIS_LOG_X) {
        if (hi / lo <= 256.0) {
            panel->x_tic_start = lo;
            panel->x_tic_step = 2;
        }
        return;
    }
    double step = 1;
    while ((hi - lo) / step > 6)
        step *= 2;
    panel->x_tic_step = step;
}

/* A line that ends far above the others (none's stream reaches 1e38) would
 * squeeze them into the bottom of a log panel: the axis stops at the power
 * of ten above the tame lines, and the title says where each runaway leaves
 * it and how high it goes. "Far": 30 times the median line's top. */
static vp_status cut_runaways(vp_panel *panel, const char *x_name, vp_error *err)
{
    enum { FAR = 30 };
    const size_t n = panel->n_series;
    if (n < 3)
        return VP_OK;
    double limit, tame, top;
    vp_status status = plot_tame_top(panel, FAR, &limit, &tame, &top, err);
    if (status != VP_OK || !(tame > 0.0) || top <= limit)
        return status;
    const double cut = pow(10.0, ceil(log10(1.25 * tame)));
    char title[512];
    int used = snprintf(title, sizeof title, "%s", panel->title);
    for (size_t i = 0; i < n; i++) {
        const vp_series *s = &panel->series[i];
        size_t leaves = s->n, highest = 0;
        for (size_t j = 0; j < s->n; j++) {
            if (s->y[j] > cut && leaves == s->n)
                leaves = j;
            if (s->y[j] > s->y[highest])
                highest = j;
        }
        if (leaves == s->n || used < 0 || (size_t)used >= sizeof title)
            continue;
        used += snprintf(title + used, sizeof title - (size_t)used,
                         " (%s leaves the axis at %s %.2g; %.2g at %.3g)", s->label, x_name,
                         s->x[leaves], s->y[highest], s->x[highest]);
    }
    panel->y_max = cut;
    return plot_replace_text(&panel->title, title, err);
}

static vp_status add_panel(vp_figure *figure, const vp_sweep_top *tops, size_t n, vp_sweep_axis x,
                           vp_plot_quantity quantity, const char *title, int show_key,
                           vp_error *err)
{
    vp_panel *panel;
    vp_status status = vp_figure_add_panel(
        figure, title ? title : quantities[quantity].title, axes[x].label,
        quantities[quantity].y_label, axes[x].flags | VP_AXIS_LOG_Y | VP_AXIS_X_SWEPT, &panel, err);
    if (status != VP_OK)
        return status;
    panel->show_key = show_key;
    sweep_tics(panel, tops, n, x);
    const varying v = what_varies(tops, n);
    /* each top opens its line unless an earlier top has opened it */
    for (size_t i = 0; i < n && status == VP_OK; i++) {
        size_t first = 0;
        while (!same_line(&tops[first], &tops[i], x))
            first++;
        if (first != i)
            continue;
        char label[128];
        line_label(&tops[i], x, v, label, sizeof label);
        vp_series *series;
        status = vp_panel_add_series(panel, label, (int)tops[i].point.placement,
                                     1 + (int)tops[i].top.engine, VP_SERIES_LINE, n, &series, err);
        for (size_t j = i; j < n && status == VP_OK; j++) {
            const double y = top_value(&tops[j].top, quantity);
            if (!same_line(&tops[i], &tops[j], x) || !isfinite(y) || !(y > 0.0))
                continue;
            if (x == VP_SWEEP_WIDTH && tops[j].point.width == 0)
                /* the closed form, the infinite-width limit: level at every width */
                status = add_at_every_width(series, tops, n, y, err);
            else
                status =
                    vp_series_add_point(series, axis_value(&tops[j].point, x), y, 0.0, 0.0, err);
        }
        if (status == VP_OK)
            sort_by_x(series);
    }
    static const char *const x_names[] = {"g =", "L =", "d ="};
    return status == VP_OK ? cut_runaways(panel, x_names[x], err) : status;
}

vp_status vp_plot_sweep(const vp_sweep_top *tops, size_t n, vp_sweep_axis x,
                        vp_plot_quantity quantity, const char *title, vp_figure **out,
                        vp_error *err)
{
    *out = NULL;
    if (!tops || n == 0)
        return vp_fail(err, VP_EINVAL, "nothing to plot: no sweep given");
    if ((unsigned)quantity > VP_QUANTITY_SHARE || (unsigned)x > VP_SWEEP_WIDTH)
        return vp_fail(err, VP_EINVAL, "unknown quantity %d or axis %d", (int)quantity, (int)x);
    for (size_t i = 0; i < n; i++)
        if ((unsigned)tops[i].point.placement >= VP_PLACEMENT_COUNT)
            return vp_fail(err, VP_EINVAL, "sweep top %zu has no placement", i + 1);
    /* without a title, what was held fixed makes one */
    char made[256];
    if (!title) {
        char fixed[128];
        fixed_values(tops, what_varies(tops, n), fixed, sizeof fixed);
        snprintf(made, sizeof made, "%s%s%s",
                 quantity == VP_QUANTITY_ALL ? "the top of the stack" : quantities[quantity].title,
                 fixed[0] ? ", " : "", fixed);
        title = made;
    }
    // one panel: the title is the panel's, not said twice
    vp_figure *figure = vp_figure_alloc(quantity == VP_QUANTITY_ALL ? title : NULL);
    if (!figure)
        return vp_fail(err, VP_ENOMEM, "no memory for a figure");
    vp_status status = VP_OK;
    if (quantity == VP_QUANTITY_ALL) {
        for (int q = VP_QUANTITY_STREAM; q <= VP_QUANTITY_SHARE && status == VP_OK; q++)
            status = add_panel(figure, tops, n, x, (vp_plot_quantity)q, NULL,
                               q == VP_QUANTITY_STREAM, err);
    } else {
        status = add_panel(figure, tops, n, x, quantity, title && *title ? title : NULL, 1, err);
    }
    if (status != VP_OK) {
        vp_figure_free(figure);
        return status;
    }
    *out = figure;
    return VP_OK;
}
