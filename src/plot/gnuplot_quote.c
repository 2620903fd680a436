/* Text bound for gnuplot, made inert: refused when it holds a character that
 * could end a command, else written as a single-quoted string. */
#include "varprof/plot.h"
#include "plot/plot_internal.h"

static const char *control_name(unsigned char c)
{
    switch (c) {
    case '\n': return "newline";
    case '\r': return "carriage return";
    case '\t': return "tab";
    case 0x7f: return "DEL";
    default: return "control character";
    }
}

vp_status vp_plot_check_text(const char *text, const char *what, vp_error *err)
{
    if (!text)
        return VP_OK;
    for (const char *p = text; *p; p++) {
        unsigned char c = (unsigned char)*p;
        // a newline would end the gnuplot command, and with it the string
        if (c < 0x20 || c == 0x7f)
            return vp_fail(err, VP_EINVAL,
                           "%s holds a %s (0x%02x) at byte %td; gnuplot text may not contain "
                           "control characters",
                           what, control_name(c), c, p - text);
        // inert inside single quotes, but gnuplot runs `...` anywhere else: refuse it outright
        if (c == '`')
            return vp_fail(err, VP_EINVAL,
                           "%s holds a backquote (`) at byte %td; gnuplot would run it as a "
                           "command, so it is not allowed",
                           what, p - text);
    }
    return VP_OK;
}

vp_status plot_write_quoted(FILE *out, const char *text, const char *what, vp_error *err)
{
    vp_status status = vp_plot_check_text(text, what, err);
    if (status != VP_OK)
        return status;
    // single quotes: no backslash escapes, no substitution; a quote is doubled
    putc('\'', out);
    for (const char *p = text ? text : ""; *p; p++) {
        if (*p == '\'')
            putc('\'', out);
        putc(*p, out);
    }
    putc('\'', out);
    return ferror(out) ? vp_fail(err, VP_EIO, "cannot write the gnuplot script") : VP_OK;
}
