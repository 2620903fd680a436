/* varprof figures: regenerate the chapter's figure set. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
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
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST)
        return cli_runtime_error("cannot make the folder %s: %s", outdir, strerror(errno));
    /* the figure set is generated: regenerating it replaces it */
    vp_error err;
    if (vp_figures_write(outdir, formats[format], 1, &err) != VP_OK)
        return cli_runtime_error("figures: %s", err.message);
    size_t n;
    const vp_figure_info *list = vp_figures_list(&n);
    for (size_t i = 0; i < n; i++)
        printf("%s/%s.%s\n", outdir, list[i].name, formats[format]);
    return fflush(stdout) == 0 ? EXIT_OK : cli_runtime_error("cannot write to standard output");
}
