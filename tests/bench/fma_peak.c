/* The single-core FMA peak, measured: independent FMA chains on registers,
 * so that the benches report their speed against what this core can do. */
#include "fma_peak.h"

#include <stdio.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define PEAK_REPEATS 5 /* best of */

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_print_peer_limit(int indent, double peak, double peer_gflops, double target)
{
    if (!(peak > 0) || !(peer_gflops > 0))
        return;
    const double ceiling = peak / peer_gflops;
    printf("%*sthe limit: PyTorch runs at %.1f %% of the FMA peak, so no program can be more "
           "than %.2fx faster%s\n",
           indent, "", 100.0 / ceiling, ceiling,
           ceiling < target ? "; the target is beyond it" : "");
}

/* ---- the FMA peak ---- */

/* FMAs per loop iteration: independent chains, more than latency x pipes
 * (4 x 2 on current x86 cores) so that no chain waits on itself. */
#define PEAK_CHAINS_512 24
#define PEAK_CHAINS_256 12 /* AVX2 has 16 registers */
#define PEAK_ITERS 4000000L

#if defined(__x86_64__)
__attribute__((target("avx512f,fma"))) static double peak_avx512_once(double *sink)
{
    __m512 acc[PEAK_CHAINS_512];
    for (int c = 0; c < PEAK_CHAINS_512; c++)
        acc[c] = _mm512_set1_ps((float)c);
    /* a just below 1 and b small: the chains stay finite and normal */
    __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
    __asm__ volatile("" : "+v"(a), "+v"(b));
    double t0 = bench_now();
    for (long it = 0; it < PEAK_ITERS; it++) {
#pragma GCC unroll 32
        for (int c = 0; c < PEAK_CHAINS_512; c++)
            acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    }
    double t = bench_now() - t0;
    float s = 0.0f;
    for (int c = 0; c < PEAK_CHAINS_512; c++)
        s += _mm512_reduce_add_ps(acc[c]);
    *sink += s;
    return 2.0 * 16 * PEAK_CHAINS_512 * (double)PEAK_ITERS / t * 1e-9;
}

__attribute__((target("avx2,fma"))) static double peak_avx2_once(double *sink)
{
    __m256 acc[PEAK_CHAINS_256];
    for (int c = 0; c < PEAK_CHAINS_256; c++)
        acc[c] = _mm256_set1_ps((float)c);
    __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
    __asm__ volatile("" : "+x"(a), "+x"(b));
    double t0 = bench_now();
    for (long it = 0; it < PEAK_ITERS; it++) {
#pragma GCC unroll 32
        for (int c = 0; c < PEAK_CHAINS_256; c++)
            acc[c] = _mm256_fmadd_ps(acc[c], a, b);
    }
    double t = bench_now() - t0;
    float lanes[8], s = 0.0f;
    for (int c = 0; c < PEAK_CHAINS_256; c++) {
        _mm256_storeu_ps(lanes, acc[c]);
        for (int l = 0; l < 8; l++)
            s += lanes[l];
    }
    *sink += s;
    return 2.0 * 8 * PEAK_CHAINS_256 * (double)PEAK_ITERS / t * 1e-9;
}
#endif

/* Best of a few runs, GFLOP/s; 0 where the ISA has no FMA loop here. */
double bench_fma_peak(vp_isa isa)
{
    double best = 0.0, sink = 0.0;
    for (int r = 0; r < PEAK_REPEATS; r++) {
        double g = 0.0;
#if defined(__x86_64__)
        if (isa == VP_ISA_AVX512)
            g = peak_avx512_once(&sink);
        else if (isa == VP_ISA_AVX2)
            g = peak_avx2_once(&sink);
#endif
        if (g > best)
            best = g;
    }
    if (sink == 12345.0) /* keeps the chains' results alive */
        printf(" ");
    return best;
}
