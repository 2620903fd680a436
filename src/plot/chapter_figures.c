/* The chapter's figures: profiles and sweeps of the closed form, drawn, and
 * the comparisons of the three engines, forward and backward. */
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
#include "varprof/sweep.h"
#include "plot/plot_internal.h"
#include "sys/progress_meter.h"

#define CHAPTER_LAYERS 32

static const vp_figure_info figures[] = {
    {"stream-gain1", "Stream size sqrt(v_k/v_0) against the layer for every placement, 32 "
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
    {"gradient", "Gradient size sqrt(G_k/G_K) and weight gradient per layer, pre-norm against "
                 "Post-LN: in the closed form pre-norm's gradient reaches the embedding at "
                 "sqrt(65) = 8.06 times the top's and its weight gradient falls to 1/sqrt(65) = "
                 "0.124, while Post-LN's stay at 1 and 1/sqrt(2); the network's Post-LN gradient, "
                 "which the idealisation misses, falls to 0.48 by layer 28 and is 3.9 at the "
                 "embedding."},
};
enum { N_FIGURES = sizeof figures / sizeof figures[0] };

const vp_figure_info *vp_figures_list(size_t *n)
{
    *n = N_FIGURES;
    return figures;
}

/* (a) to (d): every placement's profile at 32 layers, one quantity. */
static vp_status profile_figure(const vp_figures_options *opts, const char *name, const char *title,
                                double gain, vp_plot_quantity quantity, vp_error *err)
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
                                     "2^{-32}: Post-LN at 32 layers", err);
    if (status == VP_OK)
        status = plot_draw_named(figure, opts, name, err);
    vp_figure_free(figure);
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
        vp_profile_free(profiles[p]);
    return status;
}

/* (g) the closed form against the Monte Carlo, at a width small enough for
 * the finite-width share of Post-LN to stand out of its band. */
#define COMPARISON_WIDTH 64
#define COMPARISON_TRIALS 4096

static vp_status comparison_figure(const vp_figures_options *opts, vp_error *err)
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
        status = plot_draw_named(figure, opts, "mc-comparison", err);
    vp_figure_free(figure);
    for (size_t i = 0; i < 4; i++)
        vp_profile_free(profiles[i]);
    return status;
}

/* (h) the three engines side by side on one real network's shape. */
#define FORWARD_WIDTH 256

static vp_status forward_figure(const vp_figures_options *opts, vp_error *err)
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
        status = plot_draw_named(figure, opts, "forward-comparison", err);
    vp_figure_free(figure);
    for (size_t i = 0; i < 6; i++)
        vp_profile_free(profiles[i]);
    return status;
}

/* (i) the backward half per layer, one figure of two panels so that the
 * cause (the gradient reaching a layer) and its consequence (that layer's
 * weight gradient) share one x axis and one legend. Above, the gradient's
 * size from the closed form, the Monte Carlo (its full method: the reduced
 * one has no gradients) and the forward-comparison network run backward on
 * the idealisation's loss, the random one; below, the weight gradient from
 * the closed form and the Monte Carlo alone. The network's weight gradient
 * also carries the RMS of its map's input, GELU's output or attention's,
 * which the idealisation takes to be 1: it alternates sub-block by
 * sub-block by a factor that says nothing about depth, and would hide
 * Xiong's point among crossing curves. 1024 tokens keep the set quick (the
 * full method's time grows with the tokens), and the band still parts
 * Post-LN's 1.1 at the embedding from 1. */
#define GRADIENT_TRIALS 1024
/* one line: the legend names the engines, the caption the network's shape */
#define GRADIENT_TITLE "gradients: 32 layers, gain 1, width 256, random loss"

/* Pre-norm's two figures the text quotes, marked on their panels from the
 * closed form's own rows: sqrt(v_K) at the embedding, 1/sqrt(v_K) for the
 * last branch's weight gradient. */
static vp_status mark_pre_norm(vp_figure *figure, const vp_profile *pre_norm, vp_error *err)
{
    const double v_top = pre_norm->rows[pre_norm->n_rows - 1].stream_var;
    char label[64];
    snprintf(label, sizeof label, "sqrt(%.0f) = %.3g", v_top, sqrt(v_top));
    vp_status status = vp_panel_add_marker(&figure->panels[0], sqrt(v_top), label, err);
    snprintf(label, sizeof label, "1/sqrt(%.0f) = %.3g", v_top, 1.0 / sqrt(v_top));
    if (status == VP_OK)
        status = vp_panel_add_marker(&figure->panels[1], 1.0 / sqrt(v_top), label, err);
    return status;
}

static vp_status gradient_figure(const vp_figures_options *opts, vp_error *err)
{
    const vp_placement placements[] = {VP_PRE_NORM, VP_POST_LN};
    vp_profile *profiles[6] = {NULL};
    vp_figure *figure = NULL;
    vp_status status = VP_OK;
    vp_mc_options mc;
    vp_mc_options_init(&mc);
    mc.width = FORWARD_WIDTH;
    mc.method = VP_MC_FULL;
    mc.trials = GRADIENT_TRIALS;
    vp_forward_options fw;
    vp_forward_options_init(&fw);
    fw.width = FORWARD_WIDTH;
    fw.loss = VP_LOSS_RANDOM;
    for (size_t i = 0; i < 2 && status == VP_OK; i++) {
        vp_config cfg;
        vp_config_init(&cfg, placements[i], CHAPTER_LAYERS);
        cfg.grad = 1;
        status = vp_closed_profile(&cfg, &profiles[3 * i], err);
        if (status == VP_OK)
            status = vp_mc_profile(&cfg, &mc, &profiles[3 * i + 1], err);
        if (status == VP_OK)
            status = vp_forward_profile(&cfg, &fw, &profiles[3 * i + 2], err);
    }
    if (status == VP_OK && !(figure = vp_figure_alloc(GRADIENT_TITLE)))
        status = vp_fail(err, VP_ENOMEM, "no memory for a figure");
    if (status == VP_OK)
        status = plot_profiles_panel(figure, (const vp_profile *const *)profiles, 6,
                                     VP_QUANTITY_GRAD, VP_X_LAYER, NULL, 1, err);
    if (status == VP_OK) {
        const vp_profile *idealised[] = {profiles[0], profiles[1], profiles[3], profiles[4]};
        status = plot_profiles_panel(figure, idealised, 4, VP_QUANTITY_WEIGHT_GRAD, VP_X_LAYER,
                                     NULL, 0, err);
    }
    if (status == VP_OK)
        status = mark_pre_norm(figure, profiles[0], err);
    if (status == VP_OK) {
        figure->panels[0].x_label[0] = '\0'; // one x axis, named under the last panel
        status = plot_draw_named(figure, opts, "gradient", err);
    }
    vp_figure_free(figure);
    for (size_t i = 0; i < 6; i++)
        vp_profile_free(profiles[i]);
    return status;
}

/* (e) and (f): the top of the stack against the gain or the depth, made as
 * the program makes them (varprof(1), SWEEPS, shows the commands):
 *
 *     varprof --placement all --layers 32 --quantity stream --plot F \
 *         --gain 0.25,0.3,0.35,0.42,0.5,0.59,0.71,0.84,1,1.19,1.41,1.68,2,2.38,2.83,3.36,4
 *     varprof --placement all --quantity stream --plot F \
 *         --layers 1,2,4,6,8,12,16,24,32,48,64,96,128
 *
 * the same combinations (vp_sweep), the same closed-form configuration and
 * the same figure (vp_plot_sweep). */
/* a factor of 2^(1/4) a step, as typed */
static const double sweep_gains[] = {0.25, 0.3,  0.35, 0.42, 0.5,  0.59, 0.71, 0.84, 1,
                                     1.19, 1.41, 1.68, 2,    2.38, 2.83, 3.36, 4};
static const size_t sweep_depths[] = {1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};

typedef enum { SWEEP_GAIN_FIGURE, SWEEP_DEPTH_FIGURE } sweep_kind;

static vp_status sweep_figure(const vp_figures_options *opts, sweep_kind kind, vp_error *err)
{
    const int gain_sweep = kind == SWEEP_GAIN_FIGURE;
    vp_placement placements[VP_PLACEMENT_COUNT];
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
        placements[p] = (vp_placement)p;
    static const double one_gain = 1.0;
    static const size_t chapter_layers = CHAPTER_LAYERS, no_width = 0;
    const vp_sweep sweep = {
        .placements = placements,
        .n_placements = VP_PLACEMENT_COUNT,
        .gains = gain_sweep ? sweep_gains : &one_gain,
        .n_gains = gain_sweep ? sizeof sweep_gains / sizeof *sweep_gains : 1,
        .layers = gain_sweep ? &chapter_layers : sweep_depths,
        .n_layers = gain_sweep ? 1 : sizeof sweep_depths / sizeof *sweep_depths,
        .widths = &no_width,
        .n_widths = 1,
    };
    size_t n;
    vp_status status = vp_sweep_count(&sweep, &n, err);
    if (status != VP_OK)
        return status;
    vp_sweep_top *tops = calloc(n, sizeof *tops);
    if (!tops)
        return vp_fail(err, VP_ENOMEM, "no memory for a sweep");
    for (size_t i = 0; i < n && status == VP_OK; i++) {
        tops[i].point = vp_sweep_point_at(&sweep, i);
        vp_config cfg;
        vp_config_init(&cfg, tops[i].point.placement, tops[i].point.layers);
        cfg.gain = tops[i].point.gain;
        vp_profile *profile;
        status = vp_closed_profile(&cfg, &profile, err);
        if (status == VP_OK)
            tops[i].top = vp_profile_get_top(profile);
        vp_profile_free(profile);
    }
    vp_figure *figure = NULL;
    if (status == VP_OK)
        status =
            vp_plot_sweep(tops, n, vp_sweep_x_axis(&sweep), VP_QUANTITY_STREAM, NULL, &figure, err);
    if (status == VP_OK)
        status = plot_draw_named(figure, opts, gain_sweep ? "gain-sweep" : "depth-sweep", err);
    vp_figure_free(figure);
    free(tops);
    return status;
}

vp_status vp_figures_write(const char *outdir, const char *extension, int force, vp_error *err)
{
    const vp_figures_options opts = {.outdir = outdir, .extension = extension, .force = force};
    return vp_figures_write_with(&opts, err);
}

vp_status vp_figures_write_with(const vp_figures_options *opts, vp_error *err)
{
    const char *outdir = opts->outdir, *extension = opts->extension;

    if (!outdir || !*outdir)
        return vp_fail(err, VP_EINVAL, "no output folder given");
    if (!extension || (strcmp(extension, "svg") != 0 && strcmp(extension, "png") != 0 &&
                       strcmp(extension, "pdf") != 0))
        return vp_fail(err, VP_EINVAL, "unknown figure format '%s'; valid: svg, png, pdf",
                       extension ? extension : "");
    vp_plot_format format = VP_PLOT_SVG;
    char probe[16];
    snprintf(probe, sizeof probe, "x.%s", extension);
    vp_status status = vp_plot_format_for_path(probe, &format, err);
    if (status == VP_OK)
        status = vp_plot_check_size(format, opts->width, opts->height, opts->font_size, err);
    if (status == VP_OK)
        status = vp_plot_check_text(outdir, "the output folder name", err);
    if (status == VP_OK && opts->script_dir)
        status = vp_plot_check_text(opts->script_dir, "the script folder name", err);
    if (status != VP_OK)
        return status;
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST)
        return vp_fail(err, VP_EIO, "cannot make folder '%s': %s", outdir, strerror(errno));
    if (opts->script_dir && mkdir(opts->script_dir, 0777) != 0 && errno != EEXIST)
        return vp_fail(err, VP_EIO, "cannot make folder '%s': %s", opts->script_dir,
                       strerror(errno));

    progress_meter meter;
    progress_meter_start(&meter, opts->progress, N_FIGURES);
    status = progress_meter_count(
        &meter, profile_figure(opts, "stream-gain1", "stream size: 32 layers, gain 1, closed form",
                               1.0, VP_QUANTITY_STREAM, err));
    if (status == VP_OK)
        status = progress_meter_count(&meter,
                                      profile_figure(opts, "stream-gain2",
                                                     "stream size: 32 layers, gain 2, closed form",
                                                     2.0, VP_QUANTITY_STREAM, err));
    if (status == VP_OK)
        status = progress_meter_count(
            &meter, profile_figure(opts, "share", "embedding share: 32 layers, gain 1, closed form",
                                   1.0, VP_QUANTITY_SHARE, err));
    if (status == VP_OK)
        status = progress_meter_count(
            &meter, profile_figure(opts, "update", "update ratio: 32 layers, gain 1, closed form",
                                   1.0, VP_QUANTITY_UPDATE, err));
    if (status == VP_OK)
        status = progress_meter_count(&meter, sweep_figure(opts, SWEEP_GAIN_FIGURE, err));
    if (status == VP_OK)
        status = progress_meter_count(&meter, sweep_figure(opts, SWEEP_DEPTH_FIGURE, err));
    if (status == VP_OK)
        status = progress_meter_count(&meter, comparison_figure(opts, err));
    if (status == VP_OK)
        status = progress_meter_count(&meter, forward_figure(opts, err));
    if (status == VP_OK)
        status = progress_meter_count(&meter, gradient_figure(opts, err));
    progress_meter_finish(&meter);
    return status;
}

vp_status vp_figures_write_markdown(FILE *out, const char *dir, const char *extension,
                                    vp_error *err)
{
    for (size_t i = 0; i < N_FIGURES; i++)
        fprintf(out, "![%s](%s/%s.%s)\n", figures[i].caption, dir, figures[i].name, extension);
    return ferror(out) ? vp_fail(err, VP_EIO, "cannot write the list of figures") : VP_OK;
}
