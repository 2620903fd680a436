/* Profiles drawn into a figure: stream size, update ratio and embedding
 * share against the sub-block, one series per profile. */
#include "varprof/plot.h"
#include "plot/plot_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/name_table.h"

static const char *const quantity_names[] = {
    [VP_QUANTITY_ALL] = "all",       [VP_QUANTITY_STREAM] = "stream",
    [VP_QUANTITY_UPDATE] = "update", [VP_QUANTITY_SHARE] = "share",
    [VP_QUANTITY_GRAD] = "grad",     [VP_QUANTITY_WEIGHT_GRAD] = "weight-grad"};
_Static_assert(sizeof quantity_names / sizeof *quantity_names == VP_QUANTITY_WEIGHT_GRAD + 1,
               "a new vp_plot_quantity needs a name in quantity_names (plot/profile_series.c)");

static const char *const x_axis_names[] = {[VP_X_LAYER] = "layer", [VP_X_SUB_BLOCK] = "sub-block"};

vp_status vp_plot_quantity_parse(const char *name, vp_plot_quantity *out, vp_error *err)
{
    const int q = name_table_find(NAME_LIST(quantity_names), name);
    if (q >= 0) {
        *out = (vp_plot_quantity)q;
        return VP_OK;
    }
    /* the list in the order the manual gives them, "all" after the three it draws */
    return vp_fail(err, VP_EINVAL,
                   "unknown quantity '%s'; valid: stream, update, share, all, grad, weight-grad",
                   name ? name : "");
}

/* One value of a row, with its bounds where sampled; 0 when absent there. */
typedef struct {
    double y, lo, hi;
} value;

static int get_value(const vp_profile *profile, size_t k, vp_plot_quantity quantity, value *v)
{
    const vp_row *row = &profile->rows[k];
    const double root_v0 = sqrt(profile->config.embedding_var);
    switch (quantity) {
    case VP_QUANTITY_STREAM:
        *v = (value){vp_profile_stream_size(profile, k), sqrt(row->stream_var_lo) / root_v0,
                     sqrt(row->stream_var_hi) / root_v0};
        return 1;
    case VP_QUANTITY_UPDATE:
        *v = (value){row->update_ratio, row->update_ratio_lo, row->update_ratio_hi};
        return k >= 1;
    case VP_QUANTITY_SHARE:
        *v = (value){row->embedding_share, row->embedding_share_lo, row->embedding_share_hi};
        // 0 means it underflowed double: absent, not zero, on a log axis
        return row->embedding_share > 0.0;
    case VP_QUANTITY_GRAD:
        *v = (value){vp_profile_grad_size(profile, k), row->grad_size_lo, row->grad_size_hi};
        return (profile->fields & VP_HAS_GRAD) != 0;
    case VP_QUANTITY_WEIGHT_GRAD:
        *v = (value){row->weight_grad, row->weight_grad_lo, row->weight_grad_hi};
        return k >= 1 && (profile->fields & VP_HAS_GRAD) != 0;
    case VP_QUANTITY_ALL: break;
    }
    return 0;
}

vp_status vp_plot_x_axis_parse(const char *name, vp_plot_x_axis *out, vp_error *err)
{
    const int x = name_table_find(NAME_LIST(x_axis_names), name);
    if (x >= 0) {
        *out = (vp_plot_x_axis)x;
        return VP_OK;
    }
    char valid[64];
    name_table_list(NAME_LIST(x_axis_names), valid, sizeof valid);
    return vp_fail(err, VP_EINVAL, "unknown x axis '%s'; valid: %s", name ? name : "", valid);
}

/* Axis labels are gnuplot enhanced text: v_k is v with k below. No space
 * follows a subscript: librsvg drops a space that starts an SVG <tspan>. */
static const struct {
    const char *title, *y_label;
    unsigned flags;
} quantities[] = {
    [VP_QUANTITY_STREAM] = {"stream size", "sqrt(v_k/v_0)", 0},
    [VP_QUANTITY_UPDATE] = {"update ratio", "u_k", VP_AXIS_LOG_Y},
    [VP_QUANTITY_SHARE] = {"embedding share", "e_k", VP_AXIS_LOG_Y},
    [VP_QUANTITY_GRAD] = {"gradient size", "sqrt(G_k/G_K)", VP_AXIS_LOG_Y},
    [VP_QUANTITY_WEIGHT_GRAD] = {"weight gradient", "RMS(dL/do_k) RMS(h_k)", VP_AXIS_LOG_Y},
};

/* A profile's sub-blocks in a layer: 1 for parallel and MLP-only layers. */
static size_t per_layer(const vp_profile *profile)
{
    return profile->config.mlp_only ? 1 : vp_sub_blocks_per_layer(profile->config.placement);
}

static int several_engines(const vp_profile *const *profiles, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (profiles[i]->engine != profiles[0]->engine)
            return 1;
    return 0;
}

/* "layer (attention at k - 1/2, MLP at k)" on the layer axis. */
static void layer_x_label(const vp_profile *const *profiles, size_t n, char *buf, size_t size)
{
    size_t halves = 0;
    for (size_t i = 0; i < n; i++)
        halves += per_layer(profiles[i]) == 2;
    snprintf(buf, size, "%s", halves ? "layer (attention at k - 1/2, MLP at k)" : "layer");
}

/* What was computed, for a figure without a title of its own: "stream size:
 * 32 layers, gain 1, closed form", with what the profiles share, and the
 * engines and sampled widths in turn. */
static void computed_title(const vp_profile *const *profiles, size_t n, const char *quantity,
                           char *buf, size_t size)
{
    int same_layers = 1, same_gain = 1, any_file = 0, any_loaded = 0;
    for (size_t i = 0; i < n; i++) {
        same_layers &= profiles[i]->config.layers == profiles[0]->config.layers;
        same_gain &= profiles[i]->config.gain == profiles[0]->config.gain;
        any_file |= profiles[i]->gains_from_file;
        /* loaded weights have no gain set: theirs are measured */
        any_loaded |= profiles[i]->sampling.method == VP_SAMPLING_LOADED;
    }
    int used = snprintf(buf, size, "%s%s", quantity, quantity[0] ? ": " : "");
    if (same_layers && used >= 0 && (size_t)used < size)
        used +=
            snprintf(buf + used, size - (size_t)used, "%zu layers, ", profiles[0]->config.layers);
    if (used >= 0 && (size_t)used < size) {
        if (any_loaded)
            used += snprintf(buf + used, size - (size_t)used, "weights from a file, ");
        else if (any_file)
            used += snprintf(buf + used, size - (size_t)used, "gains from a file, ");
        else if (same_gain)
            used +=
                snprintf(buf + used, size - (size_t)used, "gain %g, ", profiles[0]->config.gain);
    }
    int seen[VP_ENGINE_COUNT] = {0};
    for (size_t i = 0; i < n && used >= 0 && (size_t)used < size; i++) {
        const vp_engine e = profiles[i]->engine;
        if ((unsigned)e >= VP_ENGINE_COUNT || seen[e]++)
            continue;
        used += snprintf(
            buf + used, size - (size_t)used, "%s%s",
            seen[VP_ENGINE_CLOSED] + seen[VP_ENGINE_MC] + seen[VP_ENGINE_FORWARD] > 1 ? ", " : "",
            vp_engine_title(e));
        if (e != VP_ENGINE_CLOSED && used >= 0 && (size_t)used < size)
            used += snprintf(buf + used, size - (size_t)used, " (width %zu)",
                             profiles[i]->sampling.width);
    }
}

/* "sub-block (2 per layer)", or what the profiles have in common, and
 * whether the minor tics are layers. */
static void x_label(const vp_profile *const *profiles, size_t n, int minor_is_layer, char *buf,
                    size_t size)
{
    /* placements of one sub-block a layer (parallel), named where mixed with others */
    size_t single = 0;
    const char *single_name = "";
    for (size_t i = 0; i < n; i++) {
        const vp_placement p = profiles[i]->config.placement;
        if (vp_sub_blocks_per_layer(p) == 1 && single++ == 0)
            single_name = vp_placement_name(p);
    }
    char mixed[64] = "";
    if (single > 0 && single < n)
        snprintf(mixed, sizeof mixed, ", %s 1", single_name);
    snprintf(buf, size, "sub-block (%s per layer%s%s)", single == n ? "1" : "2", mixed,
             minor_is_layer ? "; a minor tic a layer" : "");
}

/* Major tics on layer boundaries, about eight of them, a minor tic a layer;
 * on the layer axis a unit is a layer, on the sub-block axis the most
 * sub-blocks a layer has. */
static void layer_tics(vp_panel *panel, const vp_profile *const *profiles, size_t n,
                       vp_plot_x_axis x_axis)
{
    size_t spl_max = 1, layers = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t spl = per_layer(profiles[i]);
        const size_t l = (profiles[i]->sub_blocks + spl - 1) / spl;
        spl_max = spl > spl_max ? spl : spl_max;
        layers = l > layers ? l : layers;
    }
    const size_t unit = x_axis == VP_X_LAYER ? 1 : spl_max;
    static const size_t nice[] = {1, 2, 4, 5, 8, 10, 16, 20, 25, 50, 100};
    size_t step = 0;
    for (size_t i = 0; i < sizeof nice / sizeof nice[0] && !step; i++)
        if (layers <= 8 * nice[i])
            step = nice[i];
    if (!step)
        return; // very deep: gnuplot's own tics read better
    panel->x_tic_step = (double)(step * unit);
    // a minor tic a layer only while they stay apart
    panel->x_minor_tics = layers <= 64 ? (int)step : 0;
}

/* Cuts a linear axis above the tame curves when some end far above them:
 * "far" is 20 times the median curve's top. */
static vp_status cut_runaways(vp_panel *panel, vp_error *err)
{
    enum { FAR = 20 };
    const size_t n = panel->n_series;
    if (n < 3 || (panel->flags & VP_AXIS_LOG_Y))
        return VP_OK;
    double limit, tame, highest;
    vp_status status = plot_tame_top(panel, FAR, &limit, &tame, &highest, err);
    if (status != VP_OK || !(tame > 0.0))
        return status;
    char title[256];
    int used = snprintf(title, sizeof title, "%s (off the top:", panel->title);
    size_t runaways = 0;
    for (size_t i = 0; i < n && used > 0 && (size_t)used < sizeof title; i++) {
        const vp_series *s = &panel->series[i];
        const double top = plot_series_max(s);
        if (top <= limit)
            continue;
        size_t name_len = strcspn(s->label, ",");
        used += snprintf(title + used, sizeof title - (size_t)used, "%s %.*s to %.3g",
                         runaways++ ? ";" : "", (int)name_len, s->label, top);
    }
    if (runaways == 0)
        return VP_OK;
    if (used > 0 && (size_t)used + 1 < sizeof title)
        // NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy) the room is checked above
        strcat(title, ")");
    panel->y_max = 1.25 * tame;
    return plot_replace_text(&panel->title, title, err);
}

vp_status plot_profiles_panel(vp_figure *figure, const vp_profile *const *profiles, size_t n,
                              vp_plot_quantity quantity, vp_plot_x_axis x_axis, const char *title,
                              int show_key, vp_error *err)
{
    vp_panel *panel;
    vp_status status =
        vp_figure_add_panel(figure, title ? title : quantities[quantity].title, NULL,
                            quantities[quantity].y_label, quantities[quantity].flags, &panel, err);
    if (status != VP_OK)
        return status;
    panel->show_key = show_key;
    panel->x_from_zero = 1; // the update ratio starts at sub-block 1: panels stay aligned
    layer_tics(panel, profiles, n, x_axis);
    char xl[96];
    if (x_axis == VP_X_LAYER)
        layer_x_label(profiles, n, xl, sizeof xl);
    else
        x_label(profiles, n, panel->x_minor_tics > 1, xl, sizeof xl);
    if ((status = plot_replace_text(&panel->x_label, xl, err)) != VP_OK)
        return status;
    const int log_y = (quantities[quantity].flags & VP_AXIS_LOG_Y) != 0;
    const int engines = several_engines(profiles, n);
    for (size_t i = 0; i < n; i++) {
        const vp_profile *profile = profiles[i];
        const int band = (profile->fields & VP_HAS_BOUNDS) != 0;
        const double x_scale = x_axis == VP_X_LAYER ? 1.0 / (double)per_layer(profile) : 1.0;
        char label[96];
        snprintf(label, sizeof label, "%s%s%s",
                 vp_placement_display_name(profile->config.placement), engines ? ", " : "",
                 engines ? vp_engine_title(profile->engine) : "");
        vp_series *series;
        status = vp_panel_add_series(
            panel, label, (int)profile->config.placement, 1 + (int)profile->engine,
            band ? VP_SERIES_BAND : VP_SERIES_LINE, profile->n_rows, &series, err);
        if (status != VP_OK)
            return status;
        for (size_t k = 0; k < profile->n_rows; k++) {
            value v;
            if (!get_value(profile, k, quantity, &v) || !isfinite(v.y) || (log_y && !(v.y > 0.0)))
                continue;
            if (band && (!isfinite(v.lo) || !isfinite(v.hi) || (log_y && !(v.lo > 0.0))))
                v.lo = v.hi = v.y; // no usable bounds here: the band closes on the line
            vp_series_add_point(series, (double)k * x_scale, v.y, v.lo, v.hi, NULL);
        }
    }
    return quantity == VP_QUANTITY_STREAM ? cut_runaways(panel, err) : VP_OK;
}

vp_status vp_plot_profiles(const vp_profile *const *profiles, size_t n, vp_plot_quantity quantity,
                           const char *title, vp_figure **out, vp_error *err)
{
    return vp_plot_profiles_on(profiles, n, quantity, VP_X_LAYER, title, out, err);
}

vp_status vp_plot_profiles_on(const vp_profile *const *profiles, size_t n,
                              vp_plot_quantity quantity, vp_plot_x_axis x_axis, const char *title,
                              vp_figure **out, vp_error *err)
{
    *out = NULL;
    if (!profiles || n == 0)
        return vp_fail(err, VP_EINVAL, "nothing to plot: no profiles given");
    if ((unsigned)quantity > VP_QUANTITY_WEIGHT_GRAD)
        return vp_fail(err, VP_EINVAL, "unknown quantity %d", (int)quantity);
    if (x_axis != VP_X_LAYER && x_axis != VP_X_SUB_BLOCK)
        return vp_fail(err, VP_EINVAL, "unknown x axis %d", (int)x_axis);
    for (size_t i = 0; i < n; i++)
        if (!profiles[i] || profiles[i]->n_rows == 0 ||
            (unsigned)profiles[i]->config.placement >= VP_PLACEMENT_COUNT)
            return vp_fail(err, VP_EINVAL, "profile %zu is empty or has no placement", i + 1);
    // without a title of its own, the figure says what was computed
    char computed[256];
    if (!title || !*title) {
        computed_title(profiles, n, quantity == VP_QUANTITY_ALL ? "" : quantities[quantity].title,
                       computed, sizeof computed);
        title = computed;
    }
    // one panel: the title is the panel's, not said twice
    vp_figure *figure = vp_figure_alloc(quantity == VP_QUANTITY_ALL ? title : NULL);
    if (!figure)
        return vp_fail(err, VP_ENOMEM, "no memory for a figure");
    vp_status status = VP_OK;
    if (quantity == VP_QUANTITY_ALL) {
        for (int q = VP_QUANTITY_STREAM; q <= VP_QUANTITY_SHARE && status == VP_OK; q++)
            status = plot_profiles_panel(figure, profiles, n, (vp_plot_quantity)q, x_axis, NULL,
                                         q == VP_QUANTITY_STREAM, err);
        // the panels share their x axis: it is named once, under the last
        for (size_t p = 0; p + 1 < figure->n_panels && status == VP_OK; p++)
            figure->panels[p].x_label[0] = '\0';
    } else {
        status = plot_profiles_panel(figure, profiles, n, quantity, x_axis, title, 1, err);
    }
    if (status != VP_OK) {
        vp_figure_free(figure);
        return status;
    }
    *out = figure;
    return VP_OK;
}
