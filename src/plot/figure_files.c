/* A figure of a set drawn to its file, OUTDIR/NAME.EXT, and its script
 * beside it where asked: what the chapter's figures and the training
 * figures share. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plot/plot_internal.h"
#include "varprof/figures.h"

/* Writes the figure's script as script_dir/NAME.gp, replacing an older one:
 * scripts are generated, as the figures are. */
static vp_status write_script(const vp_figure *figure, const vp_figures_options *opts,
                              const char *name, const vp_plot_target *target, vp_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s.gp", opts->script_dir, name) >= (int)sizeof path)
        return vp_fail(err, VP_EINVAL, "script folder name '%s' is too long", opts->script_dir);
    FILE *out = fopen(path, "w");
    if (!out)
        return vp_fail(err, VP_EIO, "cannot write '%s': %s", path, strerror(errno));
    vp_status status = vp_plot_write_script(out, figure, target, err);
    if (fclose(out) != 0 && status == VP_OK)
        status = vp_fail(err, VP_EIO, "cannot write '%s': %s", path, strerror(errno));
    if (status != VP_OK)
        (void)remove(path); // a partial script is worse than none
    return status;
}

vp_status plot_draw_named(const vp_figure *figure, const vp_figures_options *opts, const char *name,
                          vp_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s.%s", opts->outdir, name, opts->extension) >=
        (int)sizeof path)
        return vp_fail(err, VP_EINVAL, "output folder name '%s' is too long", opts->outdir);
    vp_plot_target target = {.path = path,
                             .force = opts->force,
                             .width = opts->width,
                             .height = opts->height,
                             .font_size = opts->font_size,
                             .no_title = opts->no_title};
    if (opts->script_dir) {
        vp_status status = write_script(figure, opts, name, &target, err);
        if (status != VP_OK)
            return status;
    }
    return vp_plot_run(figure, &target, err);
}
