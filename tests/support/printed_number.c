/* What a printed number says of the figure it rounds. */
#include "printed_number.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double printed_half_unit(const char *text)
{
    const char *point = strchr(text, '.'), *e = strpbrk(text, "eE");
    int decimals = 0;
    if (point)
        for (const char *p = point + 1; isdigit((unsigned char)*p); p++)
            decimals++;
    const int exponent = e ? atoi(e + 1) : 0;
    return 0.5 * pow(10.0, exponent - decimals);
}
