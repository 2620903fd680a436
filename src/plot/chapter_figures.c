/* The chapter's figures: profiles and sweeps of the closed form, drawn. */
#include "varprof/figures.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "varprof/closed.h"
#include "varprof/forward.h"
#include "varprof/mc.h"
#include "varprof/plot.h"

#define CHAPTER_LAYERS 32
#define SWEEP_GAINS 40
#define SWEEP_GAIN_MIN 0.25
#define SWEEP_GAIN_MAX 4.0
#define SWEEP_MAX_LAYERS 128

static const vp_figure_info figures[] = {
    {"stream-gain1", "Stream size sqrt(v_k/v_0) against sub-block for every placement, 32 "
                     "layers, gain 1."},
    {"stream-gain2", "The same at gain 2: pre-norm's stream doubles, output-norm's does not "
                     "move."},
    {"share", "Embedding share e_k on a log axis; Post-LN's 2^-32 at 32 layers is marked."},
    {"update", "Update ratio u_k on a log axis."},
    {"gain-sweep", "Stream size at the top of a 32-layer stack against the gain, 0.25 to 4."},
    {"depth-sweep", "Stream size at the top of the stack against depth, 1 to 128 layers, "
                    "gain 1."},
    {"mc-comparison", "Closed form (solid) against Monte Carlo (dashed, with 95 % bands) for "
                      "pre-norm and Post-LN at width 64: Post-LN's share sits above the "
                      "infinite-width limit."},
    {"forward-comparison", "Closed form, Monte Carlo and the forward pass of a random-weight "
                           "network (width 256, 8 heads, gain init) for pre-norm and Post-LN: "
                           "attention's averaging over positions lowers its gain."},
};
enum { N_FIGURES = sizeof figures / sizeof figures[0] };

const vp_figure_info *vp_figures_list(size_t *n)
{
    *n = N_FIGURES;
    return figures;
}

/* The top of a closed-form stack's stream size; NAN when it overflowed. */
static vp_status top_stream_size(vp_placement placement, size_t layers, double gain, double *out,
                                 vp_error *err)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.gain = gain;
    vp_profile *profile;
    vp_status status = vp_closed_profile(&cfg, &profile, err);
    if (status != VP_OK)
        return status;
    *out = profile->overflow_at ? NAN : vp_profile_stream_size(profile, profile->sub_blocks);
    vp_profile_free(profile);
    return VP_OK;
}

static vp_status draw(const vp_figure *figure, const char *outdir, const char *name,
                      const char *extension, int force, vp_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s.%s", outdir, name, extension) >= (int)sizeof path)
        return vp_fail(err, VP_EINVAL, "output folder name '%s' is too long", outdir);
    vp_plot_target target = {.path = path, .force = force};
    return vp_plot_run(figure, &target, err);
}

/* (a) to (d): every placement's profile at 32 layers, one quantity. */
static vp_status profile_figure(const char *outdir, const char *extension, int force,
                                const char *name, const char *title, double gain,
                                vp_plot_quantity quantity, vp_error *err)
{
    vp_profile *profiles[VP_PLACEMENT_COUNT] = {NULL};
    vp_figure *figure = NULL;
    vp_status status = VP_OK;
    for (int p = 0; p < VP_PLACEMENT_COUNT && status == VP_OK; p++) {
        vp_config cfg;
        vp_config_init(&cfg, (vp_placement)p, CHAPTER_LAYERS);
        cfg.gain = gain;
        status = vp_closed_profile(&cfg, &profiles[p], err);
    }
    if (status == VP_OK)
        status = vp_plot_profiles((const vp_profile *const *)profiles, VP_PLACEMENT_COUNT, quantity,
                                  title, &figure, err);
    if (status == VP_OK && quantity == VP_QUANTITY_SHARE)
        status = vp_panel_add_marker(&figure->panels[0], ldexp(1.0, -32),
                                     "2^-32: post-ln at 32 layers", err);
    if (status == VP_OK)
        status = draw(figure, outdir, name, extension, force, err);
    vp_figure_free(figure);
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
        vp_profile_free(profiles[p]);
    return status;
}

/* (g) the closed form against the Monte Carlo, at a width small enough for
 * the finite-width share of Post-LN to stand out of its band. */
#define COMPARISON_WIDTH 64
#define COMPARISON_TRIALS 4096

static vp_status comparison_figure(const char *outdir, const char *extension, int force,
                                   vp_error *err)
{
    const vp_placement placements[] = {VP_PRE_NORM, VP_POST_LN};
    vp_profile *profiles[4] = {NULL};
    vp_figure *figure = NULL;
    vp_status status = VP_OK;
    vp_mc_options mc;
    vp_mc_options_init(&mc);
    mc.width = COMPARISON_WIDTH;
    mc.trials = COMPARISON_TRIALS;
    for (size_t i = 0; i < 2 && status == VP_OK; i++) {
        vp_config cfg;
        vp_config_init(&cfg, placements[i], CHAPTER_LAYERS);
        status = vp_closed_profile(&cfg, &profiles[2 * i], err);
        if (status == VP_OK)
            status = vp_mc_profile(&cfg, &mc, &profiles[2 * i + 1], err);
    }
    if (status == VP_OK)
        status = vp_plot_profiles((const vp_profile *const *)profiles, 4, VP_QUANTITY_ALL,
                                  "closed form against Monte Carlo (width 64, 4096 tokens, "
                                  "LayerNorm, seed 1), 32 layers, gain 1",
                                  &figure, err);
    if (status == VP_OK)
        status = draw(figure, outdir, "mc-comparison", extension, force, err);
    vp_figure_free(figure);
    for (size_t i = 0; i < 4; i++)
        vp_profile_free(profiles[i]);
    return status;
}

/* (h) the three engines side by side on one real network's shape. */
#define FORWARD_WIDTH 256

static vp_status forward_figure(const char *outdir, const char *extension, int force, vp_error *err)
{
    const vp_placement placements[] = {VP_PRE_NORM, VP_POST_LN};
    vp_profile *profiles[6] = {NULL};
    vp_figure *figure = NULL;
    vp_status status = VP_OK;
    vp_mc_options mc;
    vp_mc_options_init(&mc);
    mc.width = FORWARD_WIDTH;
    vp_forward_options fw;
    vp_forward_options_init(&fw);
    fw.width = FORWARD_WIDTH;
    for (size_t i = 0; i < 2 && status == VP_OK; i++) {
        vp_config cfg;
        vp_config_init(&cfg, placements[i], CHAPTER_LAYERS);
        status = vp_closed_profile(&cfg, &profiles[3 * i], err);
        if (status == VP_OK)
            status = vp_mc_profile(&cfg, &mc, &profiles[3 * i + 1], err);
        if (status == VP_OK)
            status = vp_forward_profile(&cfg, &fw, &profiles[3 * i + 2], err);
    }
    if (status == VP_OK)
        status = vp_plot_profiles((const vp_profile *const *)profiles, 6, VP_QUANTITY_ALL,
                                  "closed form, Monte Carlo, a random network (d 256, 8 heads, "
                                  "2 x 64 tokens), 32 layers, gain 1",
                                  &figure, err);
    if (status == VP_OK)
        status = draw(figure, outdir, "forward-comparison", extension, force, err);
    vp_figure_free(figure);
    for (size_t i = 0; i < 6; i++)
        vp_profile_free(profiles[i]);
    return status;
}

/* (e) and (f): the top of the stack against the gain or the depth. */
typedef enum { SWEEP_GAIN, SWEEP_DEPTH } sweep_kind;

/* The sweeps' y axis stops here, so that `none`, which leaves it, does not
 * squeeze every other curve into the bottom of the panel; the title says where. */
#define SWEEP_Y_CUT 100.0

/* The curve that leaves the top of a sweep: where it leaves, how high it goes. */
typedef struct {
    const char *placement_name;
    double x, top_x, top_y;
} cut_curve;

static vp_status name_the_cut(vp_panel *panel, int gain_sweep, const cut_curve *c, vp_error *err)
{
    char title[512];
    snprintf(title, sizeof title, "%s (%s leaves the axis at %s %.2g; %.2g at %.3g)", panel->title,
             c->placement_name, gain_sweep ? "g =" : "L =", c->x, c->top_y, c->top_x);
    char *copy = strdup(title);
    if (!copy)
        return vp_fail(err, VP_ENOMEM, "no memory for a title");
    free(panel->title);
    panel->title = copy;
    return VP_OK;
}

static vp_status sweep_figure(const char *outdir, const char *extension, int force, sweep_kind kind,
                              vp_error *err)
{
    const int gain_sweep = kind == SWEEP_GAIN;
    vp_figure *figure = vp_figure_alloc(NULL);
    if (!figure)
        return vp_fail(err, VP_ENOMEM, "no memory for a figure");
    vp_panel *panel;
    vp_status status = vp_figure_add_panel(
        figure,
        gain_sweep ? "stream size at the top of 32 layers" : "stream size at the top, gain 1",
        gain_sweep ? "branch gain g (log)" : "layers L", "sqrt(v_K / v_0) (log)",
        gain_sweep ? VP_AXIS_LOG_X | VP_AXIS_LOG_Y : VP_AXIS_LOG_Y, &panel, err);
    if (status == VP_OK && !gain_sweep) {
        panel->x_tic_step = 16;
        panel->x_minor_tics = 2;
    }
    if (status == VP_OK && gain_sweep) {
        panel->x_tic_start = SWEEP_GAIN_MIN;
        panel->x_tic_step = 2; /* a factor on the log axis: 0.25, 0.5, 1, 2, 4 */
    }
    if (status == VP_OK)
        panel->y_max = SWEEP_Y_CUT; /* none grows past 1e38; the others stay below 20 */
    const size_t points = gain_sweep ? SWEEP_GAINS : SWEEP_MAX_LAYERS;
    cut_curve leaving = {0};
    for (int p = 0; p < VP_PLACEMENT_COUNT && status == VP_OK; p++) {
        vp_series *series;
        status = vp_panel_add_series(panel, vp_placement_name((vp_placement)p), p, 1,
                                     VP_SERIES_LINE, points, &series, err);
        for (size_t i = 0; i < points && status == VP_OK; i++) {
            // log-spaced gains, both ends exact
            const double x = gain_sweep ? SWEEP_GAIN_MIN * pow(SWEEP_GAIN_MAX / SWEEP_GAIN_MIN,
                                                               (double)i / (double)(points - 1))
                                        : (double)(i + 1);
            double y;
            status = top_stream_size((vp_placement)p, gain_sweep ? CHAPTER_LAYERS : i + 1,
                                     gain_sweep ? x : 1.0, &y, err);
            if (status == VP_OK && isfinite(y) && y > 0.0) // an overflow is left out
                status = vp_series_add_point(series, x, y, 0.0, 0.0, err);
            if (status == VP_OK && y > SWEEP_Y_CUT && (vp_placement)p == VP_NO_NORM &&
                !leaving.placement_name) {
                leaving.placement_name = vp_placement_name((vp_placement)p);
                leaving.x = x;
            }
            if (status == VP_OK && y > SWEEP_Y_CUT && (vp_placement)p == VP_NO_NORM) {
                leaving.top_x = x;
                leaving.top_y = y;
            }
        }
    }
    if (status == VP_OK && leaving.placement_name)
        status = name_the_cut(panel, gain_sweep, &leaving, err);
    if (status == VP_OK)
        status =
            draw(figure, outdir, gain_sweep ? "gain-sweep" : "depth-sweep", extension, force, err);
    vp_figure_free(figure);
    return status;
}

vp_status vp_figures_write(const char *outdir, const char *extension, int force, vp_error *err)
{
    if (!outdir || !*outdir)
        return vp_fail(err, VP_EINVAL, "no output folder given");
    if (!extension || (strcmp(extension, "svg") != 0 && strcmp(extension, "png") != 0 &&
                       strcmp(extension, "pdf") != 0))
        return vp_fail(err, VP_EINVAL, "unknown figure format '%s'; valid: svg, png, pdf",
                       extension ? extension : "");
    vp_status status = vp_plot_check_text(outdir, "the output folder name", err);
    if (status != VP_OK)
        return status;
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST)
        return vp_fail(err, VP_EIO, "cannot make folder '%s': %s", outdir, strerror(errno));

    status = profile_figure(outdir, extension, force, "stream-gain1",
                            "stream size, 32 layers, gain 1", 1.0, VP_QUANTITY_STREAM, err);
    if (status == VP_OK)
        status = profile_figure(outdir, extension, force, "stream-gain2",
                                "stream size, 32 layers, gain 2", 2.0, VP_QUANTITY_STREAM, err);
    if (status == VP_OK)
        status = profile_figure(outdir, extension, force, "share",
                                "embedding share, 32 layers, gain 1", 1.0, VP_QUANTITY_SHARE, err);
    if (status == VP_OK)
        status = profile_figure(outdir, extension, force, "update",
                                "update ratio, 32 layers, gain 1", 1.0, VP_QUANTITY_UPDATE, err);
    if (status == VP_OK)
        status = sweep_figure(outdir, extension, force, SWEEP_GAIN, err);
    if (status == VP_OK)
        status = sweep_figure(outdir, extension, force, SWEEP_DEPTH, err);
    if (status == VP_OK)
        status = comparison_figure(outdir, extension, force, err);
    if (status == VP_OK)
        status = forward_figure(outdir, extension, force, err);
    return status;
}

vp_status vp_figures_write_markdown(FILE *out, const char *dir, const char *extension,
                                    vp_error *err)
{
    for (size_t i = 0; i < N_FIGURES; i++)
        fprintf(out, "![%s](%s/%s.%s)\n", figures[i].caption, dir, figures[i].name, extension);
    return ferror(out) ? vp_fail(err, VP_EIO, "cannot write the list of figures") : VP_OK;
}
