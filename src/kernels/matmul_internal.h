/* What the SIMD matmuls share: the packed layouts and the blocked driver
 * around a micro-kernel, in the manner of BLIS (docs/KernelsHowTo.md), with
 * out = C, x = A and W^T = B. matmul_body.h includes this header in each
 * matmul_ISA.c (so the helpers are compiled with that file's flags), with
 * the micro-kernel written once over the ISA's vector mapping; the file
 * gives its tiles' sizes.
 *
 * Packed W (made once, by kern_matmul_pack): for each block of KC values of k,
 * for each panel of NR output columns (NR rows of W), kc x NR floats, the
 * NR values for one p side by side; columns past m are zero. Block pc
 * starts at pc * roundup(m, NR), panel jr of it at jr * kc further on.
 *
 * Packed x (in the workspace, per call): for a block of rows and KC values
 * of k, panels of MR rows, each row's kc values copied as they are (a
 * memcpy, the cheapest packing there is) at a row stride LDA = KC + 16, so
 * that the MR rows fall in different L1 sets (a stride of a power of two
 * such as 4 KiB would put them all in one). When k
 * fits in one block (k <= KC) x is read where it is, at its own row stride:
 * its rows are few or short, and a copy would cost more than it saves.
 *
 * Tiles: a variant may offer several MR x NR micro-kernels; the one for a
 * matmul is chosen by m alone (matmul_tile_for), the one that pads m the
 * least, so that packing W and every call agree on it.
 *
 * Order of the sums: out[i][j] starts from bias[j] (or 0) and takes one
 * multiply-add x[i][p] * w[j][p] per p, p = 0, 1, .., k - 1, in that order:
 * the micro-kernel carries the partial sums of one block of k into the next
 * through out itself (it loads them back), so neither the block sizes nor
 * the row's position in a panel or a call changes a bit of the result. */
#ifndef VARPROF_MATMUL_INTERNAL_H
#define VARPROF_MATMUL_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "kernels/kern_table.h"

/* Largest NR of any variant: the zeros that start a sum without a bias. */
#define MATMUL_MAX_NR 64
/* Slack so that the packed x can start on a 64-byte line. */
#define MATMUL_ALIGN_FLOATS 16

/* The micro-kernel: c[r][j] for r < mr_valid <= MR, j < nr_valid <= NR
 * (row stride ldc) gets start[r][j] + sum_p a[r][p] * b[p][j], summed in p
 * order with one rounding per multiply-add, where start is init[j] for
 * every row if init is not NULL and c's own values otherwise. a is x's
 * panel (rows of stride lda; only the first mr_valid are read), b a W
 * panel: kc rows of NR floats at row stride ldb, NR in a packed panel, or
 * W^T's own row stride where the kernel reads W^T as it lies
 * (matmul_wt). Nothing
 * outside the mr_valid x nr_valid corner of c or init is read or written:
 * the edges of out are masked, not copied. next is the tile the driver
 * calls the kernel on after this one, for the kernel to prefetch when its
 * sums start from out, which is in L3 or memory when out is large (NULL
 * when they start from init: out is then only written, and the prefetches
 * only slow the seed stack's small calls). It is
 * passed by address: by value, gcc built it field by field on the stack
 * and then copied it into the arguments with 16-byte loads of what it had
 * just stored with 8-byte ones, a store-forward stall on every call. */
typedef struct {
    const float *c;  /* first element, NULL when there is no next tile */
    size_t mr_valid; /* its rows and columns, so as to touch nothing else */
    size_t nr_valid;
} matmul_next_tile;

typedef void (*matmul_kernel_fn)(size_t kc, const float *a, size_t lda, const float *b, size_t ldb,
                                 float *c, size_t ldc, const float *init, size_t mr_valid,
                                 size_t nr_valid, const matmul_next_tile *next);

/* The same, prefetching into L2 ahead_lines lines (16 floats each) from
   ahead as it computes: the next block's W (matmul_ahead). A kernel of its
   own, so that the kernel for W already in cache has no such step. */
typedef void (*matmul_ahead_kernel_fn)(size_t kc, const float *a, size_t lda, const float *b,
                                       size_t ldb, float *c, size_t ldc, const float *init,
                                       size_t mr_valid, size_t nr_valid,
                                       const matmul_next_tile *next, const float *ahead,
                                       size_t ahead_lines);

typedef struct {
    size_t mr;               /* rows of out per micro-tile (broadcast from packed x) */
    size_t nr;               /* columns of out per micro-tile (vectors of packed W) */
    size_t kc;               /* values of k per block: a packed x panel stays in L1 */
    size_t lda;              /* row stride of packed x: kc + 16 */
    size_t mc;               /* columns of out per block: kc x mc of packed W stays in L2 */
    size_t rows;             /* rows of x packed at once (a multiple of mr): bounds the workspace */
    matmul_kernel_fn kernel; /* the MR x NR micro-kernel */
    matmul_ahead_kernel_fn kernel_ahead; /* the same, prefetching the next block (or NULL) */
    /* edge[r], r < MR: the kernel of r rows for a panel's last rows (NULL:
       the MR-row kernel, which computes its rows past mr_valid for
       nothing: 128 rows, 20 x 6 + 4 + 4 by matmul_panel_rows, would cost
       22 full panels) */
    const matmul_kernel_fn *edge;
    /* the same, x given as x^T (matmul_blocked's xt): the MR-row kernel
       and one for each smaller number of rows (never NULL) */
    matmul_kernel_fn kernel_xt;
    const matmul_kernel_fn *edge_xt;
} matmul_blocking;

static inline size_t matmul_round_up(size_t a, size_t b)
{
    return (a + b - 1) / b * b;
}

static inline size_t matmul_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Of n_tiles tiles, the one whose NR pads m the least (the first of equals). */
static inline const matmul_blocking *matmul_tile_for(const matmul_blocking *tiles, size_t n_tiles,
                                                     size_t m)
{
    const matmul_blocking *best = &tiles[0];
    for (size_t t = 1; t < n_tiles; t++)
        if (matmul_round_up(m, tiles[t].nr) < matmul_round_up(m, best->nr))
            best = &tiles[t];
    return best;
}

/* The blocking from the caches, as BLIS chooses it (Low et al., "Analytical
   modeling is enough for high-performance BLIS", 2016), for L1 data and L2
   of l1 and l2 bytes (0: what the CPU reports, sysconf; 48 KiB and 1 MiB
   when it reports nothing): KC so that the widest x panel (the tiles'
   largest MR rows of KC floats) takes a third of L1, W's panels streaming
   through the rest; KC a multiple of 16 from 128 to 1024, LDA = KC + 16;
   MC so that a block of packed W (KC x MC) takes half of L2, in whole NR
   panels. On Zen 5 (48 KiB, 1 MiB) this gives the 512 and 256 (240) that
   measured best. No sum depends on them (above). */
static inline size_t matmul_cache_bytes(int name, size_t fallback)
{
    const long v = sysconf(name);
    return v > 0 ? (size_t)v : fallback;
}

static inline void matmul_block_for_caches(matmul_blocking *tiles, size_t n_tiles, size_t l1,
                                           size_t l2)
{
    if (!l1)
        l1 = matmul_cache_bytes(_SC_LEVEL1_DCACHE_SIZE, 48 * 1024);
    if (!l2)
        l2 = matmul_cache_bytes(_SC_LEVEL2_CACHE_SIZE, 1024 * 1024);
    size_t max_mr = 1;
    for (size_t t = 0; t < n_tiles; t++)
        max_mr = tiles[t].mr > max_mr ? tiles[t].mr : max_mr;
    size_t kc = l1 / 3 / (sizeof(float) * max_mr) / 16 * 16;
    kc = kc < 128 ? 128 : kc > 1024 ? 1024 : kc;
    for (size_t t = 0; t < n_tiles; t++) {
        const size_t nr = tiles[t].nr, mc = l2 / 2 / (sizeof(float) * kc) / nr * nr;
        tiles[t].kc = kc;
        tiles[t].lda = kc + 16;
        tiles[t].mc = mc < nr ? nr : mc;
    }
}

/* A variant's tile_for over its table `tiles`, the blocking made from the
   caches on first use, and kern_matmul_reblock_ISA, which makes it again
   for other cache sizes (the tests' two settings; not while any matmul
   runs, and weights packed before must be packed again). */
#define MATMUL_TILES_FROM_CACHES(tiles)                                                            \
    static pthread_once_t tiles_once = PTHREAD_ONCE_INIT;                                          \
    static void tiles_from_caches(void)                                                            \
    {                                                                                              \
        matmul_block_for_caches((tiles), sizeof(tiles) / sizeof(*(tiles)), 0, 0);                  \
    }                                                                                              \
    static const matmul_blocking *tile_for(size_t m)                                               \
    {                                                                                              \
        (void)pthread_once(&tiles_once, tiles_from_caches);                                        \
        return matmul_tile_for((tiles), sizeof(tiles) / sizeof(*(tiles)), m);                      \
    }                                                                                              \
    void KERN_FN(kern_matmul_reblock)(size_t l1, size_t l2)                                        \
    {                                                                                              \
        (void)pthread_once(&tiles_once, tiles_from_caches);                                        \
        matmul_block_for_caches((tiles), sizeof(tiles) / sizeof(*(tiles)), l1, l2);                \
    }

static inline size_t matmul_packed_floats(const matmul_blocking *bk, size_t k, size_t m)
{
    return k * matmul_round_up(m, bk->nr);
}

static inline size_t matmul_workspace_floats(const matmul_blocking *bk, size_t n, size_t k)
{
    if (k <= bk->kc)
        return 0; /* x is read in place */
    return bk->lda * matmul_min(n, bk->rows) + MATMUL_ALIGN_FLOATS;
}

/* With W drawn: packed x, then one block of W's panels (kc x mc). */
static inline size_t matmul_drawn_workspace_floats(const matmul_blocking *bk, size_t n, size_t k)
{
    return matmul_workspace_floats(bk, n, k) + bk->kc * bk->mc + MATMUL_ALIGN_FLOATS;
}

static inline float *matmul_align(float *p)
{
    const size_t misalign = ((size_t)p / sizeof(float)) % MATMUL_ALIGN_FLOATS;
    return p + (misalign ? MATMUL_ALIGN_FLOATS - misalign : 0);
}

/* One row of a panel: valid floats from src, zeros to nr. The tiles' own
   widths copy with a constant size, which gcc inlines as vector moves; a
   call of memcpy and one of memset per row cost more than the copy. */
static inline void matmul_copy_panel_row(float *dst, const float *src, size_t valid, size_t nr)
{
    switch (valid) {
    case 16: memcpy(dst, src, 16 * sizeof *dst); break;
    case 48: memcpy(dst, src, 48 * sizeof *dst); break;
    case 64: memcpy(dst, src, 64 * sizeof *dst); break;
    default: memcpy(dst, src, valid * sizeof *dst);
    }
    if (valid < nr)
        memset(dst + valid, 0, (nr - valid) * sizeof *dst);
}

/* The same layout from wt = w^T, [k][m] with row stride ldwt: each panel
   row's nr values are consecutive in wt, a copy rather than a gather. */
static inline void matmul_pack_wt(const matmul_blocking *bk, float *packed, const float *wt,
                                  size_t ldwt, size_t k, size_t m)
{
    size_t nr = bk->nr, mpad = matmul_round_up(m, nr);
    for (size_t pc = 0; pc < k; pc += bk->kc) {
        size_t kc = matmul_min(bk->kc, k - pc);
        for (size_t jr = 0; jr < mpad; jr += nr) {
            float *panel = packed + pc * mpad + jr * kc;
            size_t valid = jr < m ? matmul_min(nr, m - jr) : 0;
            for (size_t p = 0; p < kc; p++)
                matmul_copy_panel_row(panel + p * nr, wt + (pc + p) * ldwt + jr, valid, nr);
        }
    }
}

/* rows x kc of x (row stride ldx) into rows of stride lda. */
static inline void matmul_pack_x(float *apack, const float *x, size_t ldx, size_t rows, size_t kc,
                                 size_t lda)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(apack + r * lda, x + r * ldx, kc * sizeof *apack);
}

/* W as the blocked matmul reads it: packed (kern_matmul_pack), drawn a
   block of panels at a time by source, or given as its transpose wt [k][m]
   (row stride ldwt) and read where it lies, its rows the panels' rows
   (matmul_wt_fits). Exactly one of packed, source and wt is set. */
typedef struct {
    const float *packed;
    const kern_panel_source *source;
    const float *wt;
    size_t ldwt;
} matmul_w;

/* Whether an operand of `rows` rows at row stride ld is small enough to be
   read where it lies across its rows (W^T's rows, x^T's rows) rather than
   copied into a layout of its own: short rows in a quarter of L2 (half a
   block of packed W), where the copy, not the reads, is the cost. Long
   rows at a power-of-two stride share L1's sets, and a large operand read
   in place wants the TLB: dW at 256 x 1024 x 1024 lost much of its share
   of the peak, AVX2's most, when every x was read in place. */
#define MATMUL_IN_PLACE_MAX_LD 256
static inline int matmul_small(const matmul_blocking *bk, size_t rows, size_t ld)
{
    return ld <= MATMUL_IN_PLACE_MAX_LD && rows * ld <= bk->kc * bk->mc / 2;
}

/* Whether W^T [k][m] (row stride ldwt) is read where it lies rather than
   packed: small, and m a whole number of panels, so that no vector reads
   past a row's m values (a packed panel pads them with zeros). */
static inline int matmul_wt_fits(const matmul_blocking *bk, size_t k, size_t m, size_t ldwt)
{
    return m % bk->nr == 0 && matmul_small(bk, k, ldwt);
}

/* The five loops around the micro-kernel (BLIS's order, with the roles of
 * its A and B swapped because out is row-major): blocks of rows, blocks of
 * k (x packed), blocks of mc columns (packed W in L2), MR-row panels (in
 * L1), NR-column panels. accumulate: the sums start from out's values, not
 * from the bias (which is then ignored). xt: x is given as its transpose,
 * [k][n] at row stride ldx, and read where it lies (never packed). */
/* The blocked matmul over output columns j0 <= j < j1 (j0 a multiple of
   nr, j1 <= m): every panel, and so every column's sums, as with the whole
   range; the other columns neither read nor written. W (matmul_w) is
   packed; or drawn, each block of its panels made by source->fill into the
   workspace after packed x (matmul_drawn_workspace_floats), right before
   the micro-kernels read it; or W^T, read in place. */
/* One block: the rows [i0, i0 + rows) of x (from xblock, row stride lda:
   its kc values from pc on) against the panels of W for the columns [jc,
   jend), each panel from wblock, from wdrawn made by source->fill, or from
   W^T's rows as they lie. */
typedef struct {
    const matmul_blocking *bk;
    float *out;
    size_t ldo;
    const float *bias;
    size_t j1;
    int accumulate;
    int xt; /* x given as x^T */
} matmul_call;

/* The rows of the row panel that starts ir rows into a block of rows: MR,
   except that the last two panels share what is left between MR and 2 MR
   evenly. A panel of few rows reads as much of W per p as a full one for
   fewer FMAs, and L2 cannot feed it: at 128 rows, 21 x 6 + 2 ran 4 %
   slower than 126 rows; 20 x 6 + 4 + 4 does not. */
static inline size_t matmul_panel_rows(size_t rows, size_t ir, size_t mr)
{
    const size_t left = rows - ir;
    return left <= mr ? left : left < 2 * mr ? (left + 1) / 2 : mr;
}

/* Lines of packed W (16 floats each) from ahead, prefetched into L2 by the
   full panels' calls of a block, per_call each (matmul_ahead_kernel_fn),
   so that the next block's panels, which come from memory when W is large
   (the 70B's 940 MB), arrive while this block's are computed on, not when
   the first panel of rows needs them: that wait was the gap to the peak at
   128 x 8192 x 28672. */
typedef struct {
    const float *ahead;
    size_t lines, per_call, done;
} matmul_ahead;

/* The full (MR-row) panels among a block's rows (matmul_panel_rows): all
   but the last two when they share what is left, unless that is 2 MR - 1. */
static inline size_t matmul_full_panels(size_t rows, size_t mr)
{
    const size_t q = rows / mr, r = rows % mr;
    return r == 0 || q == 0 ? q : q - 1 + (r == mr - 1);
}

static inline void matmul_block(const matmul_call *call, size_t i0, size_t rows, size_t pc,
                                size_t kc, const float *xblock, size_t lda, const matmul_w *w,
                                const float *wblock, float *wdrawn, size_t jc, size_t jend,
                                matmul_ahead ahead)
{
    static const float zeros[MATMUL_MAX_NR];
    const matmul_blocking *bk = call->bk;
    const size_t mr = bk->mr, nr = bk->nr, j1 = call->j1, ldo = call->ldo;
    const kern_panel_source *source = w->source;
    if (source)
        for (size_t jr = jc; jr < jend; jr += nr)
            source->fill(source->ctx, wdrawn + (jr - jc) * kc, nr, jr, pc, kc);
    /* the full panels' calls prefetch the next block, the edges' do not */
    const size_t full = matmul_full_panels(rows, mr);
    if (bk->kernel_ahead == NULL || full == 0 || call->xt)
        ahead.lines = 0;
    if (ahead.lines > 0) {
        const size_t calls = full * ((jend - jc + nr - 1) / nr);
        ahead.per_call = (ahead.lines + calls - 1) / calls;
    }
    for (size_t ir = 0, mr_valid; ir < rows; ir += mr_valid) {
        mr_valid = matmul_panel_rows(rows, ir, mr);
        const float *a = call->xt ? xblock + ir : xblock + ir * lda;
        const matmul_kernel_fn micro_kernel =
            call->xt ? (mr_valid < mr ? bk->edge_xt[mr_valid] : bk->kernel_xt)
            : mr_valid < mr && bk->edge != NULL ? bk->edge[mr_valid]
                                                : bk->kernel;
        for (size_t jr = jc; jr < jend; jr += nr) {
            const size_t nr_valid = matmul_min(nr, j1 - jr);
            /* a panel of packed or drawn W, or W^T's columns where they lie */
            const float *b = wblock  ? wblock + jr * kc
                             : w->wt ? w->wt + pc * w->ldwt + jr
                                     : wdrawn + (jr - jc) * kc;
            const size_t ldb = w->wt ? w->ldwt : nr;
            float *c = call->out + (i0 + ir) * ldo + jr;
            const float *init = pc > 0 || call->accumulate ? NULL
                                : call->bias != NULL       ? call->bias + jr
                                                           : zeros;
            /* the next tile, when its sums start from out (init: the whole
               block's start from init, and out is only written) */
            matmul_next_tile next = {NULL, 0, 0};
            if (init == NULL && jr + nr < jend) {
                next.c = c + nr;
                next.mr_valid = mr_valid;
                next.nr_valid = matmul_min(nr, j1 - jr - nr);
            } else if (init == NULL && ir + mr_valid < rows) {
                next.c = call->out + (i0 + ir + mr_valid) * ldo + jc;
                next.mr_valid = matmul_panel_rows(rows, ir + mr_valid, mr);
                next.nr_valid = matmul_min(nr, j1 - jc);
            }
            if (ahead.done < ahead.lines && mr_valid == mr) {
                /* a kernel prefetches at most one line every fourth p */
                const size_t lines =
                    matmul_min(matmul_min(ahead.per_call, kc / 4), ahead.lines - ahead.done);
                bk->kernel_ahead(kc, a, lda, b, ldb, c, ldo, init, mr_valid, nr_valid, &next,
                                 ahead.ahead + 16 * ahead.done, lines);
                ahead.done += lines;
            } else {
                micro_kernel(kc, a, lda, b, ldb, c, ldo, init, mr_valid, nr_valid, &next);
            }
        }
    }
}

/* The packed W the block after [jc, jend) of block pc reads: the next
   columns of the same pc, or the first of the next pc (matmul_ahead). */
static inline matmul_ahead matmul_ahead_of(const matmul_blocking *bk, const float *packed,
                                           size_t mpad, size_t k, size_t pc, size_t kc, size_t j0,
                                           size_t jend, size_t j1)
{
    matmul_ahead ahead = {NULL, 0, 0, 0};
    if (packed == NULL)
        return ahead; /* drawn W is made in L1 and L2, not read */
    size_t next_kc = kc, next_j = jend;
    const float *block = packed + pc * mpad;
    if (jend >= j1) {
        if (pc + kc >= k)
            return ahead;
        next_kc = matmul_min(bk->kc, k - pc - kc);
        next_j = j0;
        block = packed + (pc + kc) * mpad;
    }
    const size_t next_end = matmul_round_up(matmul_min(next_j + bk->mc, j1), bk->nr);
    ahead.ahead = block + next_j * next_kc;
    ahead.lines = (next_end - next_j) * next_kc / 16;
    return ahead;
}

static inline void matmul_blocked(const matmul_blocking *bk, float *out, size_t ldo, const float *x,
                                  size_t ldx, int xt, const matmul_w *w, const float *bias,
                                  size_t n, size_t k, size_t m, size_t j0, size_t j1,
                                  float *workspace, int accumulate)
{
    const float *packed = w->packed;
    const kern_panel_source *source = w->source;
    float *apack = matmul_align(workspace);
    float *wdrawn = source ? matmul_align(apack + matmul_workspace_floats(bk, n, k)) : NULL;
    const size_t mpad = matmul_round_up(m, bk->nr);
    const int in_place = k <= bk->kc || xt;
    const matmul_call call = {bk, out, ldo, bias, j1, accumulate, xt};

    for (size_t i0 = 0; i0 < n; i0 += bk->rows) {
        const size_t rows = matmul_min(bk->rows, n - i0);
        for (size_t pc = 0; pc < k; pc += bk->kc) {
            const size_t kc = matmul_min(bk->kc, k - pc);
            const float *xblock = xt ? x + pc * ldx + i0 : x + i0 * ldx + pc;
            size_t lda = ldx;
            if (!in_place) {
                matmul_pack_x(apack, xblock, ldx, rows, kc, bk->lda);
                xblock = apack;
                lda = bk->lda;
            }
            const float *wblock = packed ? packed + pc * mpad : NULL;
            for (size_t jc = j0; jc < j1; jc += bk->mc) {
                const size_t jend = matmul_min(jc + bk->mc, j1);
                matmul_block(&call, i0, rows, pc, kc, xblock, lda, w, wblock, wdrawn, jc, jend,
                             matmul_ahead_of(bk, packed, mpad, k, pc, kc, j0, jend, j1));
            }
        }
    }
}

#endif
