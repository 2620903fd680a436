/* What the benches share: a clock and the measured FMA peak. */
#ifndef VARPROF_BENCH_FMA_PEAK_H
#define VARPROF_BENCH_FMA_PEAK_H

#include "varprof/isa.h"

/* Seconds on a monotonic clock. */
double bench_now(void);

/* This core's single-precision FMA peak with the ISA's widest FMAs, best of a
 * few runs, in GFLOP/s; 0 where the ISA has no FMA loop (scalar, non-x86). */
double bench_fma_peak(vp_isa isa);

#endif
