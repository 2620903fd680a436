/* The matmul with AVX-512: matmul_body.h over simd_avx512.h, two tiles.
 * Compiled with the AVX-512 flags (the Makefile); called only when
 * vp_isa_supported(VP_ISA_AVX512). */
#if defined(__x86_64__)

#define KERN_ISA avx512
#include "kernels/simd_avx512.h"
#include "kernels/matmul_body.h"

/* Two tiles, of 24 accumulators each (of the 32 registers): enough
 * independent sums to keep both FMA pipes busy through the FMA latency (2
 * pipes x 4 cycles). 6 x 64, four loads of W and six broadcasts of x per 24
 * FMAs, is the fastest at large m: measured on Zen 5 (EPYC, family 26) at
 * 1024^3 against 14 x 32, 12 x 32 and 8 x 48 and KC 256..512, MC 128..512
 * (figures in tests/bench/RESULTS.md). 8 x 48 is there for the m that are
 * multiples of 48 and not of 64 (the seed stack's 48 and 96), where 64 wide would leave a
 * quarter of every FMA's lanes empty. KC and MC follow the caches
 * (matmul_block_for_caches): on Zen 5, KC = 512, an x panel (at most 8 rows
 * of 528 floats, 17 KiB) in the 48 KiB L1 while W panels stream past, and
 * MC = 256 or 240, a block of packed W (512 x 256 floats, 512 KiB) in the
 * 1 MiB L2. */
MATMUL_KERNEL(kernel_6x64, 6, 4)
MATMUL_KERNEL(kernel_8x48, 8, 3)
MATMUL_AHEAD_KERNEL(kernel_6x64_ahead, 6, 4)
MATMUL_AHEAD_KERNEL(kernel_8x48_ahead, 8, 3)
MATMUL_EDGE_KERNELS(edge_64, 4)
MATMUL_EDGE_KERNELS(edge_48, 3)
MATMUL_XT_KERNEL(kernel_6x64_xt, 6, 4)
MATMUL_XT_KERNEL(kernel_8x48_xt, 8, 3)
MATMUL_XT_EDGE_KERNELS(edge_64_xt, 4)
MATMUL_XT_EDGE_KERNELS(edge_48_xt, 3)

/* kc, lda and mc from the caches on first use (MATMUL_TILES_FROM_CACHES) */
static matmul_blocking tiles[] = {
    {.mr = 6,
     .nr = 64,
     .rows = 4092,
     .kernel = kernel_6x64,
     .kernel_ahead = kernel_6x64_ahead,
     .edge = edge_64,
     .kernel_xt = kernel_6x64_xt,
     .edge_xt = edge_64_xt},
    {.mr = 8,
     .nr = 48,
     .rows = 4096,
     .kernel = kernel_8x48,
     .kernel_ahead = kernel_8x48_ahead,
     .edge = edge_48,
     .kernel_xt = kernel_8x48_xt,
     .edge_xt = edge_48_xt},
};

MATMUL_TILES_FROM_CACHES(tiles)

#else
typedef int matmul_avx512_is_x86_only;
#endif
