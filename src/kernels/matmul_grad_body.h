/* The matmul's weight gradient, dW += dy^T x and db += the column sums of
 * dy, written once over the instruction set's own matmul entry points
 * (KERN_FN(kern_matmul_accumulate), ..): included by matmul_body.h for the
 * SIMD sets and by matmul_scalar.c, after KERN_ISA is set. Contract in
 * kern_table.h.
 *
 * dW [m][k] is a matmul with m rows, inner size n and k outputs: its x is
 * dy^T (m rows of n), read in dy by the SIMD sets' xt kernels when dy is
 * small (matmul_small), else transposed into the workspace; its W is x^T
 * ([k][n]), whose transpose x is read where it lies (matmul_wt_columns)
 * when it is small (matmul_wt_fits), else packed there
 * (matmul_pack_transposed). Both go a block of GRAD_ROWS rows of dy and x
 * at a time, accumulated into dW: the matmul adds one product per row in
 * row order onto dW's value, so blocks in order give the bits one call
 * over all rows would. GRAD_ROWS = 512 is no more than either SIMD set's
 * KC, so the matmul reads a transposed dy^T where it lies. */
#include <stddef.h>
#include <string.h>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/kern_variants.h"

#define GRAD_ROWS 512
/* dy^T's row stride: rows of 512 floats (2 KiB) would share L1 sets */
#define GRAD_LD(rows) ((rows) + 16)
#define GRAD_ALIGN 16 /* floats: a 64-byte line */
/* db's column sums: this many columns at a time, their double sums in
   registers (two AVX2 vectors of doubles), and blocks of GRAD_DB_WIDE
   columns before them: eight such chains of dependent adds side by side,
   where one block's two were bound by the add's latency (the bias sums
   were two thirds of weight_grad's own time in the seed's training) */
#define GRAD_DB_LANES 8
#define GRAD_DB_WIDE 32

static size_t grad_rows(size_t n)
{
    return n < GRAD_ROWS ? n : GRAD_ROWS;
}

size_t KERN_FN(kern_matmul_weight_grad_workspace_floats)(size_t n, size_t k, size_t m)
{
    size_t rows = grad_rows(n);
    return m * GRAD_LD(rows) + KERN_FN(kern_matmul_packed_floats)(rows, k) +
           KERN_FN(kern_matmul_workspace_floats)(m, rows, k) + 3 * GRAD_ALIGN;
}

static float *grad_align(float *p)
{
    size_t misalign = ((size_t)p / sizeof(float)) % GRAD_ALIGN;
    return p + (misalign ? GRAD_ALIGN - misalign : 0);
}

/* Eight floats a register: the compilers' vector extension, lowered to the
   set's own shuffles (one AVX register on the SIMD sets, pairs of SSE ones
   on the baseline). Moving data only, so every set gives the same bits.
   gcc spells a constant shuffle __builtin_shuffle, clang (clang-tidy)
   __builtin_shufflevector. */
typedef float grad_v8 __attribute__((vector_size(32)));
#if defined(__clang__)
#define GRAD_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
typedef int grad_i8 __attribute__((vector_size(32)));
#define GRAD_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, (grad_i8){__VA_ARGS__})
#endif
/* pairs of rows interleaved, pairs of pairs, 128-bit halves joined */
#define GRAD_LO(a, b) GRAD_SHUFFLE(a, b, 0, 8, 1, 9, 4, 12, 5, 13)
#define GRAD_HI(a, b) GRAD_SHUFFLE(a, b, 2, 10, 3, 11, 6, 14, 7, 15)
#define GRAD_LO2(a, b) GRAD_SHUFFLE(a, b, 0, 1, 8, 9, 4, 5, 12, 13)
#define GRAD_HI2(a, b) GRAD_SHUFFLE(a, b, 2, 3, 10, 11, 6, 7, 14, 15)
#define GRAD_LO4(a, b) GRAD_SHUFFLE(a, b, 0, 1, 2, 3, 8, 9, 10, 11)
#define GRAD_HI4(a, b) GRAD_SHUFFLE(a, b, 4, 5, 6, 7, 12, 13, 14, 15)

/* dst[j][i] = src[i][j] for an 8 x 8 tile (the usual unpack, shuffle,
   permute2f128 ladder), written out so that every value is plainly set. */
static inline void grad_transpose8(float *restrict dst, size_t ldd, const float *restrict src,
                                   size_t lds)
{
    grad_v8 r0, r1, r2, r3, r4, r5, r6, r7;
    memcpy(&r0, src + 0 * lds, sizeof r0);
    memcpy(&r1, src + 1 * lds, sizeof r1);
    memcpy(&r2, src + 2 * lds, sizeof r2);
    memcpy(&r3, src + 3 * lds, sizeof r3);
    memcpy(&r4, src + 4 * lds, sizeof r4);
    memcpy(&r5, src + 5 * lds, sizeof r5);
    memcpy(&r6, src + 6 * lds, sizeof r6);
    memcpy(&r7, src + 7 * lds, sizeof r7);
    const grad_v8 t0 = GRAD_LO(r0, r1), t1 = GRAD_HI(r0, r1);
    const grad_v8 t2 = GRAD_LO(r2, r3), t3 = GRAD_HI(r2, r3);
    const grad_v8 t4 = GRAD_LO(r4, r5), t5 = GRAD_HI(r4, r5);
    const grad_v8 t6 = GRAD_LO(r6, r7), t7 = GRAD_HI(r6, r7);
    const grad_v8 u0 = GRAD_LO2(t0, t2), u1 = GRAD_HI2(t0, t2);
    const grad_v8 u2 = GRAD_LO2(t1, t3), u3 = GRAD_HI2(t1, t3);
    const grad_v8 u4 = GRAD_LO2(t4, t6), u5 = GRAD_HI2(t4, t6);
    const grad_v8 u6 = GRAD_LO2(t5, t7), u7 = GRAD_HI2(t5, t7);
    const grad_v8 c0 = GRAD_LO4(u0, u4), c4 = GRAD_HI4(u0, u4);
    const grad_v8 c1 = GRAD_LO4(u1, u5), c5 = GRAD_HI4(u1, u5);
    const grad_v8 c2 = GRAD_LO4(u2, u6), c6 = GRAD_HI4(u2, u6);
    const grad_v8 c3 = GRAD_LO4(u3, u7), c7 = GRAD_HI4(u3, u7);
    memcpy(dst + 0 * ldd, &c0, sizeof c0);
    memcpy(dst + 1 * ldd, &c1, sizeof c1);
    memcpy(dst + 2 * ldd, &c2, sizeof c2);
    memcpy(dst + 3 * ldd, &c3, sizeof c3);
    memcpy(dst + 4 * ldd, &c4, sizeof c4);
    memcpy(dst + 5 * ldd, &c5, sizeof c5);
    memcpy(dst + 6 * ldd, &c6, sizeof c6);
    memcpy(dst + 7 * ldd, &c7, sizeof c7);
}

/* dyt[j][r] = dy[r][j], r < rows, j < m: whole 8 x 8 tiles in registers,
   the edges one float at a time. This is the weight gradient's packing of
   dy^T; one element at a time it took a sixth of dW's time at AVX-512's
   speed (bench_matmul, 512 x 512 x 2048). */
static void grad_transpose(float *restrict dyt, size_t ldt, const float *restrict dy, size_t ldy,
                           size_t rows, size_t m)
{
    const size_t rows8 = rows - rows % 8, m8 = m - m % 8;
    for (size_t r0 = 0; r0 < rows8; r0 += 8)
        for (size_t j0 = 0; j0 < m8; j0 += 8)
            grad_transpose8(dyt + j0 * ldt + r0, ldt, dy + r0 * ldy + j0, ldy);
    for (size_t j = m8; j < m; j++) /* the last columns, every row */
        for (size_t r = 0; r < rows; r++)
            dyt[j * ldt + r] = dy[r * ldy + j];
    for (size_t r = rows8; r < rows; r++) /* the last rows, the tiled columns */
        for (size_t j = 0; j < m8; j++)
            dyt[j * ldt + r] = dy[r * ldy + j];
}

/* Floats widened to doubles, as many as fill one of the set's registers
   (gcc's own conversion of a vector of four floats went two at a time) */
#if defined(__AVX512F__)
typedef double grad_wide __attribute__((vector_size(64)));
#define GRAD_WIDE_LANES 8
static inline grad_wide grad_widen(const float *p)
{
    return (grad_wide)_mm512_cvtps_pd(_mm256_loadu_ps(p));
}
#elif defined(__AVX2__)
typedef double grad_wide __attribute__((vector_size(32)));
#define GRAD_WIDE_LANES 4
static inline grad_wide grad_widen(const float *p)
{
    return (grad_wide)_mm256_cvtps_pd(_mm_loadu_ps(p));
}
#else
typedef double grad_wide __attribute__((vector_size(16)));
#define GRAD_WIDE_LANES 2
static inline grad_wide grad_widen(const float *p)
{
    return (grad_wide){p[0], p[1]};
}
#endif

/* db[j] += sum_i dy[i][j] (accumulate) or = it, each column's sum in double
   in i order: the same bits on every set, however it vectorises across
   columns. Blocks of GRAD_DB_LANES columns keep their sums in registers (a
   loop of constant count, which gcc vectorises at -O2); the columns left
   one at a time. A sum from 0.0 is never -0.0, so setting gives the bits
   of adding to 0. */
static void grad_bias(float *restrict db, const float *restrict dy, size_t ldy, size_t n, size_t m,
                      int accumulate)
{
    if (!accumulate)
        memset(db, 0, m * sizeof *db); /* m floats, against dW's m k */
    size_t j0 = 0;
    for (; j0 + GRAD_DB_WIDE <= m; j0 += GRAD_DB_WIDE) {
        grad_wide acc[GRAD_DB_WIDE / GRAD_WIDE_LANES];
#pragma GCC unroll 16
        for (size_t v = 0; v < GRAD_DB_WIDE / GRAD_WIDE_LANES; v++)
            acc[v] = (grad_wide){0};
        for (size_t i = 0; i < n; i++)
#pragma GCC unroll 16
            for (size_t v = 0; v < GRAD_DB_WIDE / GRAD_WIDE_LANES; v++)
                acc[v] += grad_widen(dy + i * ldy + j0 + v * GRAD_WIDE_LANES);
        double sum[GRAD_DB_WIDE];
        for (size_t v = 0; v < GRAD_DB_WIDE / GRAD_WIDE_LANES; v++)
            memcpy(sum + v * GRAD_WIDE_LANES, &acc[v], sizeof acc[v]);
        for (size_t c = 0; c < GRAD_DB_WIDE; c++)
            db[j0 + c] = (float)(db[j0 + c] + sum[c]);
    }
    for (; j0 + GRAD_DB_LANES <= m; j0 += GRAD_DB_LANES) {
        double sum[GRAD_DB_LANES] = {0};
        for (size_t i = 0; i < n; i++)
            for (size_t c = 0; c < GRAD_DB_LANES; c++)
                sum[c] += dy[i * ldy + j0 + c];
        for (size_t c = 0; c < GRAD_DB_LANES; c++)
            db[j0 + c] = (float)(db[j0 + c] + sum[c]);
    }
    for (; j0 < m; j0++) {
        double sum = 0.0;
        for (size_t i = 0; i < n; i++)
            sum += dy[i * ldy + j0];
        db[j0] = (float)(db[j0] + sum);
    }
}

void KERN_FN(kern_matmul_weight_grad)(float *dw, size_t ldw, float *db, const float *dy, size_t ldy,
                                      const float *x, size_t ldx, size_t n, size_t k, size_t m,
                                      int accumulate, float *workspace)
{
    // dy: (n, m) stride ldy; x: (n, k) stride ldx; dw: (m, k) stride ldw; db: (m)
    if (db != NULL)
        grad_bias(db, dy, ldy, n, m, accumulate);
    if (k == 0 || m == 0)
        return;
    if (n == 0) { /* no rows: a sum of nothing */
        for (size_t j = 0; !accumulate && j < m; j++)
            memset(dw + j * ldw, 0, k * sizeof *dw);
        return;
    }
    const size_t ldt = GRAD_LD(grad_rows(n));
    float *dyt = grad_align(workspace);
    float *packed = grad_align(dyt + m * ldt);
    float *inner = grad_align(packed + KERN_FN(kern_matmul_packed_floats)(grad_rows(n), k));
    for (size_t i0 = 0; i0 < n; i0 += GRAD_ROWS) {
        const size_t rows = n - i0 < GRAD_ROWS ? n - i0 : GRAD_ROWS;
        /* the first block from zeros, unless dw's own values start the sums */
        const int onto_dw = i0 > 0 || accumulate;
        /* x's block [rows][k] is the transpose of the W [k][rows] wanted:
           read where it lies when it is small, else packed */
        const float *xb = x + i0 * ldx;
        const int x_in_place = KERN_FN(kern_matmul_wt_fits)(rows, k, ldx);
        if (!x_in_place)
            KERN_FN(kern_matmul_pack_transposed)(packed, xb, ldx, rows, k);
#ifdef SIMD_W
        /* a small dy is read as dy^T where it lies, its rows' MR values
           broadcast (the xt kernels) */
        if (matmul_small(tile_for(k), rows, ldy)) {
            const matmul_w w =
                x_in_place ? (matmul_w){.wt = xb, .ldwt = ldx} : (matmul_w){.packed = packed};
            matmul_blocked(tile_for(k), dw, ldw, dy + i0 * ldy, ldy, 1, &w, NULL, m, rows, k, 0, k,
                           inner, onto_dw);
            continue;
        }
#endif
        grad_transpose(dyt, ldt, dy + i0 * ldy, ldy, rows, m);
        if (x_in_place)
            KERN_FN(kern_matmul_wt_columns)
        (dw, ldw, dyt, ldt, xb, ldx, NULL, m, rows, k, 0, k, onto_dw, inner);
        else if (!onto_dw) KERN_FN(kern_matmul)(dw, ldw, dyt, ldt, packed, NULL, m, rows, k, inner);
        else KERN_FN(kern_matmul_accumulate)(dw, ldw, dyt, ldt, packed, m, rows, k, inner);
    }
}

#undef GRAD_ROWS
#undef GRAD_LD
#undef GRAD_ALIGN
#undef GRAD_DB_LANES
#undef GRAD_DB_WIDE
#undef GRAD_WIDE_LANES
#undef GRAD_SHUFFLE
#undef GRAD_LO
#undef GRAD_HI
#undef GRAD_LO2
#undef GRAD_HI2
#undef GRAD_LO4
#undef GRAD_HI4
