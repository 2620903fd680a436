/* A title as lines that fit the figure: gnuplot does not wrap a title, and
 * one wider than the figure is clipped at both ends. A line breaks only
 * between two words of prose, or after a comma, semicolon or colon, never
 * inside an expression: "2 x 64", "g = 0.42", "to 4.29e+09" stay whole. */
#include <ctype.h>
#include <string.h>

#include "plot/plot_internal.h"

static int is_one_of(char c, const char *set)
{
    return c != '\0' && strchr(set, c) != NULL;
}

/* A word of prose: letters (any UTF-8 letter too), apostrophes and hyphens,
 * after an opening parenthesis or before punctuation at most: "Post-LN's",
 * "(width", "layers,". A digit, "=", "/" or "_" makes it an expression's. */
static int is_prose_word(const char *word, size_t n)
{
    size_t a = 0, b = n;
    if (a < b && word[a] == '(')
        a++;
    while (b > a && is_one_of(word[b - 1], ",;:.)"))
        b--;
    if (a == b)
        return 0;
    for (size_t i = a; i < b; i++) {
        const unsigned char c = (unsigned char)word[i];
        if (!isalpha(c) && c < 0x80 && c != '\'' && c != '-')
            return 0;
    }
    return 1;
}

/* Whether the space at text[at] stands between two words of prose, or
 * after a word that ends a clause ("tokens),", "L = 8;"). */
static int prose_break(const char *text, size_t at, size_t n)
{
    size_t start = at, end = at + 1;
    while (start > 0 && text[start - 1] != ' ')
        start--;
    while (end < n && text[end] != ' ')
        end++;
    if (at == start || end == at + 1)
        return 0;
    return is_one_of(text[at - 1], ",;:") ||
           (is_prose_word(text + start, at - start) && is_prose_word(text + at + 1, end - at - 1));
}

/* Where the line starting at text ends: at the last break between words of
 * prose that fits max_chars; failing one, at the last space that fits; the
 * whole text when it fits. */
static size_t line_end(const char *text, size_t n, size_t max_chars)
{
    size_t chars = 0, prose = 0, space = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == ' ' && i > 0) {
            space = i;
            if (prose_break(text, i, n))
                prose = i;
        }
        chars += ((unsigned char)text[i] & 0xc0) != 0x80;
        if (chars > max_chars)
            return prose ? prose : space ? space : i;
    }
    return n;
}

vp_status plot_write_title(FILE *out, const char *text, size_t max_chars, const char *what,
                           size_t *lines, vp_error *err)
{
    size_t written = 0;
    char line[512];
    const char *rest = text;
    vp_status status = VP_OK;
    for (int first = 1; status == VP_OK; first = 0) {
        size_t n = strlen(rest);
        if (n >= sizeof line)
            n = sizeof line - 1;
        const size_t cut = line_end(rest, n, max_chars);
        memcpy(line, rest, cut);
        line[cut] = '\0';
        if (!first)
            fputs(".\"\\n\".", out);
        status = plot_write_quoted(out, line, what, err);
        written++;
        rest += cut;
        while (*rest == ' ')
            rest++;
        if (!*rest)
            break;
    }
    if (lines)
        *lines = written;
    return status;
}
