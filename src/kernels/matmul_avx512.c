/* The matmul with AVX-512: MR x 16 NV micro-kernels of FMAs over the
 * packed panels of matmul_internal.h, which also holds the loops around
 * them. Compiled with -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma;
 * called only when vp_isa_supported(VP_ISA_AVX512). */
#if defined(__x86_64__)

#include <immintrin.h>

#include "kernels/matmul_internal.h"
#include "kernels/kern_variants.h"

/* Two tiles, of 24 accumulators each (of the 32 registers): enough
 * independent sums to keep both FMA pipes busy through the FMA latency (2
 * pipes x 4 cycles). 6 x 64, four loads of W and six broadcasts of x per 24
 * FMAs, is the fastest at large m: measured on Zen 5 (EPYC, family 26) at
 * 1024^3 against 14 x 32, 12 x 32 and 8 x 48 and KC 256..512, MC 128..512,
 * 93-97 % of the peak. 8 x 48 is there for the m that are multiples of 48
 * and not of 64 (the seed stack's 48 and 96), where 64 wide would leave a
 * quarter of every FMA's lanes empty. KC = 512: an x panel (at most 8 rows
 * of 528 floats, 17 KiB) stays in the 48 KiB L1 while W panels stream
 * past; MC = 256 or 240: a block of packed W (512 x 256 floats, 512 KiB)
 * stays in the 1 MiB L2. */
#define MATMUL_KC 512
#define MATMUL_LDA (MATMUL_KC + 16)

/* Lanes of vector v (16 columns) that lie inside the tile's nr_valid columns. */
static inline __mmask16 column_mask(size_t nr_valid, int v)
{
    size_t first = 16 * (size_t)v;
    size_t lanes = nr_valid <= first ? 0 : nr_valid - first >= 16 ? 16 : nr_valid - first;
    return (__mmask16)((1u << lanes) - 1u);
}

#define MAX_MR 8
#define MAX_NV 4

/* The MR x 16 NV micro-kernel, inlined into each tile's function with its
   MR and NV constant, so that every loop over them unrolls and the sums
   live in registers. */
static inline __attribute__((always_inline)) void
kernel_body(const int MR, const int NV, size_t kc, const float *restrict a, size_t lda,
            const float *restrict b, float *restrict c, size_t ldc, const float *restrict init,
            size_t mr_valid, size_t nr_valid, matmul_next_tile next)
{
    /* the next tile's lines of out, one per 64 bytes, while this one computes */
    if (next.c != NULL)
        for (size_t r = 0; r < next.mr_valid; r++)
            for (size_t j = 0; j < next.nr_valid; j += 16)
                _mm_prefetch((const char *)(next.c + r * ldc + j), _MM_HINT_T0);
    __mmask16 mask[MAX_NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; v++)
        mask[v] = column_mask(nr_valid, v);
    /* rows past mr_valid read row 0 again (x may end there) and are never
       stored */
    const float *row[MAX_MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++)
        row[r] = a + ((size_t)r < mr_valid ? (size_t)r : 0) * lda;
    /* the sums start from init (the bias or 0) or from what c holds */
    __m512 acc[MAX_MR][MAX_NV];
    if (init != NULL) {
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) {
            __m512 start = _mm512_maskz_loadu_ps(mask[v], init + 16 * v);
#pragma GCC unroll 16
            for (int r = 0; r < MR; r++)
                acc[r][v] = start;
        }
    } else {
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++)
#pragma GCC unroll 16
            for (int v = 0; v < NV; v++)
                acc[r][v] = (size_t)r < mr_valid
                                ? _mm512_maskz_loadu_ps(mask[v], c + r * ldc + 16 * v)
                                : _mm512_setzero_ps();
    }
#pragma GCC unroll 4
    for (size_t p = 0; p < kc; p++) {
        __m512 w[MAX_NV];
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++)
            w[v] = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            __m512 xr = _mm512_set1_ps(row[r][p]);
#pragma GCC unroll 16
            for (int v = 0; v < NV; v++)
                acc[r][v] = _mm512_fmadd_ps(xr, w[v], acc[r][v]);
        }
        b += 16 * NV;
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++)
        if ((size_t)r < mr_valid)
#pragma GCC unroll 16
            for (int v = 0; v < NV; v++)
                _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask[v], acc[r][v]);
}

static void kernel_6x64(size_t kc, const float *restrict a, size_t lda, const float *restrict b,
                        float *restrict c, size_t ldc, const float *restrict init,
                        size_t mr_valid, size_t nr_valid, matmul_next_tile next)
{
    kernel_body(6, 4, kc, a, lda, b, c, ldc, init, mr_valid, nr_valid, next);
}

static void kernel_8x48(size_t kc, const float *restrict a, size_t lda, const float *restrict b,
                        float *restrict c, size_t ldc, const float *restrict init,
                        size_t mr_valid, size_t nr_valid, matmul_next_tile next)
{
    kernel_body(8, 3, kc, a, lda, b, c, ldc, init, mr_valid, nr_valid, next);
}

static const matmul_blocking tiles[] = {
    {.mr = 6, .nr = 64, .kc = MATMUL_KC, .lda = MATMUL_LDA, .mc = 256, .rows = 4092,
     .kernel = kernel_6x64},
    {.mr = 8, .nr = 48, .kc = MATMUL_KC, .lda = MATMUL_LDA, .mc = 240, .rows = 4096,
     .kernel = kernel_8x48},
};

static const matmul_blocking *tile_for(size_t m)
{
    return matmul_tile_for(tiles, sizeof tiles / sizeof *tiles, m);
}

size_t kern_matmul_packed_floats_avx512(size_t k, size_t m)
{
    return matmul_packed_floats(tile_for(m), k, m);
}

void kern_matmul_pack_avx512(float *packed, const float *w, size_t k, size_t m)
{
    matmul_pack_w(tile_for(m), packed, w, k, m);
}

size_t kern_matmul_workspace_floats_avx512(size_t n, size_t k, size_t m)
{
    return matmul_workspace_floats(tile_for(m), n, k);
}

void kern_matmul_avx512(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                        const float *bias, size_t n, size_t k, size_t m, float *workspace)
{
    // x, out: (n, k), (n, m) with row strides ldx, ldo; packed: W (m, k)
    matmul_blocked(tile_for(m), out, ldo, x, ldx, packed, bias, n, k, m, workspace);
}

#else
typedef int matmul_avx512_is_x86_only;
#endif
