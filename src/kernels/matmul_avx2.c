/* The matmul with AVX2 and FMA: matmul_body.h over simd_avx2.h, one tile of
 * MATMUL_MR x 8 MATMUL_NV. Compiled with the AVX2 flags (the Makefile);
 * called only when vp_isa_supported(VP_ISA_AVX2). */
#if defined(__x86_64__)

#define KERN_ISA avx2
#include "kernels/simd_avx2.h"
#include "kernels/matmul_body.h"

/* 6 x 16: 12 accumulators of the 16 registers, two loads of W and 6
 * broadcasts of x per 12 FMAs. KC and MC follow the caches
 * (matmul_block_for_caches): a packed x panel (6 rows of KC floats) in a
 * third of L1, a block of W (KC x MC floats) in half of L2. */
#ifndef MATMUL_MR
#define MATMUL_MR 6
#endif
#ifndef MATMUL_NV
#define MATMUL_NV 2
#endif

MATMUL_KERNEL(kernel, MATMUL_MR, MATMUL_NV)
MATMUL_AHEAD_KERNEL(kernel_ahead, MATMUL_MR, MATMUL_NV)
MATMUL_EDGE_KERNELS(edge, MATMUL_NV)
MATMUL_XT_KERNEL(kernel_xt, MATMUL_MR, MATMUL_NV)
MATMUL_XT_EDGE_KERNELS(edge_xt, MATMUL_NV)

/* kc, lda and mc from the caches on first use (MATMUL_TILES_FROM_CACHES) */
static matmul_blocking tiles[] = {
    {.mr = MATMUL_MR,
     .nr = 8 * MATMUL_NV,
     .rows = 4096 / MATMUL_MR * MATMUL_MR,
     .kernel = kernel,
     .kernel_ahead = kernel_ahead,
     .edge = edge,
     .kernel_xt = kernel_xt,
     .edge_xt = edge_xt},
};

MATMUL_TILES_FROM_CACHES(tiles)

#else
typedef int matmul_avx2_is_x86_only;
#endif
