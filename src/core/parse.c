/* Number parsing: the decimal grammar the options and files share. */
#include "varprof/parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Scans the decimal grammar of vp_parse_double; returns the length matched
 * and whether a non-zero digit was seen in the mantissa. */
static size_t scan_decimal(const char *s, int *nonzero)
{
    size_t i = 0, digits = 0;
    *nonzero = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    for (; is_digit(s[i]); i++, digits++)
        *nonzero |= s[i] != '0';
    if (s[i] == '.')
        for (i++; is_digit(s[i]); i++, digits++)
            *nonzero |= s[i] != '0';
    if (digits == 0)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1, exp_digits = 0;
        if (s[j] == '+' || s[j] == '-')
            j++;
        for (; is_digit(s[j]); j++)
            exp_digits++;
        if (exp_digits == 0)
            return 0;
        i = j;
    }
    return i;
}

vp_status vp_parse_double(const char *text, double *out, vp_error *err)
{
    if (!text || !*text)
        return vp_fail(err, VP_EINVAL, "an empty value is not a number");
    int nonzero = 0;
    size_t length = scan_decimal(text, &nonzero);
    if (length == 0 || text[length] != '\0') {
        double probe = strtod(text, NULL);
        if (isnan(probe) || isinf(probe))
            return vp_fail(err, VP_EINVAL, "'%s' is not a finite number", text);
        return vp_fail(err, VP_EINVAL, "'%s' is not a number", text);
    }
    errno = 0;
    double value = strtod(text, NULL);
    if (isinf(value))
        return vp_fail(err, VP_EINVAL, "'%s' is out of the range of a double", text);
    if (value == 0.0 && nonzero)
        return vp_fail(err, VP_EINVAL, "'%s' underflows to zero in a double", text);
    *out = value;
    return VP_OK;
}

vp_status vp_parse_size(const char *text, size_t min, size_t max, size_t *out, vp_error *err)
{
    if (!text || !*text)
        return vp_fail(err, VP_EINVAL, "an empty value is not a whole number");
    size_t value = 0;
    int too_big = 0;
    for (const char *p = text; *p; p++) {
        if (!is_digit(*p))
            return vp_fail(err, VP_EINVAL, "'%s' is not a whole number from %zu to %zu", text, min,
                           max);
        size_t digit = (size_t)(*p - '0');
        if (digit > max || value > (max - digit) / 10)
            too_big = 1; /* keep scanning: junk later still means "not a number" */
        else
            value = value * 10 + digit;
    }
    if (too_big || value < min || value > max)
        return vp_fail(err, VP_EINVAL, "'%s' is out of range: it must be from %zu to %zu", text,
                       min, max);
    *out = value;
    return VP_OK;
}
