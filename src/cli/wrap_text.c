/* Breaking text at spaces to fit a width. */
#include "wrap_text.h"

#include <string.h>

void write_wrapped(FILE *out, const char *text, size_t column, size_t indent, size_t width)
{
    while (*text) {
        const size_t length = strlen(text);
        if (width == 0 || column + length <= width) {
            fprintf(out, "%s\n", text);
            return;
        }
        size_t cut = width > column ? width - column : 0;
        while (cut > 0 && text[cut] != ' ')
            cut--;
        if (cut == 0) /* one word longer than the room: let it overflow */
            cut = strcspn(text, " ");
        fprintf(out, "%.*s\n", (int)cut, text);
        text += cut;
        while (*text == ' ')
            text++;
        if (*text)
            fprintf(out, "%*s", (int)indent, "");
        column = indent;
    }
    if (column == 0)
        fputc('\n', out);
}
