/* Training runs drawn: each run's loss against the step on a log axis, and
 * for a sweep along one axis the final loss against it, one line per
 * placement (include/varprof/train_output.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "varprof/placement.h"
#include "varprof/plot.h"
#include "varprof/train_output.h"

/* The one swept axis besides the placement, or -1 for none or several. */
enum { AXIS_LR, AXIS_WARMUP, AXIS_LAYERS, AXIS_SEED };

static double axis_value(const vp_train_job *j, int axis)
{
    switch (axis) {
    case AXIS_LR: return j->train.lr;
    case AXIS_WARMUP: return (double)j->train.warmup;
    case AXIS_LAYERS: return (double)j->config.layers;
    default: return (double)j->network.seed;
    }
}

static int swept_axis(const vp_train_job *jobs, size_t n)
{
    int found = -1;
    for (int axis = AXIS_LR; axis <= AXIS_SEED; axis++) {
        int varies = 0;
        for (size_t i = 1; i < n; i++)
            varies |= axis_value(&jobs[i], axis) != axis_value(&jobs[0], axis);
        if (varies && found >= 0)
            return -1;
        if (varies)
            found = axis;
    }
    return found;
}

static void label_of(char *label, size_t size, const vp_train_job *j, int axis)
{
    const char *name = vp_placement_traits_of(j->config.placement)->display_name;
    if (axis == AXIS_LR)
        snprintf(label, size, "%s, lr %g", name, j->train.lr);
    else if (axis == AXIS_WARMUP)
        snprintf(label, size, "%s, warm-up %zu", name, j->train.warmup);
    else if (axis == AXIS_LAYERS)
        snprintf(label, size, "%s, %zu layers", name, j->config.layers);
    else if (axis == AXIS_SEED)
        snprintf(label, size, "%s, seed %llu", name, j->network.seed);
    else
        snprintf(label, size, "%s, L %zu, lr %g, warm-up %zu, seed %llu", name, j->config.layers,
                 j->train.lr, j->train.warmup, j->network.seed);
}

static vp_status loss_panel(vp_figure *figure, const vp_train_job *jobs, size_t n, int axis,
                            vp_error *err)
{
    vp_panel *panel;
    vp_status status = vp_figure_add_panel(figure, "", "step", "loss", VP_AXIS_LOG_Y, &panel, err);
    int dashes[VP_PLACEMENT_COUNT] = {0};
    for (size_t i = 0; i < n && status == VP_OK; i++) {
        const vp_train_job *j = &jobs[i];
        const vp_train_result *r = j->result;
        char label[160];
        label_of(label, sizeof label, j, n > 1 ? axis : AXIS_SEED + 1);
        if (r->diverged)
            snprintf(label + strlen(label), sizeof label - strlen(label), " (diverged at %zu)",
                     r->diverged_at);
        vp_series *series;
        const int colour = (int)j->config.placement;
        status = vp_panel_add_series(panel, label, colour, 1 + dashes[colour]++ % 5, VP_SERIES_LINE,
                                     r->steps_run, &series, err);
        for (size_t s = 0; s < r->steps_run && status == VP_OK; s++)
            if (isfinite(r->steps[s].loss) && r->steps[s].loss > 0.0)
                status = vp_series_add_point(series, (double)s, r->steps[s].loss, 0, 0, err);
    }
    return status;
}

static vp_status final_panel(vp_figure *figure, const vp_train_job *jobs, size_t n, int axis,
                             vp_error *err)
{
    static const char *const names[] = {"learning rate", "warm-up steps", "layers", "seed"};
    vp_panel *panel;
    const unsigned log_x = axis == AXIS_LR ? VP_AXIS_LOG_X : 0;
    vp_status status = vp_figure_add_panel(figure, "", names[axis], "final loss",
                                           VP_AXIS_LOG_Y | VP_AXIS_X_SWEPT | log_x, &panel, err);
    if (status == VP_OK)
        panel->show_key = 0; /* its colours are the placements', keyed above */
    for (int p = 0; p < VP_PLACEMENT_COUNT && status == VP_OK; p++) {
        vp_series *series = NULL;
        for (size_t i = 0; i < n && status == VP_OK; i++) {
            const vp_train_job *j = &jobs[i];
            const vp_train_result *r = j->result;
            if ((int)j->config.placement != p || r->diverged || r->steps_run == 0)
                continue;
            if (!series)
                status = vp_panel_add_series(
                    panel, vp_placement_traits_of(j->config.placement)->display_name, p, 1,
                    VP_SERIES_LINE, n, &series, err);
            const double loss = r->steps[r->steps_run - 1].loss;
            if (status == VP_OK && loss > 0.0)
                status = vp_series_add_point(series, axis_value(j, axis), loss, 0, 0, err);
        }
    }
    return status;
}

vp_status vp_plot_layer_grads(const vp_layer_grad_map *maps, size_t n, vp_figure **out,
                              vp_error *err)
{
    *out = NULL;
    if (n == 0 || n > VP_PLOT_MAX_PANELS)
        return vp_fail(err, VP_EINVAL, "%zu maps of layer gradients; a figure holds 1 to %d", n,
                       VP_PLOT_MAX_PANELS);
    vp_figure *figure = vp_figure_alloc("");
    if (!figure)
        return vp_fail(err, VP_ENOMEM, "no memory for a figure");
    vp_status status = VP_OK;
    for (size_t m = 0; m < n && status == VP_OK; m++) {
        const vp_layer_grad_map *map = &maps[m];
        vp_panel *panel;
        vp_series *cells;
        status = vp_figure_add_panel(figure, map->label, "step", "layer", 0, &panel, err);
        if (status == VP_OK && map->steps * map->layers == 0)
            status = vp_fail(err, VP_EINVAL, "map '%s' has no cells", map->label);
        if (status == VP_OK) {
            panel->show_key = 0;
            status = vp_panel_add_series(panel, "gradient norm", 0, 1, VP_SERIES_HEATMAP,
                                         map->steps * map->layers, &cells, err);
        }
        for (size_t s = 0; s < map->steps && status == VP_OK; s++)
            for (size_t l = 0; l < map->layers && status == VP_OK; l++)
                status = vp_series_add_cell(cells, (double)s, (double)l,
                                            map->grad[s * map->layers + l], err);
    }
    if (status != VP_OK) {
        vp_figure_free(figure);
        return status;
    }
    for (size_t m = 0; m + 1 < n; m++) /* one x axis, named under the last panel */
        figure->panels[m].x_label[0] = '\0';
    *out = figure;
    return VP_OK;
}

vp_status vp_plot_training(const vp_train_job *jobs, size_t n, vp_figure **out, vp_error *err)
{
    *out = NULL;
    vp_figure *figure = vp_figure_alloc("");
    if (!figure)
        return vp_fail(err, VP_ENOMEM, "no memory for a figure");
    const int axis = swept_axis(jobs, n);
    vp_status status = loss_panel(figure, jobs, n, axis, err);
    if (status == VP_OK && axis >= 0)
        status = final_panel(figure, jobs, n, axis, err);
    if (status != VP_OK) {
        vp_figure_free(figure);
        return status;
    }
    *out = figure;
    return VP_OK;
}
