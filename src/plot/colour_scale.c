/* The scale of a figure's colour maps (vp_plot_layer_grads). */
#include <math.h>

#include "plot/plot_internal.h"

/* A colour map's scale: log, one range for every map of the figure (so that
 * their colours compare), a perceptually even palette from dark blue to
 * yellow (viridis's ends and midpoints), its bar beside the panel, labelled
 * with the map's label. */
vp_status plot_write_colour_scale(FILE *out, const vp_figure *figure, const vp_panel *panel,
                                  vp_error *err)
{
    double lo = INFINITY, hi = 0.0;
    const char *label = "";
    const plot_precision z = plot_z_precision(figure);
    for (size_t p = 0; p < figure->n_panels; p++)
        for (size_t i = 0; i < figure->panels[p].n_series; i++) {
            const vp_series *s = &figure->panels[p].series[i];
            if (s->style != VP_SERIES_HEATMAP)
                continue;
            for (size_t k = 0; k < s->n; k++)
                if (plot_drawable(&figure->panels[p], s, k)) {
                    lo = fmin(lo, plot_rounded(z, s->z[k]));
                    hi = fmax(hi, plot_rounded(z, s->z[k]));
                }
        }
    for (size_t i = 0; i < panel->n_series && !*label; i++)
        if (panel->series[i].style == VP_SERIES_HEATMAP)
            label = panel->series[i].label;
    fputs("set logscale cb 10\n", out);
    if (hi > 0.0 && lo < hi) {
        fprintf(out, "set cbrange [%.17g:%.17g]\n", lo, hi);
        plot_write_log_tics(out, "cb", lo, hi, VP_PLOT_SVG); // never text: it draws no map
    } else
        fputs("set cbrange [*:*]\nset format cb '%g'\nset cbtics autofreq\n", out);
    fputs("set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', "
          "4 '#fde725')\n"
          "set colorbox vertical user origin graph 1.02, graph 0 size graph 0.03, graph 1\n"
          "set style fill solid 1 noborder\n"        /* the bar's colours as the map's, not faded */
          "set autoscale xfix\nset autoscale yfix\n" /* the axes end with the cells */
          "set cblabel ",
          out);
    vp_status status = plot_write_quoted(out, label, "a colour map's label", err);
    fputs(" noenhanced\n", out);
    return status;
}
