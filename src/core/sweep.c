/* A sweep's combinations: how many, and the i-th in the one order every
 * output and figure walks. */
#include "varprof/sweep.h"

#include <stdint.h>

vp_status vp_sweep_count(const vp_sweep *sweep, size_t *count, vp_error *err)
{
    const size_t lengths[] = {sweep->n_placements, sweep->n_gains, sweep->n_layers,
                              sweep->n_widths};
    const char *const names[] = {"placements", "gains", "layers", "widths"};
    size_t total = 1;
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        if (lengths[i] == 0)
            return vp_fail(err, VP_EINVAL, "a sweep needs at least one of each: no %s given",
                           names[i]);
        /* saturated, so that the count said is never a wrapped one */
        total = total > SIZE_MAX / lengths[i] ? SIZE_MAX : total * lengths[i];
    }
    if (total > VP_SWEEP_MAX_COMBINATIONS)
        return vp_fail(err, VP_EINVAL,
                       "%zu placement%s x %zu gain%s x %zu depth%s x %zu width%s make %zu "
                       "combinations, more than the %d one run takes; split the sweep",
                       sweep->n_placements, sweep->n_placements == 1 ? "" : "s", sweep->n_gains,
                       sweep->n_gains == 1 ? "" : "s", sweep->n_layers,
                       sweep->n_layers == 1 ? "" : "s", sweep->n_widths,
                       sweep->n_widths == 1 ? "" : "s", total, VP_SWEEP_MAX_COMBINATIONS);
    *count = total;
    return VP_OK;
}

vp_sweep_point vp_sweep_point_at(const vp_sweep *sweep, size_t i)
{
    vp_sweep_point p;
    p.width = sweep->widths[i % sweep->n_widths];
    i /= sweep->n_widths;
    p.layers = sweep->layers[i % sweep->n_layers];
    i /= sweep->n_layers;
    p.gain = sweep->gains[i % sweep->n_gains];
    i /= sweep->n_gains;
    p.placement = sweep->placements[i % sweep->n_placements];
    return p;
}

int vp_sweep_varies(const vp_sweep *sweep, vp_sweep_axis axis)
{
    switch (axis) {
    case VP_SWEEP_GAIN: return sweep->n_gains > 1;
    case VP_SWEEP_LAYERS: return sweep->n_layers > 1;
    case VP_SWEEP_WIDTH: return sweep->n_widths > 1;
    }
    return 0;
}

vp_sweep_axis vp_sweep_x_axis(const vp_sweep *sweep)
{
    if (vp_sweep_varies(sweep, VP_SWEEP_GAIN))
        return VP_SWEEP_GAIN;
    if (vp_sweep_varies(sweep, VP_SWEEP_LAYERS))
        return VP_SWEEP_LAYERS;
    if (vp_sweep_varies(sweep, VP_SWEEP_WIDTH))
        return VP_SWEEP_WIDTH;
    return VP_SWEEP_GAIN;
}
