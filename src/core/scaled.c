/* Doubles with a separate binary exponent, for figures past a double's range. */
#include "core/scaled.h"

#include <float.h>

#include <limits.h>
#include <math.h>

static scaled_double normalise(double mantissa, long exponent)
{
    int e = 0;
    double m = frexp(mantissa, &e);
    if (m == 0.0)
        return (scaled_double){0.0, 0};
    return (scaled_double){m, exponent + e};
}

scaled_double scaled_from(double x)
{
    return normalise(x, 0);
}

scaled_double scaled_mul(scaled_double a, scaled_double b)
{
    return normalise(a.mantissa * b.mantissa, a.exponent + b.exponent);
}

scaled_double scaled_div(scaled_double a, scaled_double b)
{
    return normalise(a.mantissa / b.mantissa, a.exponent - b.exponent);
}

scaled_double scaled_sqrt(scaled_double a)
{
    /* make the exponent even so that it halves exactly */
    double m = a.mantissa;
    long e = a.exponent;
    if (e % 2 != 0) {
        m *= 2.0;
        e -= 1;
    }
    return normalise(sqrt(m), e / 2);
}

scaled_double scaled_one_plus_square(double x)
{
    if (x < 0x1p500)
        return scaled_from(1.0 + x * x);
    /* 1 is below half an ulp of x^2 here, so x^2 alone is the rounded sum */
    scaled_double s = scaled_from(x);
    return scaled_mul(s, s);
}

double scaled_to_double(scaled_double a)
{
    if (a.mantissa == 0.0)
        return 0.0;
    if (a.exponent > DBL_MAX_EXP)
        return HUGE_VAL;
    if (a.exponent < DBL_MIN_EXP - DBL_MANT_DIG - 1)
        return 0.0;
    return ldexp(a.mantissa, (int)a.exponent);
}

double scaled_log2(scaled_double a)
{
    if (a.mantissa == 0.0)
        return -HUGE_VAL;
    return log2(a.mantissa) + (double)a.exponent;
}
