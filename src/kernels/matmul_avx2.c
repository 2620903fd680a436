/* The matmul with AVX2 and FMA: a MATMUL_MR x 8*MATMUL_NV micro-kernel of
 * FMAs over the packed panels of matmul_internal.h, which also holds the
 * loops around it. Compiled with -mavx2 -mfma; called only when
 * vp_isa_supported(VP_ISA_AVX2). */
#if defined(__x86_64__)

#include <immintrin.h>

#include "kernels/matmul_internal.h"
#include "kernels/kern_variants.h"

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
#define MATMUL_LDA (MATMUL_KC + 16)
#define MATMUL_NR (8 * MATMUL_NV)

/* Lanes of vector v (8 columns) that lie inside the tile's nr_valid
 * columns, as maskload and maskstore take them: all bits set where in. */
static inline __m256i column_mask(size_t nr_valid, int v)
{
    size_t first = 8 * (size_t)v;
    int lanes = nr_valid <= first ? 0 : nr_valid - first >= 8 ? 8 : (int)(nr_valid - first);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static void kernel(size_t kc, const float *restrict a, size_t lda, const float *restrict b,
                   float *restrict c, size_t ldc, const float *restrict init, size_t mr_valid,
                   size_t nr_valid, matmul_next_tile next)
{
    /* the next tile's lines of out, one per 64 bytes, while this one computes */
    if (next.c != NULL)
        for (size_t r = 0; r < next.mr_valid; r++)
            for (size_t j = 0; j < next.nr_valid; j += 16)
                _mm_prefetch((const char *)(next.c + r * ldc + j), _MM_HINT_T0);
    /* rows past mr_valid read row 0 again (x may end there) and are never
       stored */
    const float *row[MATMUL_MR];
#pragma GCC unroll 16
    for (int r = 0; r < MATMUL_MR; r++)
        row[r] = a + ((size_t)r < mr_valid ? (size_t)r : 0) * lda;
    /* the sums start from init (the bias or 0) or from what c holds */
    __m256 acc[MATMUL_MR][MATMUL_NV];
    if (init != NULL) {
#pragma GCC unroll 16
        for (int v = 0; v < MATMUL_NV; v++) {
            __m256 start = _mm256_maskload_ps(init + 8 * v, column_mask(nr_valid, v));
#pragma GCC unroll 16
            for (int r = 0; r < MATMUL_MR; r++)
                acc[r][v] = start;
        }
    } else {
#pragma GCC unroll 16
        for (int r = 0; r < MATMUL_MR; r++)
#pragma GCC unroll 16
            for (int v = 0; v < MATMUL_NV; v++)
                acc[r][v] = (size_t)r < mr_valid
                                ? _mm256_maskload_ps(c + r * ldc + 8 * v,
                                                     column_mask(nr_valid, v))
                                : _mm256_setzero_ps();
    }
#pragma GCC unroll 4
    for (size_t p = 0; p < kc; p++) {
        __m256 w[MATMUL_NV];
#pragma GCC unroll 16
        for (int v = 0; v < MATMUL_NV; v++)
            w[v] = _mm256_loadu_ps(b + 8 * v);
#pragma GCC unroll 16
        for (int r = 0; r < MATMUL_MR; r++) {
            __m256 xr = _mm256_set1_ps(row[r][p]);
#pragma GCC unroll 16
            for (int v = 0; v < MATMUL_NV; v++)
                acc[r][v] = _mm256_fmadd_ps(xr, w[v], acc[r][v]);
        }
        b += MATMUL_NR;
    }
    /* the masks are recomputed here rather than held across the loop: the
       16 registers all carry sums or W there */
#pragma GCC unroll 16
    for (int r = 0; r < MATMUL_MR; r++)
        if ((size_t)r < mr_valid)
#pragma GCC unroll 16
            for (int v = 0; v < MATMUL_NV; v++)
                _mm256_maskstore_ps(c + r * ldc + 8 * v, column_mask(nr_valid, v), acc[r][v]);
}

static const matmul_blocking blocking = {
    .mr = MATMUL_MR, .nr = MATMUL_NR, .kc = MATMUL_KC, .lda = MATMUL_LDA, .mc = MATMUL_MC,
    .rows = 4096 / MATMUL_MR * MATMUL_MR, .kernel = kernel,
};

size_t kern_matmul_packed_floats_avx2(size_t k, size_t m)
{
    return matmul_packed_floats(&blocking, k, m);
}

void kern_matmul_pack_avx2(float *packed, const float *w, size_t k, size_t m)
{
    matmul_pack_w(&blocking, packed, w, k, m);
}

size_t kern_matmul_workspace_floats_avx2(size_t n, size_t k, size_t m)
{
    (void)m;
    return matmul_workspace_floats(&blocking, n, k);
}

void kern_matmul_avx2(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                      const float *bias, size_t n, size_t k, size_t m, float *workspace)
{
    // x, out: (n, k), (n, m) with row strides ldx, ldo; packed: W (m, k)
    matmul_blocked(&blocking, out, ldo, x, ldx, packed, bias, n, k, m, workspace);
}

#else
typedef int matmul_avx2_is_x86_only;
#endif
