/* The backward pass's kernels other than matmul with AVX2 + FMA, 8 floats a
 * vector: nn_backward_body.h over simd_avx2.h. Compiled with the set's flags
 * (the Makefile); called only when vp_isa_supported says so. */
#if defined(__x86_64__)
#define KERN_ISA avx2
#include "kernels/simd_avx2.h"
#include "kernels/nn_backward_body.h"
#else
typedef int kern_nn_backward_avx2_unavailable;
#endif
