/* The forward pass's kernels other than matmul with AVX-512, 16 floats a
 * vector: nn_body.h over simd_avx512.h. Compiled with the AVX-512 flags (the
 * Makefile); called only when vp_isa_supported(VP_ISA_AVX512). */
#if defined(__x86_64__)
#define KERN_ISA avx512
#include "kernels/simd_avx512.h"
#include "kernels/nn_body.h"
#else
typedef int kern_nn_avx512_unavailable;
#endif
