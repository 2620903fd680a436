/* The matmul's weight gradient, dW += dy^T x and db += the column sums of
 * dy, written once over the instruction set's own matmul entry points
 * (KERN_FN(kern_matmul_accumulate), ..): included by matmul_body.h for the
 * SIMD sets and by matmul_scalar.c, after KERN_ISA is set. Contract in
 * kern_table.h.
 *
 * dW [m][k] is a matmul with m rows, inner size n and k outputs: its x is
 * dy^T (m rows of n), its W is x^T ([k][n]), which matmul_pack_transposed
 * packs from x as it lies. Both are made in the workspace for a block of
 * GRAD_ROWS rows of dy and x at a time and accumulated into dW: the matmul
 * adds one product per row in row order onto dW's value, so blocks in
 * order give the bits one call over all rows would. GRAD_ROWS = 512 is no
 * more than either SIMD set's KC, so the matmul reads dy^T where it lies. */
#include <stddef.h>
#include <string.h>

#include "kernels/kern_variants.h"

#define GRAD_ROWS 512
/* dy^T's row stride: rows of 512 floats (2 KiB) would share L1 sets */
#define GRAD_LD(rows) ((rows) + 16)
#define GRAD_ALIGN 16 /* floats: a 64-byte line */
/* db's column sums: this many columns at a time, their double sums in
   registers (two AVX2 vectors of doubles) */
#define GRAD_DB_LANES 8

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

/* Eight floats a register: gcc's vector extension, lowered to the set's
   own shuffles (one AVX register on the SIMD sets, pairs of SSE ones on the
   baseline). Moving data only, so every set gives the same bits. */
typedef float grad_v8 __attribute__((vector_size(32)));
typedef int grad_i8 __attribute__((vector_size(32)));

/* dst[j][i] = src[i][j] for an 8 x 8 tile: pairs of rows interleaved,
   then pairs of pairs, then the 128-bit halves swapped (the usual
   unpack, shuffle, permute2f128 ladder). */
static inline void grad_transpose8(float *restrict dst, size_t ldd, const float *restrict src,
                                   size_t lds)
{
    const grad_i8 lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
    const grad_i8 lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
    const grad_i8 lo4 = {0, 1, 2, 3, 8, 9, 10, 11}, hi4 = {4, 5, 6, 7, 12, 13, 14, 15};
    grad_v8 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++)
        memcpy(&r[i], src + (size_t)i * lds, sizeof r[i]);
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shuffle(r[i], r[i + 1], lo);
        t[i + 1] = __builtin_shuffle(r[i], r[i + 1], hi);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = __builtin_shuffle(t[i], t[i + 2], lo2);
        u[i + 1] = __builtin_shuffle(t[i], t[i + 2], hi2);
        u[i + 2] = __builtin_shuffle(t[i + 1], t[i + 3], lo2);
        u[i + 3] = __builtin_shuffle(t[i + 1], t[i + 3], hi2);
    }
    for (int c = 0; c < 4; c++) {
        const grad_v8 low = __builtin_shuffle(u[c], u[c + 4], lo4);
        const grad_v8 high = __builtin_shuffle(u[c], u[c + 4], hi4);
        memcpy(dst + (size_t)c * ldd, &low, sizeof low);
        memcpy(dst + (size_t)(c + 4) * ldd, &high, sizeof high);
    }
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

/* db[j] += sum_i dy[i][j], each column's sum in double in i order: the
   same bits on every set, however it vectorises across columns. Blocks of
   GRAD_DB_LANES columns keep their sums in registers (a loop of constant
   count, which gcc vectorises at -O2); the columns left one at a time. */
static void grad_bias(float *restrict db, const float *restrict dy, size_t ldy, size_t n,
                      size_t m)
{
    size_t j0 = 0;
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

void KERN_FN(kern_matmul_weight_grad)(float *dw, size_t ldw, float *db, const float *dy,
                                      size_t ldy, const float *x, size_t ldx, size_t n, size_t k,
                                      size_t m, float *workspace)
{
    // dy: (n, m) stride ldy; x: (n, k) stride ldx; dw: (m, k) stride ldw; db: (m)
    if (db != NULL)
        grad_bias(db, dy, ldy, n, m);
    if (n == 0 || k == 0 || m == 0)
        return;
    const size_t ldt = GRAD_LD(grad_rows(n));
    float *dyt = grad_align(workspace);
    float *packed = grad_align(dyt + m * ldt);
    float *inner = grad_align(packed + KERN_FN(kern_matmul_packed_floats)(grad_rows(n), k));
    for (size_t i0 = 0; i0 < n; i0 += GRAD_ROWS) {
        size_t rows = n - i0 < GRAD_ROWS ? n - i0 : GRAD_ROWS;
        grad_transpose(dyt, ldt, dy + i0 * ldy, ldy, rows, m);
        /* x's block [rows][k] is the transpose of the W [k][rows] wanted */
        KERN_FN(kern_matmul_pack_transposed)(packed, x + i0 * ldx, ldx, rows, k);
        KERN_FN(kern_matmul_accumulate)(dw, ldw, dyt, ldt, packed, m, rows, k, inner);
    }
}

#undef GRAD_ROWS
#undef GRAD_LD
#undef GRAD_ALIGN
#undef GRAD_DB_LANES
