/* Rotary position embedding with AVX-512, SIMD_W pairs a vector: rope_body.h
 * over simd_avx512.h, the same bits as rope_scalar.c. Compiled with the set's
 * flags (the Makefile); called only when vp_isa_supported says so. */
#if defined(__x86_64__)
#define KERN_ISA avx512
#include "kernels/simd_avx512.h"
#include "kernels/rope_body.h"
#else
typedef int rope_avx512_is_x86_only;
#endif
