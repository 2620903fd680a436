/* What the benches share: a clock and the measured FMA peak. */
#ifndef VARPROF_BENCH_FMA_PEAK_H
#define VARPROF_BENCH_FMA_PEAK_H

#include "varprof/isa.h"

/* Seconds on a monotonic clock. */
double bench_now(void);

/* This core's single-precision FMA peak with the ISA's widest FMAs, best of a
 * few runs, in GFLOP/s; 0 where the ISA has no FMA loop (scalar, non-x86). */
double bench_fma_peak(vp_isa isa);

/* The limit a peer sets on a speed-up: no program runs above the FMA peak,
 * so against a peer at a share p of it no ratio above 1/p is possible,
 * whatever the code. Prints, after `indent` spaces, "the limit: PyTorch
 * runs at p % of the FMA peak, so no program can be more than 1/p x
 * faster", with "; the target is beyond it" when 1/p < target. Nothing
 * when peak or peer_gflops is not positive. */
void bench_print_peer_limit(int indent, double peak, double peer_gflops, double target);

#endif
