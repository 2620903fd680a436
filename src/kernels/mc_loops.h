/* The full Monte Carlo's loops over a token's d coordinates, one variant per
 * instruction set. Every variant is the same C (mc_loops_body.h) compiled with
 * its own flags: the partial sums are explicit lanes, and no multiply-add is
 * fused, so every variant gives the scalar one's bits. */
#ifndef VARPROF_MC_LOOPS_H
#define VARPROF_MC_LOOPS_H

#include <stddef.h>

#include "varprof/isa.h"

typedef struct {
    /* out: <1, xi>, <x, xi>, |xi|^2 */
    void (*noise_sums)(const double *x, const float *xi, size_t d, double out[3]);
    /* x <- alpha x + a xi + b; out: |x|^2, <1, x>; returns |a xi + b|^2 */
    double (*add_branch)(double *x, const float *xi, size_t d, double alpha, double a, double b,
                         double out[2]);
    /* x <- (alpha x + a xi + b - shift) scale, c <- (alpha c - c_shift) scale;
     * out: |x|^2, <1, x>, |c|^2, <1, c>; returns |a xi + b|^2 */
    double (*add_and_normalise)(double *x, double *c, const float *xi, size_t d, double alpha,
                                double a, double b, double shift, double scale, double c_shift,
                                double out[4]);
} kern_mc_loops;

/* The loops for an instruction set (the scalar ones where it has none). */
const kern_mc_loops *kern_mc_loops_for(vp_isa isa);

extern const kern_mc_loops kern_mc_loops_scalar;
#if defined(__x86_64__)
extern const kern_mc_loops kern_mc_loops_avx2;
extern const kern_mc_loops kern_mc_loops_avx512;
#endif

#endif
