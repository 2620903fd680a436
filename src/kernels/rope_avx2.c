/* Rotary position embedding with AVX2, SIMD_W pairs a vector: rope_body.h
 * over simd_avx2.h, the same bits as rope_scalar.c. Compiled with the set's
 * flags (the Makefile); called only when vp_isa_supported says so. */
#if defined(__x86_64__)
#define KERN_ISA avx2
#include "kernels/simd_avx2.h"
#include "kernels/rope_body.h"
#else
typedef int rope_avx2_is_x86_only;
#endif
