/* The backward pass's kernels other than matmul with AVX-512, 16 floats a
 * vector: nn_backward_body.h over simd_avx512.h. Compiled with the set's flags
 * (the Makefile); called only when vp_isa_supported says so. */
#if defined(__x86_64__)
#define KERN_ISA avx512
#include "kernels/simd_avx512.h"
#include "kernels/nn_backward_body.h"
#else
typedef int kern_nn_backward_avx512_unavailable;
#endif
