/* The Monte Carlo's loops for any machine: the reference the SIMD builds equal. */
#define MC_LOOPS_NAME kern_mc_loops_scalar
#include "mc_loops_body.h"

const kern_mc_loops *kern_mc_loops_for(vp_isa isa)
{
#if defined(__x86_64__)
    if (isa == VP_ISA_AVX512)
        return &kern_mc_loops_avx512;
    if (isa == VP_ISA_AVX2)
        return &kern_mc_loops_avx2;
#endif
    (void)isa;
    return &kern_mc_loops_scalar;
}
