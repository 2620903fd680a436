/* varprof figures: regenerate the chapter's figure set. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "progress_line.h"
#include "varprof/figures.h"
#include "varprof/plot.h"

int run_figures(const cli_args *args)
{
    static const char *const formats[] = {"svg", "png", "pdf", NULL};
    int format = 0;
    int rc = cli_choice(args, OPT_FIGURE_FORMAT, formats, &format);
    if (rc != EXIT_OK)
        return rc;
    const char *outdir = args->given[OPT_OUTDIR] ? args->value[OPT_OUTDIR] : "plots";
    if (!*outdir)
        return cli_usage_error("--outdir: an empty name is not a folder");
    vp_error why;
    if (vp_plot_check_text(outdir, "the --outdir name", &why) != VP_OK)
        return cli_usage_error("--outdir: %s", why.message);
    char probe[16];
    snprintf(probe, sizeof probe, "x.%s", formats[format]);
    vp_plot_format plot_format;
    vp_plot_format_for_path(probe, &plot_format, &why);
    vp_plot_target size = {0};
    if ((rc = read_plot_size(args, plot_format, &size)) != EXIT_OK)
        return rc;
    const char *scripts = args->given[OPT_FIGURE_SCRIPTS] ? args->value[OPT_FIGURE_SCRIPTS] : NULL;
    if (scripts && !*scripts)
        return cli_usage_error("--plot-script: an empty name is not a folder");
    if (scripts && vp_plot_check_text(scripts, "the --plot-script folder name", &why) != VP_OK)
        return cli_usage_error("--plot-script: %s", why.message);
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST)
        return cli_runtime_error("cannot make the folder %s: %s", outdir, strerror(errno));
    /* the figure set is generated: regenerating it replaces it */
    vp_figures_options opts = {.outdir = outdir,
                               .extension = formats[format],
                               .force = 1,
                               .width = size.width,
                               .height = size.height,
                               .font_size = size.font_size,
                               .script_dir = scripts,
                               .no_title = args->given[OPT_NO_TITLE]};
    vp_error err;
    progress_line line;
    progress_line_init(&line, args);
    const int training = args->given[OPT_TRAINING];
    opts.progress = progress_line_begin(&line, training ? "training figures" : "figures");
    opts.threads = default_threads();
    const vp_status status =
        training ? vp_training_figures_write(&opts, &err) : vp_figures_write_with(&opts, &err);
    progress_line_end(&line);
    if (status != VP_OK)
        return cli_runtime_error("figures: %s", err.message);
    size_t n;
    const vp_figure_info *list = training ? vp_training_figures_list(&n) : vp_figures_list(&n);
    for (size_t i = 0; i < n; i++)
        printf("%s/%s.%s\n", outdir, list[i].name, formats[format]);
    for (size_t i = 0; scripts && i < n; i++)
        printf("%s/%s.gp\n", scripts, list[i].name);
    /* a write that failed earlier leaves the error flag, not a failing flush */
    return fflush(stdout) == 0 && !ferror(stdout)
               ? EXIT_OK
               : cli_runtime_error("cannot write to standard output");
}
