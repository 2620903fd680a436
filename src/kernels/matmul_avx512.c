/* The matmul with AVX-512: a MATMUL_MR x 16*MATMUL_NV micro-kernel of FMAs
 * over the packed panels of matmul_internal.h, which also holds the loops
 * around it. Compiled with -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma;
 * called only when vp_isa_supported(VP_ISA_AVX512). */
#if defined(__x86_64__)

#include <immintrin.h>

#include "kernels/matmul_internal.h"
#include "kernels/nn_variants.h"

/* 6 x 64: 24 accumulators of the 32 registers, enough independent sums to
 * keep both FMA pipes busy through the FMA latency (2 pipes x 4 cycles);
 * four loads of W and six broadcasts of x per 24 FMAs, well within the
 * load ports. KC = 512: a packed x panel (6 rows of 528 floats, 12 KiB)
 * stays in the 48 KiB L1 while W panels stream past; MC = 256: a block of
 * packed W (512 x 256 floats, 512 KiB) stays in the 1 MiB L2. Measured on
 * Zen 5 (EPYC, family 26) at 1024^3 against 14 x 32, 12 x 32 and 8 x 48 and
 * KC 256..512, MC 128..512: this was the fastest, 93-97 % of the peak.
 * Each MATMUL_* may be set with -D to try others. */
#ifndef MATMUL_MR
#define MATMUL_MR 6
#endif
#ifndef MATMUL_NV
#define MATMUL_NV 4
#endif
#ifndef MATMUL_KC
#define MATMUL_KC 512
#endif
#ifndef MATMUL_MC
#define MATMUL_MC 256
#endif
#define MATMUL_LDA (MATMUL_KC + 16)
#define MATMUL_NR (16 * MATMUL_NV)

static const matmul_blocking blocking = {
    .mr = MATMUL_MR, .nr = MATMUL_NR, .kc = MATMUL_KC, .lda = MATMUL_LDA, .mc = MATMUL_MC,
    .rows = 4096 / MATMUL_MR * MATMUL_MR,
};

/* Lanes of vector v (16 columns) that lie inside the tile's nr_valid columns. */
static inline __mmask16 column_mask(size_t nr_valid, int v)
{
    size_t first = 16 * (size_t)v;
    size_t lanes = nr_valid <= first ? 0 : nr_valid - first >= 16 ? 16 : nr_valid - first;
    return (__mmask16)((1u << lanes) - 1u);
}

static void kernel(size_t kc, const float *restrict a, const float *restrict b,
                   float *restrict c, size_t ldc, const float *restrict init, size_t mr_valid,
                   size_t nr_valid, matmul_next_tile next)
{
    /* the next tile's lines of out, one per 64 bytes, while this one computes */
    if (next.c != NULL)
        for (size_t r = 0; r < next.mr_valid; r++)
            for (size_t j = 0; j < next.nr_valid; j += 16)
                _mm_prefetch((const char *)(next.c + r * ldc + j), _MM_HINT_T0);
    __mmask16 mask[MATMUL_NV];
#pragma GCC unroll 16
    for (int v = 0; v < MATMUL_NV; v++)
        mask[v] = column_mask(nr_valid, v);
    /* the sums start from init (the bias or 0) or from what c holds; rows
       past mr_valid start from 0 and are never stored */
    __m512 acc[MATMUL_MR][MATMUL_NV];
    if (init != NULL) {
#pragma GCC unroll 16
        for (int v = 0; v < MATMUL_NV; v++) {
            __m512 start = _mm512_maskz_loadu_ps(mask[v], init + 16 * v);
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
                                ? _mm512_maskz_loadu_ps(mask[v], c + r * ldc + 16 * v)
                                : _mm512_setzero_ps();
    }
#pragma GCC unroll 4
    for (size_t p = 0; p < kc; p++) {
        __m512 w[MATMUL_NV];
#pragma GCC unroll 16
        for (int v = 0; v < MATMUL_NV; v++)
            w[v] = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 16
        for (int r = 0; r < MATMUL_MR; r++) {
            __m512 xr = _mm512_set1_ps(a[r * MATMUL_LDA]);
#pragma GCC unroll 16
            for (int v = 0; v < MATMUL_NV; v++)
                acc[r][v] = _mm512_fmadd_ps(xr, w[v], acc[r][v]);
        }
        a++;
        b += MATMUL_NR;
    }
#pragma GCC unroll 16
    for (int r = 0; r < MATMUL_MR; r++)
        if ((size_t)r < mr_valid)
#pragma GCC unroll 16
            for (int v = 0; v < MATMUL_NV; v++)
                _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask[v], acc[r][v]);
}

size_t vp_matmul_packed_floats_avx512(size_t k, size_t m)
{
    return matmul_packed_floats(&blocking, k, m);
}

void vp_matmul_pack_avx512(float *packed, const float *w, size_t k, size_t m)
{
    matmul_pack_w(&blocking, packed, w, k, m);
}

size_t vp_matmul_workspace_floats_avx512(size_t n, size_t k, size_t m)
{
    (void)m;
    return matmul_workspace_floats(&blocking, n, k);
}

void vp_matmul_avx512(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                      const float *bias, size_t n, size_t k, size_t m, float *workspace)
{
    // x, out: (n, k), (n, m) with row strides ldx, ldo; packed: W (m, k)
    matmul_blocked(&blocking, kernel, out, ldo, x, ldx, packed, bias, n, k, m, workspace);
}

#else
typedef int matmul_avx512_is_x86_only;
#endif
