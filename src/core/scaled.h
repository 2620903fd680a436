/* A double with a separate binary exponent, for figures that shrink or grow
 * past what a double holds: Post-LN's embedding share at a million layers is
 * 2^-1000000, which a double rounds to 0 but a scaled_double keeps exactly. */
#ifndef VARPROF_SCALED_H
#define VARPROF_SCALED_H

typedef struct {
    double mantissa; /* 0, or in [0.5, 1) */
    long exponent;   /* value = mantissa * 2^exponent */
} scaled_double;

scaled_double scaled_from(double x); /* x finite and >= 0 */
scaled_double scaled_mul(scaled_double a, scaled_double b);
scaled_double scaled_div(scaled_double a, scaled_double b); /* b nonzero */
scaled_double scaled_sqrt(scaled_double a);
/* 1 + x^2 without overflow for any finite x >= 0. */
scaled_double scaled_one_plus_square(double x);
/* The nearest double: 0 or a subnormal below DBL_MIN, HUGE_VAL above DBL_MAX. */
double scaled_to_double(scaled_double a);
/* log2 of the value; -HUGE_VAL for 0. */
double scaled_log2(scaled_double a);

#endif
