/* The forward pass's kernels other than matmul with AVX2 + FMA, 8 floats a
 * vector: nn_body.h over simd_avx2.h. Compiled with the AVX2 flags (the
 * Makefile); called only when vp_isa_supported(VP_ISA_AVX2). */
#if defined(__x86_64__)
#define KERN_ISA avx2
#include "kernels/simd_avx2.h"
#include "kernels/nn_body.h"
#else
typedef int kern_nn_avx2_unavailable;
#endif
