/* --plot, --plot-script and --quantity: the profile drawn through gnuplot. */
#include <string.h>

#include "commands.h"
#include "output_file.h"
#include "terminal_width.h"
#include "sys/atomic_file.h"
#include "varprof/parse.h"
#include "varprof/plot.h"

/* "W,H": two numbers and nothing else. */
static int parse_size(const char *text, double *width, double *height)
{
    const char *comma = strchr(text, ',');
    if (!comma || comma == text || strchr(comma + 1, ','))
        return 0;
    char first[64];
    const size_t n = (size_t)(comma - text);
    if (n >= sizeof first)
        return 0;
    memcpy(first, text, n);
    first[n] = '\0';
    return vp_parse_double(first, width, NULL) == VP_OK &&
           vp_parse_double(comma + 1, height, NULL) == VP_OK;
}

int read_plot_size(const cli_args *args, vp_plot_format format, vp_plot_target *target)
{
    const int png = format == VP_PLOT_PNG;
    const char *allowed = png ? "W,H in pixels for .png, 100 to 10000 each"
                              : "W,H in inches for .pdf and .svg, 1 to 50 each";
    vp_error err;
    if (args->given[OPT_SIZE]) {
        double w, h;
        if (!parse_size(args->value[OPT_SIZE], &w, &h))
            return cli_usage_error("--size: '%s' is not two numbers W,H; allowed: %s",
                                   args->value[OPT_SIZE], allowed);
        if (vp_plot_check_size(format, w, h, 0.0, &err) != VP_OK)
            return cli_usage_error("--size: %s", err.message);
        target->width = w;
        target->height = h;
    }
    if (args->given[OPT_FONT_SIZE]) {
        double pt;
        if (vp_parse_double(args->value[OPT_FONT_SIZE], &pt, &err) != VP_OK)
            return cli_usage_error("--font-size: '%s' is not a number of points; allowed: %g to "
                                   "%g",
                                   args->value[OPT_FONT_SIZE], VP_PLOT_MIN_FONT_PT,
                                   VP_PLOT_MAX_FONT_PT);
        if (vp_plot_check_size(format, 0.0, 0.0, pt, &err) != VP_OK)
            return cli_usage_error("--font-size: %s", err.message);
        target->font_size = pt;
    }
    return EXIT_OK;
}

/* grad and weight-grad are the backward half's, per sub-block: they need
 * --grad, and a sweep, which draws each stack's top, has no such figure. */
static int check_grad_quantity(const cli_args *args, vp_plot_quantity quantity)
{
    if (quantity != VP_QUANTITY_GRAD && quantity != VP_QUANTITY_WEIGHT_GRAD)
        return EXIT_OK;
    if (!args->given[OPT_GRAD])
        return cli_usage_error("--quantity %s draws the backward half; add --grad",
                               args->value[OPT_QUANTITY]);
    static const option_id lists[] = {OPT_LAYERS, OPT_GAIN, OPT_WIDTH};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        if (args->given[lists[i]] && strchr(args->value[lists[i]], ','))
            return cli_usage_error("--quantity %s is drawn per sub-block, but the list in %s "
                                   "makes a sweep, drawn by its tops; choose stream, update, "
                                   "share or all",
                                   args->value[OPT_QUANTITY], cli_option_name(lists[i]));
    return EXIT_OK;
}

int check_plot_options(const cli_args *args)
{
    vp_error err;
    static const option_id needs_plot[] = {OPT_SIZE, OPT_FONT_SIZE, OPT_X_AXIS, OPT_NO_TITLE};
    for (size_t i = 0; i < sizeof needs_plot / sizeof *needs_plot; i++)
        if (args->given[needs_plot[i]] && !args->given[OPT_PLOT])
            return cli_usage_error("%s styles the figure that --plot draws; give --plot too",
                                   cli_option_name(needs_plot[i]));
    if (args->given[OPT_X_AXIS]) {
        vp_plot_x_axis x_axis;
        if (vp_plot_x_axis_parse(args->value[OPT_X_AXIS], &x_axis, &err) != VP_OK)
            return cli_usage_error("--x: %s", err.message);
    }
    if (args->given[OPT_PLOT_SCRIPT] && !args->given[OPT_PLOT])
        return cli_usage_error("--plot-script writes the script that --plot FILE runs; give "
                               "--plot too");
    if (args->given[OPT_QUANTITY] && !args->given[OPT_PLOT])
        return cli_usage_error("--quantity chooses what --plot draws; give --plot too");
    if (args->given[OPT_QUANTITY]) {
        vp_plot_quantity quantity;
        if (vp_plot_quantity_parse(args->value[OPT_QUANTITY], &quantity, &err) != VP_OK)
            return cli_usage_error("--quantity: %s", err.message);
        int rc = check_grad_quantity(args, quantity);
        if (rc != EXIT_OK)
            return rc;
    }
    if (args->given[OPT_PLOT]) {
        vp_plot_format format;
        if (vp_plot_format_for_path(args->value[OPT_PLOT], &format, &err) != VP_OK)
            return cli_usage_error("--plot: %s", err.message);
        if (vp_plot_check_text(args->value[OPT_PLOT], "the --plot file name", &err) != VP_OK)
            return cli_usage_error("--plot: %s", err.message);
        vp_plot_target size = {0};
        int rc = read_plot_size(args, format, &size);
        if (rc != EXIT_OK)
            return rc;
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

int plot_profiles(const cli_args *args, const vp_profile *const *profiles, size_t count,
                  const char *title)
{
    vp_error err;
    vp_plot_x_axis x_axis = VP_X_LAYER;
    if (args->given[OPT_X_AXIS])
        vp_plot_x_axis_parse(args->value[OPT_X_AXIS], &x_axis, &err);
    vp_figure *figure;
    if (vp_plot_profiles_on(profiles, count, quantity_asked(args), x_axis, title, &figure, &err) !=
        VP_OK)
        return cli_runtime_error("--plot: %s", err.message);
    return plot_figure(args, figure);
}

int plot_sweep_tops(const cli_args *args, const vp_sweep_top *tops, size_t count, vp_sweep_axis x)
{
    vp_error err;
    vp_figure *figure;
    if (vp_plot_sweep(tops, count, x, quantity_asked(args), NULL, &figure, &err) != VP_OK)
        return cli_runtime_error("--plot: %s", err.message);
    return plot_figure(args, figure);
}

int plot_figure(const cli_args *args, vp_figure *figure)
{
    vp_error err;
    if (strcmp(args->value[OPT_PLOT], "-") == 0)
        figure->text_columns = terminal_columns();
    vp_plot_target target = {.path = args->value[OPT_PLOT],
                             .force = args->given[OPT_FORCE],
                             .no_title = args->given[OPT_NO_TITLE]};
    vp_plot_format format;
    int rc = vp_plot_format_for_path(target.path, &format, &err) == VP_OK
                 ? read_plot_size(args, format, &target)
                 : EXIT_USAGE; // checked before the work: not reached
    if (args->given[OPT_PLOT_SCRIPT])
        rc = write_script(args, figure, &target);
    vp_status status;
    if (rc == EXIT_OK && (status = vp_plot_run(figure, &target, &err)) != VP_OK)
        rc = cli_library_error("--plot", status, &err);
    vp_figure_free(figure);
    return rc;
}
