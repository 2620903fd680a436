/* The drawn file's own title, which gnuplot cannot set: its svg terminal
 * takes only an identifier for <title> ("name"), and pdfcairo writes an Info
 * dictionary with no /Title. Both are set here, in C, so that no tool beyond
 * gnuplot is needed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/plot_internal.h"

/* The document's title: the figure's, else its first panel's. */
static const char *document_title(const vp_figure *figure)
{
    if (figure->title[0] || figure->n_panels == 0)
        return figure->title;
    return figure->panels[0].title;
}

/* The whole file in a new buffer, NUL-terminated; NULL when it cannot be read. */
static char *read_all(const char *path, size_t *size)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return NULL;
    char *data = NULL;
    long n = -1;
    if (fseek(in, 0, SEEK_END) == 0 && (n = ftell(in)) >= 0 && fseek(in, 0, SEEK_SET) == 0)
        data = malloc((size_t)n + 1);
    if (data && fread(data, 1, (size_t)n, in) != (size_t)n) {
        free(data);
        data = NULL;
    }
    (void)fclose(in); // read only: nothing to lose
    if (data) {
        data[n] = '\0';
        *size = (size_t)n;
    }
    return data;
}

static void write_xml_escaped(FILE *out, const char *text)
{
    for (; *text; text++) {
        switch (*text) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        default: putc(*text, out);
        }
    }
}

/* gnuplot writes "<title>NAME</title>" before anything else it titles (the
 * series' <title>s come later): that first one is the document's. */
static vp_status set_svg_title(const char *path, const char *title, vp_error *err)
{
    size_t size;
    char *svg = read_all(path, &size);
    if (!svg)
        return vp_fail(err, VP_EIO, "cannot read gnuplot's SVG: %s", strerror(errno));
    char *open = strstr(svg, "<title>");
    char *close = open ? strstr(open, "</title>") : NULL;
    if (!close) {
        free(svg);
        return vp_fail(err, VP_EIO, "gnuplot's SVG has no <title> to set");
    }
    FILE *out = fopen(path, "wb");
    if (!out) {
        free(svg);
        return vp_fail(err, VP_EIO, "cannot rewrite gnuplot's SVG: %s", strerror(errno));
    }
    fwrite(svg, 1, (size_t)(open - svg) + strlen("<title>"), out);
    write_xml_escaped(out, title);
    fwrite(close, 1, size - (size_t)(close - svg), out);
    free(svg);
    const int failed = ferror(out) != 0;
    return (fclose(out) != 0 || failed)
               ? vp_fail(err, VP_EIO, "cannot rewrite gnuplot's SVG: %s", strerror(errno))
               : VP_OK;
}

/* The last occurrence of key in data[0..size), or NULL. */
static const char *find_last(const char *data, size_t size, const char *key)
{
    const size_t n = strlen(key);
    for (size_t i = size >= n ? size - n + 1 : 0; i-- > 0;)
        if (memcmp(data + i, key, n) == 0)
            return data + i;
    return NULL;
}

/* The decimal number after key at text (PDF whitespace between), in *out;
 * returns the end of the number, or NULL when there is none. */
static const char *number_after(const char *text, const char *key, unsigned long *out)
{
    text += strlen(key);
    while (*text == ' ' || *text == '\n' || *text == '\r')
        text++;
    if (*text < '0' || *text > '9')
        return NULL;
    char *end;
    errno = 0;
    const unsigned long value = strtoul(text, &end, 10);
    if (errno != 0)
        return NULL;
    *out = value;
    return end;
}

/* A PDF text string: UTF-16BE with its byte-order mark, in hex, so that any
 * title is exact ("<FEFF0053...>"). UTF-8 beyond the BMP becomes U+FFFD. */
static void write_pdf_text(FILE *out, const char *title)
{
    fputs("<FEFF", out);
    const unsigned char *p = (const unsigned char *)title;
    while (*p) {
        unsigned code = *p++;
        int more = 0;
        if (code >= 0xf0) {
            more = 3;
            code &= 0x07u;
        } else if (code >= 0xe0) {
            more = 2;
            code &= 0x0fu;
        } else if (code >= 0xc0) {
            more = 1;
            code &= 0x1fu;
        } else if (code >= 0x80) {
            code = 0xfffd; // a continuation byte with no lead
        }
        for (; more > 0 && (*p & 0xc0) == 0x80; more--)
            code = (code << 6) | (*p++ & 0x3fu);
        if (more > 0 || code > 0xffff)
            code = 0xfffd;
        fprintf(out, "%04X", code);
    }
    putc('>', out);
}

/* An incremental update (PDF 1.7, 7.5.6): a new Info object and a cross-
 * reference section for it, whose trailer names the old one with /Prev. Cairo
 * writes a classic xref table and a trailer with /Size and /Root. */
static vp_status set_pdf_title(const char *path, const char *title, vp_error *err)
{
    size_t size;
    char *pdf = read_all(path, &size);
    if (!pdf)
        return vp_fail(err, VP_EIO, "cannot read gnuplot's PDF: %s", strerror(errno));
    const char *trailer = find_last(pdf, size, "trailer");
    const char *startxref = find_last(pdf, size, "startxref");
    const char *size_key = trailer ? strstr(trailer, "/Size") : NULL;
    const char *root_key = trailer ? strstr(trailer, "/Root") : NULL;
    unsigned long objects = 0, root = 0, root_gen = 0, prev = 0;
    const char *after_root = root_key ? number_after(root_key, "/Root", &root) : NULL;
    const int parsed = startxref && size_key && after_root &&
                       number_after(size_key, "/Size", &objects) &&
                       number_after(after_root, "", &root_gen) &&
                       number_after(startxref, "startxref", &prev) && objects > 0;
    free(pdf);
    if (!parsed)
        return vp_fail(err, VP_EIO, "gnuplot's PDF has no trailer that can be updated");
    // at the end, where ftell gives the offsets the new xref section holds
    FILE *out = fopen(path, "r+b");
    if (!out || fseek(out, 0, SEEK_END) != 0) {
        const int error = errno;
        if (out)
            (void)fclose(out);
        return vp_fail(err, VP_EIO, "cannot add the title to gnuplot's PDF: %s", strerror(error));
    }
    fputc('\n', out);
    const long info_at = ftell(out);
    fprintf(out, "%lu 0 obj\n<< /Title ", objects);
    write_pdf_text(out, title);
    fputs(" /Creator (varprof, through gnuplot's pdfcairo) >>\nendobj\n", out);
    const long xref_at = ftell(out);
    fprintf(out, "xref\n%lu 1\n%010ld 00000 n \n", objects, info_at);
    fprintf(out,
            "trailer\n<< /Size %lu /Root %lu %lu R /Info %lu 0 R /Prev %lu >>\n"
            "startxref\n%ld\n%%%%EOF\n",
            objects + 1, root, root_gen, objects, prev, xref_at);
    const int failed = ferror(out) != 0 || info_at < 0 || xref_at < 0;
    return (fclose(out) != 0 || failed)
               ? vp_fail(err, VP_EIO, "cannot add the title to gnuplot's PDF: %s", strerror(errno))
               : VP_OK;
}

vp_status plot_set_document_title(const char *path, vp_plot_format format, const vp_figure *figure,
                                  vp_error *err)
{
    const char *title = document_title(figure);
    switch (format) {
    case VP_PLOT_SVG: return set_svg_title(path, title, err);
    case VP_PLOT_PDF: return set_pdf_title(path, title, err);
    case VP_PLOT_PNG:
    case VP_PLOT_DUMB: break;
    }
    return VP_OK;
}
