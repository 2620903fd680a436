/* Dashes that are not hyphen-minus, said by name. */
#include "dash_lookalike.h"

#include <ctype.h>
#include <string.h>

#include "options.h"

static const dash_lookalike lookalikes[] = {
    {"\xe2\x80\x93", "an en dash", "U+2013"},
    {"\xe2\x80\x94", "an em dash", "U+2014"},
    {"\xe2\x88\x92", "a minus sign", "U+2212"},
    {"\xe2\x80\x91", "a non-breaking hyphen", "U+2011"},
    {"\xe2\x80\x90", "a Unicode hyphen", "U+2010"},
};

const dash_lookalike *find_dash_lookalike(const char *text)
{
    const dash_lookalike *first = NULL;
    const char *first_at = NULL;
    for (size_t i = 0; i < sizeof lookalikes / sizeof *lookalikes; i++) {
        const char *at = strstr(text, lookalikes[i].utf8);
        if (at && (!first_at || at < first_at)) {
            first = &lookalikes[i];
            first_at = at;
        }
    }
    return first;
}

/* text with every look-alike replaced by '-'; a lone one that opens an
 * option's name ("\u2013gain") by "--", since typesetting turns the "--"
 * of "--gain" into a single dash */
static void ascii_version(char *buf, size_t size, const char *text, int is_option_name)
{
    size_t n = 0;
    const dash_lookalike *first = find_dash_lookalike(text);
    if (is_option_name && size > 2 && first && strncmp(text, first->utf8, 3) == 0 &&
        isalpha((unsigned char)text[3]))
        buf[n++] = '-'; /* the loop below writes the second */
    while (*text && n + 1 < size) {
        const dash_lookalike *dash = NULL;
        for (size_t i = 0; i < sizeof lookalikes / sizeof *lookalikes; i++)
            if (strncmp(text, lookalikes[i].utf8, 3) == 0)
                dash = &lookalikes[i];
        if (dash) {
            buf[n++] = '-';
            text += 3;
        } else {
            buf[n++] = *text++;
        }
    }
    buf[n] = '\0';
}

int refuse_dash_lookalike(const char *option, const char *text, const dash_lookalike *dash)
{
    char fixed[256];
    ascii_version(fixed, sizeof fixed, text, option == NULL);
    if (option)
        return cli_usage_error("%s: '%s' holds %s (%s), as text copied from a PDF may; type "
                               "the ASCII '-' instead: %s %s",
                               option, text, dash->name, dash->codepoint, option, fixed);
    return cli_usage_error("'%s' holds %s (%s), as text copied from a PDF may; type the ASCII "
                           "'-' instead: %s",
                           text, dash->name, dash->codepoint, fixed);
}
