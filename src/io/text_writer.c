/* The text writer: sentences fitted to 80 columns, and a profile whole. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "varprof/text.h"
#include "io/text_internal.h"

/* Writes each line of text, those longer than 80 columns broken after
 * their last ", " that fits, or at their last space that does where no
 * comma lies from column comma_from on (a comma early in the line leaves
 * it ragged; 0: commas alone, a line without one left whole), the rest
 * indented by two spaces more than the line. */
static void write_fitted(FILE *out, const char *text, size_t comma_from)
{
    while (*text) {
        size_t length = strcspn(text, "\n");
        const char *line = text;
        const int indent = 2 + (int)strspn(line, " ");
        size_t column = 0;
        while (column + length > 80) {
            size_t cut = 0, space = 0;
            for (size_t i = 0; i + 1 < length && column + i + 1 <= 80; i++) {
                if (line[i] == ',' && line[i + 1] == ' ')
                    cut = i + 1;
                if (line[i + 1] == ' ')
                    space = i + 1;
            }
            if (column + cut < comma_from)
                cut = space > cut ? space : cut;
            if (cut == 0)
                break;
            fprintf(out, "%.*s\n%*s", (int)cut, line, indent, "");
            line += cut + 1;
            length -= cut + 1;
            column = (size_t)indent;
        }
        fprintf(out, "%.*s\n", (int)length, line);
        text = line + length + (line[length] == '\n');
    }
}

void text_write_lines_in_width(FILE *out, vp_text_width width, size_t comma_from, text_lines lines,
                               const void *arg)
{
    char *text = NULL;
    size_t size = 0;
    FILE *memory = width == VP_TEXT_FIT_80 ? open_memstream(&text, &size) : NULL;
    if (!memory) {
        lines(out, arg);
        return;
    }
    lines(memory, arg);
    if (fclose(memory) == 0)
        write_fitted(out, text, comma_from);
    else /* no memory for the text: unbroken lines rather than none */
        lines(out, arg);
    free(text);
}

vp_status vp_text_write_profile(FILE *out, const vp_profile *profile, size_t every)
{
    text_write_heading(out, profile, VP_TEXT_WIDE);
    return vp_text_write_rows(out, profile, every, VP_TEXT_WIDE);
}

void text_se_units(char *buf, size_t size, double units, vp_text_width width)
{
    if (isinf(units))
        snprintf(buf, size, "%s", units > 0 ? "+inf" : "-inf");
    else if (width == VP_TEXT_FIT_80 && fabs(units) >= 1000.0)
        snprintf(buf, size, "%+.0f", units);
    else
        snprintf(buf, size, "%+.1f", units);
}
