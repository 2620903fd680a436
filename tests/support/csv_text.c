#include "csv_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int csv_column_of(const char *header, const char *name)
{
    int index = 0;
    for (const char *at = header; *at && *at != '\n'; index++) {
        const size_t length = strcspn(at, ",\n");
        if (length == strlen(name) && strncmp(at, name, length) == 0)
            return index;
        at += length;
        if (*at == ',')
            at++;
    }
    return -1;
}

double csv_number_at(const char *line, int col)
{
    const char *p = line;
    for (int c = 0; c < col && p; c++) {
        p = strpbrk(p, ",\n");
        if (!p || *p == '\n')
            return NAN;
        p++;
    }
    if (!p || *p == ',' || *p == '\n' || *p == '\0')
        return NAN;
    return strtod(p, NULL);
}
