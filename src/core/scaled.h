/* A double with a separate binary exponent, for figures that shrink or grow
 * past what a double holds: Post-LN's embedding share at a million layers is
 * 2^-1000000, which a double rounds to 0 but a vp_scaled keeps exactly. */
#ifndef VARPROF_SCALED_H
#define VARPROF_SCALED_H

typedef struct {
    double mantissa; /* 0, or in [0.5, 1) */
    long exponent;   /* value = mantissa * 2^exponent */
} vp_scaled;

vp_scaled vp_scaled_from(double x); /* x finite and >= 0 */
vp_scaled vp_scaled_mul(vp_scaled a, vp_scaled b);
vp_scaled vp_scaled_div(vp_scaled a, vp_scaled b); /* b nonzero */
vp_scaled vp_scaled_sqrt(vp_scaled a);
/* 1 + x^2 without overflow for any finite x >= 0. */
vp_scaled vp_scaled_one_plus_square(double x);
/* The nearest double: 0 or a subnormal below DBL_MIN, HUGE_VAL above DBL_MAX. */
double vp_scaled_to_double(vp_scaled a);
/* log2 of the value; -HUGE_VAL for 0. */
double vp_scaled_log2(vp_scaled a);

#endif
