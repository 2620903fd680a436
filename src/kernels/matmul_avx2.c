/* The matmul with AVX2 and FMA: matmul_body.h over simd_avx2.h, one tile of
 * MATMUL_MR x 8 MATMUL_NV. Compiled with the AVX2 flags (the Makefile);
 * called only when vp_isa_supported(VP_ISA_AVX2). */
#if defined(__x86_64__)

#define KERN_ISA avx2
#include "kernels/simd_avx2.h"
#include "kernels/matmul_body.h"

/* 6 x 16: 12 accumulators of the 16 registers, two loads of W and 6
 * broadcasts of x per 12 FMAs. KC: a packed x panel (6 x 512 floats,
 * 12 KiB) stays in L1; MC: a block of W (512 x 256 floats, 512 KiB) in L2. */
#ifndef MATMUL_MR
#define MATMUL_MR 6
#endif
#ifndef MATMUL_NV
#define MATMUL_NV 2
#endif
#ifndef MATMUL_KC
#define MATMUL_KC 512
#endif
#ifndef MATMUL_MC
#define MATMUL_MC 256
#endif

MATMUL_KERNEL(kernel, MATMUL_MR, MATMUL_NV)

static const matmul_blocking tiles[] = {
    {.mr = MATMUL_MR,
     .nr = 8 * MATMUL_NV,
     .kc = MATMUL_KC,
     .lda = MATMUL_KC + 16,
     .mc = MATMUL_MC,
     .rows = 4096 / MATMUL_MR * MATMUL_MR,
     .kernel = kernel},
};

static const matmul_blocking *tile_for(size_t m)
{
    return matmul_tile_for(tiles, sizeof tiles / sizeof *tiles, m);
}

#else
typedef int matmul_avx2_is_x86_only;
#endif
