/* The Gaussian generator with AVX2 + FMA, 8 counters a set and one set a
 * pass: gauss_body.h over simd_avx2.h. Compiled with the AVX2 flags (the
 * Makefile); called only when vp_isa_supported(VP_ISA_AVX2). */
#if defined(__x86_64__)
#define KERN_ISA avx2
#define GAUSS_SETS 1 /* the 16 registers hold one set's rounds */
#include "kernels/simd_avx2.h"
#include "kernels/gauss_body.h"
#else
typedef int kern_gauss_avx2_unavailable;
#endif
