/* Strict number parsing: the whole text must be one number in range.
 *
 * Used for options typed by hand and for cells of the files varprof reads.
 * Leading or trailing spaces, an empty string, hexadecimal, nan, inf and
 * anything that overflows a double are refused.
 */
#ifndef VARPROF_PARSE_H
#define VARPROF_PARSE_H

#include <stddef.h>

#include "varprof/status.h"

/* Parses a finite decimal number: [+-]digits[.digits][(e|E)[+-]digits], or
 * with the digits before or after the point omitted (".5", "2."), not both.
 * Fails with VP_EINVAL and a message quoting the text: not a number, not
 * finite, or out of the range of a double (overflow, or underflow to zero
 * from a non-zero text). */
vp_status vp_parse_double(const char *text, double *out, vp_error *err);

/* Parses a whole number of decimal digits (no sign, point or exponent) and
 * checks min <= value <= max. Fails with VP_EINVAL and a message quoting the
 * text and, when out of range, the range. */
vp_status vp_parse_size(const char *text, size_t min, size_t max, size_t *out, vp_error *err);

#endif
