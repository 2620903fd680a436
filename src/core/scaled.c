#include "core/scaled.h"

#include <float.h>

#include <limits.h>
#include <math.h>

static vp_scaled normalise(double mantissa, long exponent)
{
    int e = 0;
    double m = frexp(mantissa, &e);
    if (m == 0.0)
        return (vp_scaled){0.0, 0};
    return (vp_scaled){m, exponent + e};
}

vp_scaled vp_scaled_from(double x)
{
    return normalise(x, 0);
}

vp_scaled vp_scaled_mul(vp_scaled a, vp_scaled b)
{
    return normalise(a.mantissa * b.mantissa, a.exponent + b.exponent);
}

vp_scaled vp_scaled_div(vp_scaled a, vp_scaled b)
{
    return normalise(a.mantissa / b.mantissa, a.exponent - b.exponent);
}

vp_scaled vp_scaled_sqrt(vp_scaled a)
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

vp_scaled vp_scaled_one_plus_square(double x)
{
    if (x < 0x1p500)
        return vp_scaled_from(1.0 + x * x);
    /* 1 is below half an ulp of x^2 here, so x^2 alone is the rounded sum */
    vp_scaled s = vp_scaled_from(x);
    return vp_scaled_mul(s, s);
}

double vp_scaled_to_double(vp_scaled a)
{
    if (a.mantissa == 0.0)
        return 0.0;
    if (a.exponent > DBL_MAX_EXP)
        return HUGE_VAL;
    if (a.exponent < DBL_MIN_EXP - DBL_MANT_DIG - 1)
        return 0.0;
    return ldexp(a.mantissa, (int)a.exponent);
}

double vp_scaled_log2(vp_scaled a)
{
    if (a.mantissa == 0.0)
        return -HUGE_VAL;
    return log2(a.mantissa) + (double)a.exponent;
}
