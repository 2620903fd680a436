/* The house style every figure shares: the colour of each placement, the
 * terminal and size for each format. */
#include "varprof/plot.h"
#include "plot/plot_internal.h"

#include <ctype.h>
#include <string.h>

/* Okabe and Ito's colour-blind-safe palette without its yellow, which is
 * unreadable on white; indexed by vp_placement. */
static const char *const palette[VP_PLOT_COLOURS] = {
    [VP_POST_LN] = "#d55e00",     /* vermillion */
    [VP_PRE_NORM] = "#0072b2",    /* blue */
    [VP_SANDWICH] = "#009e73",    /* bluish green */
    [VP_OUTPUT_NORM] = "#cc79a7", /* reddish purple */
    [VP_DEEPNORM] = "#e69f00",    /* orange */
    [VP_PARALLEL] = "#56b4e9",    /* sky blue */
    [VP_NO_NORM] = "#000000",     /* black */
};

const char *vp_plot_colour(int colour)
{
    return colour >= 0 && colour < VP_PLOT_COLOURS ? palette[colour] : NULL;
}

static int same_ignoring_case(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

vp_status vp_plot_format_for_path(const char *path, vp_plot_format *out, vp_error *err)
{
    static const struct {
        const char *extension;
        vp_plot_format format;
    } formats[] = {{"png", VP_PLOT_PNG}, {"svg", VP_PLOT_SVG}, {"pdf", VP_PLOT_PDF}};
    if (!path || !*path)
        return vp_fail(err, VP_EINVAL, "no plot file given; give a .png, .svg or .pdf file, or -");
    if (strcmp(path, "-") == 0) {
        *out = VP_PLOT_DUMB;
        return VP_OK;
    }
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name)
        return vp_fail(err, VP_EINVAL,
                       "plot file '%s' has no extension; allowed: .png, .svg, .pdf (or - for the "
                       "terminal)",
                       path);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (same_ignoring_case(dot + 1, formats[i].extension)) {
            *out = formats[i].format;
            return VP_OK;
        }
    return vp_fail(err, VP_EINVAL,
                   "plot file extension '%s' is not supported; allowed: .png, .svg, .pdf (or - "
                   "for the terminal)",
                   dot);
}

int plot_point_type(int colour)
{
    /* filled circle, square, triangle, inverted triangle, diamond; open
     * square, open circle: told apart in colour, in grey and in dumb text */
    static const int types[VP_PLOT_COLOURS] = {7, 5, 9, 11, 13, 4, 6};
    return colour >= 0 && colour < VP_PLOT_COLOURS ? types[colour] : 1;
}

vp_status vp_plot_check_size(vp_plot_format format, double width, double height, double font_size,
                             vp_error *err)
{
    if (!(font_size == 0.0 ||
          (font_size >= VP_PLOT_MIN_FONT_PT && font_size <= VP_PLOT_MAX_FONT_PT)))
        return vp_fail(err, VP_EINVAL, "font size %g pt is out of range; allowed: %g to %g pt",
                       font_size, VP_PLOT_MIN_FONT_PT, VP_PLOT_MAX_FONT_PT);
    if (format == VP_PLOT_DUMB || (width == 0.0 && height == 0.0))
        return VP_OK;
    const int png = format == VP_PLOT_PNG;
    const double min = png ? VP_PLOT_MIN_PIXELS : VP_PLOT_MIN_INCHES;
    const double max = png ? VP_PLOT_MAX_PIXELS : VP_PLOT_MAX_INCHES;
    const char *unit = png ? "pixels (PNG)" : "inches (PDF, SVG)";
    if (!(width >= min && width <= max && height >= min && height <= max))
        return vp_fail(err, VP_EINVAL, "size %g,%g is out of range; allowed: %g to %g %s each",
                       width, height, min, max, unit);
    return VP_OK;
}
