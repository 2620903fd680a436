/* Figures through gnuplot: a small figure model, profiles drawn into it, a
 * self-contained gnuplot script written from it, and gnuplot run on it.
 *
 *     vp_figure *fig;
 *     vp_plot_profiles(profiles, n, VP_QUANTITY_ALL, NULL, &fig, &err);
 *     vp_plot_target target = {.path = "fig.svg"};
 *     vp_plot_run(fig, &target, &err);     // or vp_plot_write_script(file, fig, &target, &err)
 *     vp_figure_free(fig);
 *
 * A figure is 1..VP_PLOT_MAX_PANELS panels stacked vertically; a panel holds
 * series (a legend label, a colour, a dash, x and y, and for sampled data a
 * band from lo to hi) and horizontal marker lines. A figure owns every string
 * and array in it: the builders below copy what they are given, and
 * vp_figure_free releases all of it.
 *
 * Safety: every text that reaches gnuplot (titles, labels, legends, the output
 * path) is written inside a single-quoted gnuplot string, where gnuplot does no
 * backslash processing, no backquote command substitution and no @macro
 * expansion, and where a quote is written by doubling it (gnuplot's `help
 * quotes` and `help substitution`). A newline or carriage return would end the
 * command, so every control character (0x01..0x1f, 0x7f) is refused, and so is
 * the backquote, though gnuplot ignores it inside single quotes, so that no
 * text depends on that rule. Titles and legend labels are rendered
 * `noenhanced`, so `^ _ @ & { }` are shown as typed; axis labels and marker
 * labels are gnuplot enhanced text ("v_k" subscripts k, "2^{-32}" raises
 * -32), which the dumb terminal shows with the braces dropped ("2^-32"). An output path that gnuplot itself would treat
 * specially, `|cmd` (a pipe) or `~/x` (the home folder), is written as `./|cmd`
 * so it names a file in the current folder.
 */
#ifndef VARPROF_PLOT_H
#define VARPROF_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "varprof/placement.h"
#include "varprof/profile.h"
#include "varprof/status.h"

#define VP_PLOT_MAX_PANELS 3

/* How a series is drawn: a line (closed-form data), a line over a shaded
 * band from lo to hi (sampled data, VP_HAS_BOUNDS), or a colour map: cells
 * on a grid of x and y, each coloured by its z > 0 on a log scale, with a
 * colour bar beside the panel that the series' label names (no key entry;
 * every colour map of a figure shares one scale). */
typedef enum { VP_SERIES_LINE, VP_SERIES_BAND, VP_SERIES_HEATMAP } vp_series_style;

/* The palette: one colour per placement, the same in every figure
 * (colour-blind safe, after Okabe and Ito). A colour key is a vp_placement. */
#define VP_PLOT_COLOURS VP_PLACEMENT_COUNT

/* "#rrggbb" for a colour key 0..VP_PLOT_COLOURS-1; NULL for a key out of range. */
const char *vp_plot_colour(int colour);

typedef struct {
    char *label; /* legend text; owned */
    int colour;  /* 0..VP_PLOT_COLOURS-1, usually the placement */
    int dash;    /* gnuplot dash type, 1 = solid; one per engine */
    vp_series_style style;
    size_t n, capacity; /* points held, points allocated */
    double *x, *y;      /* capacity points each; owned */
    double *lo, *hi;    /* VP_SERIES_BAND only, else NULL; owned */
    double *z;          /* VP_SERIES_HEATMAP only, else NULL; owned */
} vp_series;

typedef struct {
    double y;    /* where the horizontal line is drawn (> 0 on a log axis) */
    char *label; /* owned */
} vp_marker;

/* Panel flags. */
enum {
    VP_AXIS_LOG_X = 1u << 0,
    VP_AXIS_LOG_Y = 1u << 1,
    VP_AXIS_X_SWEPT = 1u << 2, /* x is a swept value: a tic at each value the series take */
};

typedef struct {
    char *title, *x_label, *y_label; /* owned; "" for none */
    unsigned flags;                  /* VP_AXIS_* */
    double x_tic_step;               /* > 0: a major x tic every step (a factor on a log
                                        axis); 0: gnuplot's choice */
    double x_tic_start; /* with x_tic_step: where the tics start; 0: gnuplot's choice */
    int x_minor_tics;   /* intervals between major x tics (e.g. one per layer); 0: none */
    int x_from_zero;    /* 1: a linear x axis starts at 0, where the data may start later */
    double y_max;       /* > 0: the top of the y axis, clipping what lies above;
                                        0: gnuplot's choice */
    int show_key;       /* draw the legend beside this panel (1 when added) */
    size_t n_series;
    vp_series *series; /* owned */
    size_t n_markers;
    vp_marker *markers; /* owned */
} vp_panel;

typedef struct {
    char *title; /* owned; "" for none */
    size_t n_panels;
    vp_panel panels[VP_PLOT_MAX_PANELS];
    size_t text_columns; /* the text plot's width (VP_PLOT_DUMB), 20 or more; 0: 120 */
} vp_figure;

/* A new empty figure with the given title (NULL or "" for none; copied), or
 * NULL when memory runs out. Titles are checked only when a script is written. */
vp_figure *vp_figure_alloc(const char *title);

/* Frees a figure and everything in it; NULL is allowed. */
void vp_figure_free(vp_figure *figure);

/* Appends a panel below the others and returns it in *out (owned by the
 * figure; valid until vp_figure_free). Texts are copied; NULL means "".
 * VP_EINVAL when the figure already has VP_PLOT_MAX_PANELS panels,
 * VP_ENOMEM when a copy fails. */
vp_status vp_figure_add_panel(vp_figure *figure, const char *title, const char *x_label,
                              const char *y_label, unsigned flags, vp_panel **out, vp_error *err);

/* Appends an empty series with room for capacity points (x, y, and lo, hi
 * when style is VP_SERIES_BAND) and returns it in *out, owned by the panel;
 * the pointer stays valid until the next vp_panel_add_series on that panel.
 * VP_EINVAL for a colour out of range or capacity 0, VP_ENOMEM when memory
 * runs out. */
vp_status vp_panel_add_series(vp_panel *panel, const char *label, int colour, int dash,
                              vp_series_style style, size_t capacity, vp_series **out,
                              vp_error *err);

/* A colour map's cell at (x, y) of value z (finite; one not above 0 is left
 * undrawn). VP_EINVAL when the series is not a colour map, is full, or a
 * value is not finite. */
vp_status vp_series_add_cell(vp_series *series, double x, double y, double z, vp_error *err);

/* Appends one point (lo and hi are ignored for a line). VP_EINVAL when the
 * series is full or a value is not finite. */
vp_status vp_series_add_point(vp_series *series, double x, double y, double lo, double hi,
                              vp_error *err);

/* Adds a dashed horizontal line at y with a label. VP_EINVAL for a y that is
 * not finite, or not > 0 on a log y axis; VP_ENOMEM when memory runs out. */
vp_status vp_panel_add_marker(vp_panel *panel, double y, const char *label, vp_error *err);

/* What the x axis of a profile's figure counts: layers (sub-block k of a
 * two-sub-block layer at k/2, so that parallel and pre-norm line up at equal
 * depth), or sub-blocks. */
typedef enum { VP_X_LAYER, VP_X_SUB_BLOCK } vp_plot_x_axis;

/* Finds an x axis by name: "layer", "sub-block". VP_EINVAL listing them otherwise. */
vp_status vp_plot_x_axis_parse(const char *name, vp_plot_x_axis *out, vp_error *err);

/* What vp_plot_profiles draws. */
typedef enum {
    VP_QUANTITY_ALL,    /* three panels: stream, update, share */
    VP_QUANTITY_STREAM, /* sqrt(v_k / v_0) against sub-block, linear y, k >= 0 */
    VP_QUANTITY_UPDATE, /* u_k, log y, k >= 1 */
    VP_QUANTITY_SHARE,  /* e_k, log y, k >= 0; rows where e_k underflowed are left out */
    /* the backward half, from profiles with VP_HAS_GRAD (others draw no
       series); per sub-block only, not in sweeps (vp_plot_sweep refuses) */
    VP_QUANTITY_GRAD,        /* grad_size sqrt(G_k / G_K), log y, k >= 0 */
    VP_QUANTITY_WEIGHT_GRAD, /* weight_grad, log y, k >= 1; infinite ones left out */
} vp_plot_quantity;

/* Finds a quantity by name: "all", "stream", "update", "share", "grad",
 * "weight-grad". VP_EINVAL with a message listing the valid names otherwise. */
vp_status vp_plot_quantity_parse(const char *name, vp_plot_quantity *out, vp_error *err);

/* Draws profiles (n >= 1, not owned, read only) into a new figure in *out,
 * owned by the caller (vp_figure_free): one series per profile in each panel,
 * coloured by placement, dashed by engine, labelled with the placement's
 * display name ("Post-LN"), followed by the engine ("Post-LN, Monte Carlo")
 * only when the profiles come from more than one engine, against the layer
 * (vp_plot_profiles_on chooses), with a tic per layer where that stays legible. On the
 * linear stream-size panel a curve that ends far above the others (`none`
 * grows as 2^L) would flatten them all: the axis is then cut above the others
 * and the panel's title names the curves that leave it and their top value. Rows
 * after an overflow are absent from the profile and so from the figure; values
 * that are not finite, and values <= 0 on a log axis, are left out. Profiles
 * with VP_HAS_BOUNDS get a band from their *_lo to *_hi. title may be NULL;
 * for one quantity it replaces the panel's title ("stream size"), for all
 * three it is the figure's, above them. Without a title, the title says what
 * was computed: the quantity, the layers, the gain, the engine and, for the
 * sampled engines, the width ("stream size: 32 layers, gain 1, closed form").
 * VP_EINVAL for no profiles or a quantity out of range, VP_ENOMEM. */
vp_status vp_plot_profiles(const vp_profile *const *profiles, size_t n, vp_plot_quantity quantity,
                           const char *title, vp_figure **out, vp_error *err);

/* As vp_plot_profiles, against the chosen x axis; VP_EINVAL for an axis out
 * of range. */
vp_status vp_plot_profiles_on(const vp_profile *const *profiles, size_t n,
                              vp_plot_quantity quantity, vp_plot_x_axis x_axis, const char *title,
                              vp_figure **out, vp_error *err);

/* The output formats; the file's extension chooses among the first three.
 * The default sizes fit a book's 5.5 in text width, with 9 pt text. */
typedef enum {
    VP_PLOT_PNG,  /* pngcairo at 200 dpi: 1100 px wide, 680 high (1400 for three panels) */
    VP_PLOT_SVG,  /* svg, 5.5 in wide (96 px to the inch), 3.4 in high (7 for three panels) */
    VP_PLOT_PDF,  /* pdfcairo, 5.5 in wide, 3.4 in high (7 for three panels) */
    VP_PLOT_DUMB, /* gnuplot's dumb terminal: text, text_columns (default 120) x 30
                     lines a panel */
} vp_plot_format;

/* The limits of a figure's size and text: inches for PDF and SVG, pixels for
 * PNG (drawn at VP_PLOT_PNG_DPI); points for the text. */
#define VP_PLOT_MIN_INCHES 1.0
#define VP_PLOT_MAX_INCHES 50.0
#define VP_PLOT_MIN_PIXELS 100.0
#define VP_PLOT_MAX_PIXELS 10000.0
#define VP_PLOT_MIN_FONT_PT 5.0
#define VP_PLOT_MAX_FONT_PT 48.0
#define VP_PLOT_DEFAULT_FONT_PT 9.0
#define VP_PLOT_PNG_DPI 200.0

/* Where a figure goes, and how big. */
typedef struct {
    const char *path;     /* a file ending in .png, .svg or .pdf; or "-": the dumb terminal */
    int force;            /* replace an existing file (vp_plot_run); else VP_EEXIST */
    FILE *terminal_out;   /* "-": where vp_plot_run copies the text plot; NULL: stdout */
    double width, height; /* inches (PDF, SVG) or pixels (PNG); 0: the default.
                             The dumb terminal keeps its own size. */
    double font_size;     /* points; 0: VP_PLOT_DEFAULT_FONT_PT */
    int no_title;         /* draw no title (a caption carries it): not the figure's, nor a
                             single panel's; stacked panels keep their names. The file's
                             own title (SVG <title>, PDF /Title) stays. */
} vp_plot_target;

/* Checks a size and a font size (0 for the default) for a format: VP_EINVAL
 * naming the value, its unit and the allowed range. */
vp_status vp_plot_check_size(vp_plot_format format, double width, double height, double font_size,
                             vp_error *err);

/* The format for an output path: "-" is VP_PLOT_DUMB, else the extension,
 * matched without regard to case. VP_EINVAL naming the extension (or its
 * absence) and the allowed ones. */
vp_status vp_plot_format_for_path(const char *path, vp_plot_format *out, vp_error *err);

/* Checks a text bound for gnuplot: VP_EINVAL naming `what`, the character and
 * its offset for a control character (newline, carriage return, tab, ...,
 * DEL) or a backquote. NULL is allowed (it means ""). */
vp_status vp_plot_check_text(const char *text, const char *what, vp_error *err);

/* Writes a complete, self-contained gnuplot script for the figure: the
 * terminal for target->path's format, `set output` naming target->path (none
 * for "-", so a rerun draws on standard output), the data inline as
 * datablocks with %.17g numbers (drawn rounded to a thousandth of their axis, so
 * that the last bits of a sum move no coordinate), the style, and the plots.
 * `gnuplot script.gp` alone redraws the figure. target->force and terminal_out are ignored.
 * The SVG's text is in the generic CSS family sans-serif.
 * Fails with VP_EINVAL for a bad extension, a figure without panels, a size
 * out of range (vp_plot_check_size) or a refused text (see vp_plot_check_text), before
 * writing anything; VP_EIO when the stream reports an error. */
vp_status vp_plot_write_script(FILE *out, const vp_figure *figure, const vp_plot_target *target,
                               vp_error *err);

/* Draws the figure with gnuplot. The script goes to gnuplot through a pipe
 * (popen; no script file); gnuplot writes to a temporary file beside the
 * target (".<name>.tmp.XXXXXX", same folder, mode 0666 less the umask), which
 * is put in place only when gnuplot exited 0 and the file is not empty, never
 * replacing an existing file unless force is set; on any failure it is
 * removed, so no partial figure is left. A target that is a character device
 * or a FIFO is drawn on in place. For "-" the text plot is copied to
 * target->terminal_out (stdout when NULL) and no file remains. The document
 * is given the figure's title (or its first panel's): gnuplot names an SVG
 * only with an identifier and a PDF not at all, so the SVG's <title> is
 * rewritten and the PDF gets an Info dictionary with /Title in an
 * incremental update appended to it, before it is put in place.
 * Fails with:
 *   VP_EINVAL  as vp_plot_write_script;
 *   VP_EEXIST  the target exists and force is 0, checked before gnuplot runs
 *              and again, without replacing, as the figure is put in place
 *              ("'x.svg' already exists");
 *   VP_EIO     the target is a directory or another kind of file that is
 *              not written; gnuplot is not found ("gnuplot is not
 *              installed", naming the Debian package gnuplot-nox); a
 *              temporary file cannot be made; gnuplot failed (its exit
 *              status and the last lines of what it printed are in err) or
 *              wrote nothing; the file could not be synced or put in place.
 * SIGPIPE, should gnuplot quit before reading the whole script, is blocked
 * while writing and discarded, never delivered. */
vp_status vp_plot_run(const vp_figure *figure, const vp_plot_target *target, vp_error *err);

#endif
