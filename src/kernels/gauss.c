/* The Gaussian generator's public entry points (include/varprof/gauss.h):
 * the variant of the kernel table in use, or of the one asked for. */
#include "kernels/kern_table.h"
#include "varprof/gauss.h"

void vp_gauss_fill_with(vp_isa isa, float *out, size_t n, uint64_t seed, uint32_t token,
                        uint32_t sub_block, uint64_t first)
{
    kern_for(isa)->gauss_fill(out, n, seed, token, sub_block, first);
}

void vp_gauss_fill(float *out, size_t n, uint64_t seed, uint32_t token, uint32_t sub_block,
                   uint64_t first)
{
    kern_current()->gauss_fill(out, n, seed, token, sub_block, first);
}
