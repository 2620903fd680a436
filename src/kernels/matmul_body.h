/* The matmul on vectors: the MR x NV SIMD_W micro-kernel written once over
 * the operations of a mapping header (simd_avx2.h, simd_avx512.h), and the
 * entry points around matmul_internal.h's packing and blocked loops.
 * Included once per instruction set after its mapping, with KERN_ISA set to
 * the set's suffix (kern_variants.h); the including file then makes its
 * tiles' kernels with MATMUL_KERNEL and defines tile_for, the tile for m
 * (matmul_tile_for over its table). Contract in kern_list.h; the order of
 * the sums in matmul_internal.h. */
#include "kernels/kern_variants.h"
#include "kernels/matmul_internal.h"

#define MATMUL_MAX_MR 8
#define MATMUL_MAX_NV 4

/* The tile of the including file's table for m. */
static const matmul_blocking *tile_for(size_t m); /* the variant's MATMUL_TILES_FROM_CACHES */

/* The mask of vector v's lanes (SIMD_W columns) inside the tile's nr_valid
   columns. */
static inline vm column_mask(size_t nr_valid, int v)
{
    size_t first = SIMD_W * (size_t)v;
    return vm_first(nr_valid <= first ? 0 : nr_valid - first >= SIMD_W ? SIMD_W : nr_valid - first);
}

/* One p of the micro-kernel: acc[r][v] += x[r][p] * W's vector v at p;
   x[r][p] is row[r][p], or xp[r] when x is given transposed (XT: xp is
   x^T's row p, the tile's MR values side by side). */
static inline __attribute__((always_inline)) void
kernel_step(const int MR, const int NV, const int XT, const float *const *row, const float *xp,
            size_t p, const float *b, vf acc[MATMUL_MAX_MR][MATMUL_MAX_NV])
{
    vf w[MATMUL_MAX_NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; v++)
        w[v] = vf_load(b + SIMD_W * v);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        const vf xr = vf_set1(XT ? xp[r] : row[r][p]);
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++)
            acc[r][v] = vf_fmadd(xr, w[v], acc[r][v]);
    }
}

/* The MR x NV SIMD_W micro-kernel (matmul_internal.h's matmul_kernel_fn),
   inlined into each tile's function with its MR and NV constant, so that
   every loop over them unrolls and the sums live in registers. With XT,
   a is x^T: x[r][p] at a[p lda + r], and mr_valid is MR (matmul_block
   calls the edge kernel of exactly the rows left). */
static inline __attribute__((always_inline)) void
kernel_body(const int MR, const int NV, const int AHEAD, const int XT, size_t kc,
            const float *restrict a, size_t lda, const float *restrict b, size_t ldb,
            float *restrict c, size_t ldc, const float *restrict init, size_t mr_valid,
            size_t nr_valid, const matmul_next_tile *next, const float *ahead, size_t ahead_lines)
{
    /* the next tile's lines of out, one per 64 bytes, while this one computes */
    if (next->c != NULL)
        for (size_t r = 0; r < next->mr_valid; r++)
            for (size_t j = 0; j < next->nr_valid; j += 16)
                __builtin_prefetch(next->c + r * ldc + j, 0, 3);
    /* rows past mr_valid read row 0 again (x may end there) and are never
       stored */
    const float *row[MATMUL_MAX_MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++)
        row[r] = a + ((size_t)r < mr_valid ? (size_t)r : 0) * lda;
    const float *xp = a; /* XT: x^T's row p */
    /* the column masks, made here and again after the loop rather than
       held across it: AVX2's are vectors, and there every vector register
       carries sums or W */
    vm mask[MATMUL_MAX_NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; v++)
        mask[v] = column_mask(nr_valid, v);
    /* the sums start from init (the bias or 0) or from what c holds */
    vf acc[MATMUL_MAX_MR][MATMUL_MAX_NV];
    if (init != NULL) {
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) {
            vf start = vf_load_mask(init + SIMD_W * v, mask[v]);
#pragma GCC unroll 16
            for (int r = 0; r < MR; r++)
                acc[r][v] = start;
        }
    } else {
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++)
#pragma GCC unroll 16
            for (int v = 0; v < NV; v++)
                acc[r][v] = (size_t)r < mr_valid ? vf_load_mask(c + r * ldc + SIMD_W * v, mask[v])
                                                 : vf_zero();
    }
    /* with AHEAD, first the p that prefetch ahead_lines lines of the next
       block's W, one every fourth p, so that the loads of W and x never
       wait behind a burst of them; then the rest, without */
    size_t p = 0;
    if (AHEAD) {
        const size_t p_ahead = matmul_min(kc, 4 * ahead_lines) / 4 * 4;
        if (MR * NV + NV + 3 <= SIMD_REGISTERS) { /* room for four steps at once */
            for (; p < p_ahead; p += 4) {
                __builtin_prefetch(ahead, 0, 2); /* prefetcht1: into L2 */
                ahead += 16;
#pragma GCC unroll 4
                for (size_t q = p; q < p + 4; q++) {
                    kernel_step(MR, NV, XT, row, xp, q, b, acc);
                    b += ldb;
                    xp += XT ? lda : 0;
                }
            }
        } else {
            /* a step at a time: unrolled by four, gcc found too few of
               AVX2's sixteen registers for 6 x 16 and kept a sum on the
               stack, which slowed calls whose W comes from L3 or memory */
#pragma GCC unroll 1
            for (; p < p_ahead; p++) {
                if ((p & 3) == 0) {
                    __builtin_prefetch(ahead, 0, 2);
                    ahead += 16;
                }
                kernel_step(MR, NV, XT, row, xp, p, b, acc);
                b += ldb;
                xp += XT ? lda : 0;
            }
        }
    }
#pragma GCC unroll 4
    for (; p < kc; p++) {
        kernel_step(MR, NV, XT, row, xp, p, b, acc);
        b += ldb;
        xp += XT ? lda : 0;
    }
#pragma GCC unroll 16
    for (int v = 0; v < NV; v++)
        mask[v] = column_mask(nr_valid, v);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++)
        if ((size_t)r < mr_valid)
#pragma GCC unroll 16
            for (int v = 0; v < NV; v++)
                vf_store_mask(c + r * ldc + SIMD_W * v, mask[v], acc[r][v]);
}

/* static void NAME(..): the micro-kernel of MR rows and NV vectors, x
   given as x^T when XT is 1. */
#define MATMUL_KERNEL_XT(NAME, MR, NV, XT)                                                         \
    static void NAME(size_t kc, const float *restrict a, size_t lda, const float *restrict b,      \
                     size_t ldb, float *restrict c, size_t ldc, const float *restrict init,        \
                     size_t mr_valid, size_t nr_valid, const matmul_next_tile *next)               \
    {                                                                                              \
        kernel_body(MR, NV, 0, XT, kc, a, lda, b, ldb, c, ldc, init, mr_valid, nr_valid, next,     \
                    NULL, 0);                                                                      \
    }
#define MATMUL_KERNEL(NAME, MR, NV) MATMUL_KERNEL_XT(NAME, MR, NV, 0)
/* the same kernel with x given as x^T (a row of x^T per p, its MR values
   broadcast): the weight gradient's dy^T read in dy */
#define MATMUL_XT_KERNEL(NAME, MR, NV) MATMUL_KERNEL_XT(NAME, MR, NV, 1)

/* static void NAME(..): the same kernel, prefetching the next block's W
   as it goes (matmul_ahead_kernel_fn). */
#define MATMUL_AHEAD_KERNEL(NAME, MR, NV)                                                          \
    static void NAME(size_t kc, const float *restrict a, size_t lda, const float *restrict b,      \
                     size_t ldb, float *restrict c, size_t ldc, const float *restrict init,        \
                     size_t mr_valid, size_t nr_valid, const matmul_next_tile *next,               \
                     const float *ahead, size_t ahead_lines)                                       \
    {                                                                                              \
        kernel_body(MR, NV, 1, 0, kc, a, lda, b, ldb, c, ldc, init, mr_valid, nr_valid, next,      \
                    ahead, ahead_lines);                                                           \
    }

/* static const matmul_kernel_fn NAME[MATMUL_MAX_MR]: kernels of 1 to
   MATMUL_MAX_MR - 1 rows and NV vectors, a tile's edge (matmul_blocking),
   each made by KERNEL (MATMUL_KERNEL or MATMUL_XT_KERNEL). The sums are
   the full tile's, element by element, so the bits are too. */
#define MATMUL_EDGES(KERNEL, NAME, NV)                                                             \
    KERNEL(NAME##_1, 1, NV)                                                                        \
    KERNEL(NAME##_2, 2, NV)                                                                        \
    KERNEL(NAME##_3, 3, NV)                                                                        \
    KERNEL(NAME##_4, 4, NV)                                                                        \
    KERNEL(NAME##_5, 5, NV)                                                                        \
    KERNEL(NAME##_6, 6, NV)                                                                        \
    KERNEL(NAME##_7, 7, NV)                                                                        \
    static const matmul_kernel_fn NAME[MATMUL_MAX_MR] = {NULL,     NAME##_1, NAME##_2, NAME##_3,   \
                                                         NAME##_4, NAME##_5, NAME##_6, NAME##_7};
#define MATMUL_EDGE_KERNELS(NAME, NV) MATMUL_EDGES(MATMUL_KERNEL, NAME, NV)
#define MATMUL_XT_EDGE_KERNELS(NAME, NV) MATMUL_EDGES(MATMUL_XT_KERNEL, NAME, NV)

size_t KERN_FN(kern_matmul_packed_floats)(size_t k, size_t m)
{
    return matmul_packed_floats(tile_for(m), k, m);
}

/* W (m rows of k) into panels (matmul_internal.h): each panel's NR rows of
   W side by side for every p, a transpose, made SIMD_W x SIMD_W floats at a
   time in registers; rows past m, and p past the block, read as zeros (and
   the latter are not stored). nr is a whole number of vectors. */
static void pack_w(const matmul_blocking *bk, float *packed, const float *w, size_t k, size_t m)
{
    const size_t nr = bk->nr, mpad = matmul_round_up(m, nr);
    for (size_t pc = 0; pc < k; pc += bk->kc) {
        const size_t kc = matmul_min(bk->kc, k - pc);
        for (size_t jr = 0; jr < mpad; jr += nr) {
            float *panel = packed + pc * mpad + jr * kc;
            for (size_t c0 = 0; c0 < nr; c0 += SIMD_W)
                for (size_t p0 = 0; p0 < kc; p0 += SIMD_W) {
                    const size_t valid = matmul_min(SIMD_W, kc - p0);
                    vf block[SIMD_W];
#pragma GCC unroll 16
                    for (size_t i = 0; i < SIMD_W; i++) {
                        const size_t j = jr + c0 + i;
                        block[i] = j < m ? vf_load_first(w + j * k + pc + p0, valid) : vf_zero();
                    }
                    vf_transpose(block);
                    if (valid == SIMD_W) /* constant bounds: block stays in registers */
#pragma GCC unroll 16
                        for (size_t q = 0; q < SIMD_W; q++)
                            vf_store(panel + (p0 + q) * nr + c0, block[q]);
                    else
                        for (size_t q = 0; q < valid; q++)
                            vf_store(panel + (p0 + q) * nr + c0, block[q]);
                }
        }
    }
}

void KERN_FN(kern_matmul_pack)(float *packed, const float *w, size_t k, size_t m)
{
    pack_w(tile_for(m), packed, w, k, m);
}

size_t KERN_FN(kern_matmul_workspace_floats)(size_t n, size_t k, size_t m)
{
    return matmul_workspace_floats(tile_for(m), n, k);
}

void KERN_FN(kern_matmul)(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                          const float *bias, size_t n, size_t k, size_t m, float *workspace)
{
    // x, out: (n, k), (n, m) with row strides ldx, ldo; packed: W (m, k)
    const matmul_w w = {.packed = packed};
    matmul_blocked(tile_for(m), out, ldo, x, ldx, 0, &w, bias, n, k, m, 0, m, workspace, 0);
}

size_t KERN_FN(kern_matmul_column_block)(size_t m)
{
    return tile_for(m)->nr;
}

size_t KERN_FN(kern_matmul_row_block)(size_t m)
{
    return tile_for(m)->mr;
}

void KERN_FN(kern_matmul_columns)(float *out, size_t ldo, const float *x, size_t ldx,
                                  const float *packed, const float *bias, size_t n, size_t k,
                                  size_t m, size_t j0, size_t j1, float *workspace)
{
    // x, out: (n, k), (n, m) with row strides ldx, ldo; packed: W (m, k); columns j0 .. j1 - 1
    const matmul_w w = {.packed = packed};
    matmul_blocked(tile_for(m), out, ldo, x, ldx, 0, &w, bias, n, k, m, j0, j1, workspace, 0);
}

size_t KERN_FN(kern_matmul_drawn_workspace_floats)(size_t n, size_t k, size_t m)
{
    return matmul_drawn_workspace_floats(tile_for(m), n, k);
}

void KERN_FN(kern_matmul_drawn_columns)(float *out, size_t ldo, const float *x, size_t ldx,
                                        const kern_panel_source *w, const float *bias, size_t n,
                                        size_t k, size_t m, size_t j0, size_t j1, float *workspace)
{
    // x, out: (n, k), (n, m) with row strides ldx, ldo; W (m, k) from w; columns j0 .. j1 - 1
    const matmul_w drawn = {.source = w};
    matmul_blocked(tile_for(m), out, ldo, x, ldx, 0, &drawn, bias, n, k, m, j0, j1, workspace, 0);
}

void KERN_FN(kern_matmul_pack_transposed)(float *packed, const float *wt, size_t ldwt, size_t k,
                                          size_t m)
{
    matmul_pack_wt(tile_for(m), packed, wt, ldwt, k, m);
}

void KERN_FN(kern_matmul_accumulate)(float *out, size_t ldo, const float *x, size_t ldx,
                                     const float *packed, size_t n, size_t k, size_t m,
                                     float *workspace)
{
    // x, out: (n, k), (n, m) with row strides ldx, ldo; packed: W (m, k); out +=
    const matmul_w w = {.packed = packed};
    matmul_blocked(tile_for(m), out, ldo, x, ldx, 0, &w, NULL, n, k, m, 0, m, workspace, 1);
}

int KERN_FN(kern_matmul_wt_fits)(size_t k, size_t m, size_t ldwt)
{
    return matmul_wt_fits(tile_for(m), k, m, ldwt);
}

void KERN_FN(kern_matmul_wt_columns)(float *out, size_t ldo, const float *x, size_t ldx,
                                     const float *wt, size_t ldwt, const float *bias, size_t n,
                                     size_t k, size_t m, size_t j0, size_t j1, int accumulate,
                                     float *workspace)
{
    // x, out: (n, k), (n, m) with row strides ldx, ldo; wt = W^T: (k, m) row stride ldwt
    const matmul_w w = {.wt = wt, .ldwt = ldwt};
    matmul_blocked(tile_for(m), out, ldo, x, ldx, 0, &w, accumulate ? NULL : bias, n, k, m, j0, j1,
                   workspace, accumulate);
}

#include "kernels/matmul_grad_body.h"
