/* --plot, --plot-script and --quantity: the profile drawn through gnuplot. */
#include <string.h>

#include "commands.h"
#include "output_file.h"
#include "sys/atomic_file.h"
#include "varprof/plot.h"

int check_plot_options(const cli_args *args)
{
    vp_error err;
    if (args->given[OPT_PLOT_SCRIPT] && !args->given[OPT_PLOT])
        return cli_usage_error("--plot-script writes the script that --plot FILE runs; give "
                               "--plot too");
    if (args->given[OPT_QUANTITY] && !args->given[OPT_PLOT])
        return cli_usage_error("--quantity chooses what --plot draws; give --plot too");
    if (args->given[OPT_QUANTITY]) {
        vp_plot_quantity quantity;
        if (vp_plot_quantity_parse(args->value[OPT_QUANTITY], &quantity, &err) != VP_OK)
            return cli_usage_error("--quantity: %s", err.message);
    }
    if (args->given[OPT_PLOT]) {
        vp_plot_format format;
        if (vp_plot_format_for_path(args->value[OPT_PLOT], &format, &err) != VP_OK)
            return cli_usage_error("--plot: %s", err.message);
        if (vp_plot_check_text(args->value[OPT_PLOT], "the --plot file name", &err) != VP_OK)
            return cli_usage_error("--plot: %s", err.message);
    }
    /* said before the work, as for --output, by the rule that writes them */
    static const option_id files[] = {OPT_PLOT, OPT_PLOT_SCRIPT};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        const char *path = args->value[files[i]];
        vp_status status;
        if (args->given[files[i]] && strcmp(path, "-") != 0 &&
            (status = atomic_file_check(path, args->given[OPT_FORCE], NULL, &err)) != VP_OK)
            return cli_library_error(NULL, status, &err);
    }
    return EXIT_OK;
}

static int write_script(const cli_args *args, const vp_figure *figure, const vp_plot_target *target)
{
    output_file out;
    int rc = output_open(&out, args->value[OPT_PLOT_SCRIPT], args->given[OPT_FORCE]);
    if (rc != EXIT_OK)
        return rc;
    vp_error err;
    if (vp_plot_write_script(out.stream, figure, target, &err) != VP_OK) {
        output_abort(&out);
        return cli_runtime_error("--plot-script: %s", err.message);
    }
    return output_commit(&out);
}

static vp_plot_quantity quantity_asked(const cli_args *args)
{
    vp_plot_quantity quantity = VP_QUANTITY_ALL;
    vp_error err;
    if (args->given[OPT_QUANTITY])
        vp_plot_quantity_parse(args->value[OPT_QUANTITY], &quantity, &err);
    return quantity;
}

static int draw_figure(const cli_args *args, vp_figure *figure);

int plot_profiles(const cli_args *args, const vp_profile *const *profiles, size_t count,
                  const char *title)
{
    vp_error err;
    vp_figure *figure;
    if (vp_plot_profiles(profiles, count, quantity_asked(args), title, &figure, &err) != VP_OK)
        return cli_runtime_error("--plot: %s", err.message);
    return draw_figure(args, figure);
}

int plot_sweep_tops(const cli_args *args, const vp_sweep_top *tops, size_t count, vp_sweep_axis x)
{
    vp_error err;
    vp_figure *figure;
    if (vp_plot_sweep(tops, count, x, quantity_asked(args), NULL, &figure, &err) != VP_OK)
        return cli_runtime_error("--plot: %s", err.message);
    return draw_figure(args, figure);
}

/* Writes the script if asked, runs gnuplot, and frees the figure. */
static int draw_figure(const cli_args *args, vp_figure *figure)
{
    vp_error err;
    vp_plot_target target = {.path = args->value[OPT_PLOT], .force = args->given[OPT_FORCE]};
    int rc = EXIT_OK;
    if (args->given[OPT_PLOT_SCRIPT])
        rc = write_script(args, figure, &target);
    vp_status status;
    if (rc == EXIT_OK && (status = vp_plot_run(figure, &target, &err)) != VP_OK)
        rc = cli_library_error("--plot", status, &err);
    vp_figure_free(figure);
    return rc;
}
