/* The Gaussian generator with AVX-512, 16 counters a set and two sets a
 * pass: gauss_body.h over simd_avx512.h. Compiled with the AVX-512 flags (the
 * Makefile); called only when vp_isa_supported(VP_ISA_AVX512). */
#if defined(__x86_64__)
#define KERN_ISA avx512
#define GAUSS_SETS 2 /* one set's multiply latency hides behind the other's */
#include "kernels/simd_avx512.h"
#include "kernels/gauss_body.h"
#else
typedef int kern_gauss_avx512_unavailable;
#endif
