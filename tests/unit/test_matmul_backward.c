/* The matmul's backward (src/kernels/matmul_grad_body.h and the matmul's
 * pack_transposed, wt_columns and accumulate): for y = x W^T + b with W [m][k],
 * dx = dy W, dW += dy^T x and db += the column sums of dy, on every
 * instruction set this CPU runs, against sums in double written here and
 * the SIMD variants against the scalar one; dW and db the same bits however
 * a caller splits dW's rows between calls, and however it splits the summed
 * rows into consecutive calls (dW); odd shapes, row strides past the width
 * and a workspace on any alignment.
 *
 * The kernels are called by name (kern_variants.h), not through the table,
 * and the SIMD ones only where vp_isa_supported says so. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kern_variants.h"
#include "test_filter.h"
#include "varprof/isa.h"

/* One float rounding, relative. */
static const double U = 0x1p-24;

/* A float sum of L terms in any order, each product rounded once or not at
 * all (an FMA), is within L u (sum of |terms|) of the exact sum, to first
 * order; the tests allow twice that against double, and the sum of two
 * such bounds between a SIMD variant and the scalar one. */
#define BOUND_FACTOR 2.0

typedef struct {
    size_t (*packed_floats)(size_t k, size_t m);
    void (*pack_transposed)(float *packed, const float *wt, size_t ldwt, size_t k, size_t m);
    size_t (*workspace_floats)(size_t n, size_t k, size_t m);
    void (*matmul)(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                   const float *bias, size_t n, size_t k, size_t m, float *workspace);
    void (*accumulate)(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                       size_t n, size_t k, size_t m, float *workspace);
    size_t (*grad_workspace_floats)(size_t n, size_t k, size_t m);
    void (*weight_grad)(float *dw, size_t ldw, float *db, const float *dy, size_t ldy,
                        const float *x, size_t ldx, size_t n, size_t k, size_t m, int accumulate,
                        float *workspace);
    size_t (*column_block)(size_t m);
    void (*columns)(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                    const float *bias, size_t n, size_t k, size_t m, size_t j0, size_t j1,
                    float *workspace);
    int (*wt_fits)(size_t k, size_t m, size_t ldwt);
    void (*wt_columns)(float *out, size_t ldo, const float *x, size_t ldx, const float *wt,
                       size_t ldwt, const float *bias, size_t n, size_t k, size_t m, size_t j0,
                       size_t j1, int accumulate, float *workspace);
} fns_t;

#define FNS(ISA)                                                                                   \
    {                                                                                              \
        kern_matmul_packed_floats_##ISA, kern_matmul_pack_transposed_##ISA,                        \
            kern_matmul_workspace_floats_##ISA, kern_matmul_##ISA, kern_matmul_accumulate_##ISA,   \
            kern_matmul_weight_grad_workspace_floats_##ISA, kern_matmul_weight_grad_##ISA,         \
            kern_matmul_column_block_##ISA, kern_matmul_columns_##ISA, kern_matmul_wt_fits_##ISA,  \
            kern_matmul_wt_columns_##ISA                                                           \
    }

static const fns_t FNS_OF[VP_ISA_COUNT] = {
    FNS(scalar),
#if defined(__x86_64__)
    FNS(avx2),
    FNS(avx512),
#endif
};

/* ---- test helpers (not under test) ---- */

static uint64_t rng = 0x3c6ef372fe94f82bull;
static float uniform_pm1(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

static float *new_random(size_t count)
{
    float *p = malloc((count ? count : 1) * sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < count; i++)
        p[i] = uniform_pm1();
    return p;
}

static float *copy_of(const float *a, size_t count)
{
    float *p = malloc((count ? count : 1) * sizeof *p);
    assert_non_null(p);
    memcpy(p, a, count * sizeof *p);
    return p;
}

/* A workspace of `floats` one float past a 64-byte line, so that the
   kernels' own alignment is exercised; free with free_workspace. */
static float *new_workspace(size_t floats)
{
    float *p = malloc((floats + 1) * sizeof *p);
    assert_non_null(p);
    return p + 1;
}

static void free_workspace(float *ws)
{
    free(ws - 1);
}

/* One backward problem: dy [n][m] (stride ldy), x [n][k] (stride ldx),
   W [m][k], dW [m][k] (stride ldw) and db [m] starting from random
   values (the kernels accumulate). */
typedef struct {
    size_t n, k, m, ldy, ldx, ldw;
    float *dy, *x, *w, *dw0, *db0;
} problem;

static problem make_problem(size_t n, size_t k, size_t m)
{
    problem pb = {n, k, m, m + 3, k + 5, k + 1, NULL, NULL, NULL, NULL, NULL};
    pb.dy = new_random(n * pb.ldy);
    pb.x = new_random(n * pb.ldx);
    pb.w = new_random(m * k);
    pb.dw0 = new_random(m * pb.ldw);
    pb.db0 = new_random(m);
    return pb;
}

static void free_problem(problem *pb)
{
    free(pb->dy), free(pb->x), free(pb->w), free(pb->dw0), free(pb->db0);
}

static const size_t SHAPES[][3] = {{1, 1, 1},    {1, 17, 5},    {7, 33, 100},   {37, 100, 70},
                                   {64, 48, 96}, {600, 70, 50}, {1100, 65, 130}};
#define N_SHAPES (sizeof SHAPES / sizeof SHAPES[0])

/* dx = dy W: the matmul of dy with a packing of W^T made from W. */
static float *run_dx(const fns_t *f, const problem *pb, size_t ldx_out)
{
    float *packed = malloc(f->packed_floats(pb->m, pb->k) * sizeof *packed + 4);
    float *dx = malloc((pb->n * ldx_out + 1) * sizeof *dx);
    float *ws = new_workspace(f->workspace_floats(pb->n, pb->m, pb->k));
    assert_non_null(packed);
    assert_non_null(dx);
    /* W [m][k] is the transpose of the W' [k][m] the matmul wants */
    f->pack_transposed(packed, pb->w, pb->k, pb->m, pb->k);
    f->matmul(dx, ldx_out, pb->dy, pb->ldy, packed, NULL, pb->n, pb->m, pb->k, ws);
    free(packed);
    free_workspace(ws);
    return dx;
}

/* dW and db after one weight_grad call over all rows. */
static void run_weight_grad(const fns_t *f, const problem *pb, float **dw, float **db)
{
    *dw = copy_of(pb->dw0, pb->m * pb->ldw);
    *db = copy_of(pb->db0, pb->m);
    float *ws = new_workspace(f->grad_workspace_floats(pb->n, pb->k, pb->m));
    f->weight_grad(*dw, pb->ldw, *db, pb->dy, pb->ldy, pb->x, pb->ldx, pb->n, pb->k, pb->m, 1, ws);
    free_workspace(ws);
}

static size_t count_bits_differ(const char *what, const float *a, const float *b, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof *a) != 0) {
            if (bad == 0)
                print_error("%s: first difference at %zu: %.9g vs %.9g\n", what, i, (double)a[i],
                            (double)b[i]);
            bad++;
        }
    return bad;
}

/* ---- the tests ---- */

/* dx = dy W against a double sum over m, within BOUND_FACTOR m u sum|terms|. */
static void dx_matches_double(void **state)
{
    (void)state;
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        double worst = 0.0;
        for (size_t s = 0; s < N_SHAPES; s++) {
            problem pb = make_problem(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2]);
            size_t ldo = pb.k + 2;
            float *dx = run_dx(&FNS_OF[isa], &pb, ldo);
            for (size_t i = 0; i < pb.n; i++)
                for (size_t p = 0; p < pb.k; p++) {
                    double sum = 0.0, mag = 0.0;
                    for (size_t j = 0; j < pb.m; j++) {
                        double t = (double)pb.dy[i * pb.ldy + j] * pb.w[j * pb.k + p];
                        sum += t;
                        mag += fabs(t);
                    }
                    double tol = BOUND_FACTOR * (double)pb.m * U * mag;
                    double diff = fabs(dx[i * ldo + p] - sum);
                    if (!(diff <= tol)) {
                        print_error("%s dx %zux%zux%zu [%zu][%zu]: %.9g, want %.9g (tol %.3g)\n",
                                    vp_isa_name((vp_isa)isa), pb.n, pb.k, pb.m, i, p,
                                    (double)dx[i * ldo + p], sum, tol);
                        fail();
                    }
                    worst = tol > 0 && diff / tol > worst ? diff / tol : worst;
                }
            free(dx);
            free_problem(&pb);
        }
        print_message("%s dx = dy W: at most %.3f of the tolerance\n", vp_isa_name((vp_isa)isa),
                      worst);
    }
}

/* out += x W^T from out = bias rows gives the forward matmul's bits with
   that bias: the same sums in the same order, started from the same value. */
static void accumulate_continues_the_matmul(void **state)
{
    (void)state;
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        const fns_t *f = &FNS_OF[isa];
        for (size_t s = 0; s < N_SHAPES; s++) {
            size_t n = SHAPES[s][0], k = SHAPES[s][1], m = SHAPES[s][2];
            float *x = new_random(n * k), *w = new_random(m * k), *bias = new_random(m);
            float *wt = malloc(k * m * sizeof *wt),
                  *packed = malloc(f->packed_floats(k, m) * 4 + 4);
            float *a = malloc(n * m * sizeof *a + 4), *b = malloc(n * m * sizeof *b + 4);
            float *ws = new_workspace(f->workspace_floats(n, k, m));
            assert_non_null(wt), assert_non_null(packed), assert_non_null(a), assert_non_null(b);
            for (size_t j = 0; j < m; j++)
                for (size_t p = 0; p < k; p++)
                    wt[p * m + j] = w[j * k + p];
            /* packed from W^T: must be the packing of W */
            f->pack_transposed(packed, wt, m, k, m);
            f->matmul(a, m, x, k, packed, bias, n, k, m, ws);
            for (size_t i = 0; i < n; i++)
                memcpy(b + i * m, bias, m * sizeof *b);
            f->accumulate(b, m, x, k, packed, n, k, m, ws);
            if (count_bits_differ(vp_isa_name((vp_isa)isa), a, b, n * m))
                fail();
            free(x), free(w), free(bias), free(wt), free(packed), free(a), free(b);
            free_workspace(ws);
        }
    }
}

/* dW += dy^T x within BOUND_FACTOR (n + 1) u (|dW0| + sum|terms|) of the
   double sum; db += column sums: a double sum (error below n 2^-53
   sum|dy|) rounded once, so within u |db| + 2 n 2^-53 sum|dy|. */
static void weight_grad_matches_double(void **state)
{
    (void)state;
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        double worst = 0.0;
        for (size_t s = 0; s < N_SHAPES; s++) {
            problem pb = make_problem(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2]);
            float *dw, *db;
            run_weight_grad(&FNS_OF[isa], &pb, &dw, &db);
            for (size_t j = 0; j < pb.m; j++) {
                double bsum = pb.db0[j], bmag = 0.0;
                for (size_t i = 0; i < pb.n; i++) {
                    bsum += pb.dy[i * pb.ldy + j];
                    bmag += fabs(pb.dy[i * pb.ldy + j]);
                }
                double btol = U * fabs(bsum) + 2.0 * (double)pb.n * 0x1p-53 * bmag;
                if (!(fabs(db[j] - bsum) <= btol)) {
                    print_error("%s db[%zu] = %.9g, want %.9g\n", vp_isa_name((vp_isa)isa), j,
                                (double)db[j], bsum);
                    fail();
                }
                for (size_t p = 0; p < pb.k; p++) {
                    double sum = pb.dw0[j * pb.ldw + p], mag = fabs(sum);
                    for (size_t i = 0; i < pb.n; i++) {
                        double t = (double)pb.dy[i * pb.ldy + j] * pb.x[i * pb.ldx + p];
                        sum += t;
                        mag += fabs(t);
                    }
                    double tol = BOUND_FACTOR * (double)(pb.n + 1) * U * mag;
                    double diff = fabs(dw[j * pb.ldw + p] - sum);
                    if (!(diff <= tol)) {
                        print_error("%s dW %zux%zux%zu [%zu][%zu]: %.9g, want %.9g (tol %.3g)\n",
                                    vp_isa_name((vp_isa)isa), pb.n, pb.k, pb.m, j, p,
                                    (double)dw[j * pb.ldw + p], sum, tol);
                        fail();
                    }
                    worst = tol > 0 && diff / tol > worst ? diff / tol : worst;
                }
                /* the padding of dW's rows is never written */
                for (size_t p = pb.k; p < pb.ldw; p++)
                    assert_memory_equal(&dw[j * pb.ldw + p], &pb.dw0[j * pb.ldw + p], sizeof *dw);
            }
            free(dw), free(db);
            free_problem(&pb);
        }
        print_message("%s dW += dy^T x: at most %.3f of the tolerance\n", vp_isa_name((vp_isa)isa),
                      worst);
    }
}

/* Every SIMD variant against the scalar one: dx and dW within the sum of
   the two variants' bounds above (their sums round differently: FMA and
   no FMA), db bit for bit (the same double sums in the same order). */
static void simd_matches_scalar(void **state)
{
    (void)state;
    for (int isa = VP_ISA_SCALAR + 1; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        for (size_t s = 0; s < N_SHAPES; s++) {
            problem pb = make_problem(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2]);
            float *dx_s = run_dx(&FNS_OF[VP_ISA_SCALAR], &pb, pb.k);
            float *dx_v = run_dx(&FNS_OF[isa], &pb, pb.k);
            for (size_t i = 0; i < pb.n; i++)
                for (size_t p = 0; p < pb.k; p++) {
                    double mag = 0.0;
                    for (size_t j = 0; j < pb.m; j++)
                        mag += fabs((double)pb.dy[i * pb.ldy + j] * pb.w[j * pb.k + p]);
                    double tol = 2.0 * BOUND_FACTOR * (double)pb.m * U * mag;
                    if (!(fabs(dx_s[i * pb.k + p] - dx_v[i * pb.k + p]) <= tol)) {
                        print_error("%s dx [%zu][%zu]: %.9g, scalar %.9g\n",
                                    vp_isa_name((vp_isa)isa), i, p, (double)dx_v[i * pb.k + p],
                                    (double)dx_s[i * pb.k + p]);
                        fail();
                    }
                }
            float *dw_s, *db_s, *dw_v, *db_v;
            run_weight_grad(&FNS_OF[VP_ISA_SCALAR], &pb, &dw_s, &db_s);
            run_weight_grad(&FNS_OF[isa], &pb, &dw_v, &db_v);
            if (count_bits_differ("db", db_s, db_v, pb.m))
                fail();
            for (size_t j = 0; j < pb.m; j++)
                for (size_t p = 0; p < pb.k; p++) {
                    double mag = fabs(pb.dw0[j * pb.ldw + p]);
                    for (size_t i = 0; i < pb.n; i++)
                        mag += fabs((double)pb.dy[i * pb.ldy + j] * pb.x[i * pb.ldx + p]);
                    double tol = 2.0 * BOUND_FACTOR * (double)(pb.n + 1) * U * mag;
                    size_t at = j * pb.ldw + p;
                    if (!(fabs(dw_s[at] - dw_v[at]) <= tol)) {
                        print_error("%s dW [%zu][%zu]: %.9g, scalar %.9g\n",
                                    vp_isa_name((vp_isa)isa), j, p, (double)dw_v[at],
                                    (double)dw_s[at]);
                        fail();
                    }
                }
            free(dx_s), free(dx_v), free(dw_s), free(db_s), free(dw_v), free(db_v);
            free_problem(&pb);
        }
    }
}

/* The contract's two splits, bit for bit on every variant: dW's rows j in
   pieces (as threads would take them), and the summed rows i in
   consecutive calls (dW only: db rounds once per call). */
static void weight_grad_splits_give_the_same_bits(void **state)
{
    (void)state;
    static const size_t cuts[] = {1, 7, 30, 64};
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        const fns_t *f = &FNS_OF[isa];
        for (size_t s = 0; s < N_SHAPES; s++) {
            problem pb = make_problem(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2]);
            float *dw, *db;
            run_weight_grad(f, &pb, &dw, &db);
            float *ws = new_workspace(f->grad_workspace_floats(pb.n, pb.k, pb.m));
            for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
                float *dw2 = copy_of(pb.dw0, pb.m * pb.ldw), *db2 = copy_of(pb.db0, pb.m);
                for (size_t j0 = 0; j0 < pb.m; j0 += cuts[c]) {
                    size_t rows = pb.m - j0 < cuts[c] ? pb.m - j0 : cuts[c];
                    f->weight_grad(dw2 + j0 * pb.ldw, pb.ldw, db2 + j0, pb.dy + j0, pb.ldy, pb.x,
                                   pb.ldx, pb.n, pb.k, rows, 1, ws);
                }
                if (count_bits_differ("dW split over j", dw, dw2, pb.m * pb.ldw) ||
                    count_bits_differ("db split over j", db, db2, pb.m))
                    fail();
                free(dw2), free(db2);
            }
            /* rows i: [0, cut) then [cut, n), cut not on a block of 512 */
            size_t cut = pb.n * 3 / 11;
            float *dw3 = copy_of(pb.dw0, pb.m * pb.ldw);
            f->weight_grad(dw3, pb.ldw, NULL, pb.dy, pb.ldy, pb.x, pb.ldx, cut, pb.k, pb.m, 1, ws);
            f->weight_grad(dw3, pb.ldw, NULL, pb.dy + cut * pb.ldy, pb.ldy, pb.x + cut * pb.ldx,
                           pb.ldx, pb.n - cut, pb.k, pb.m, 1, ws);
            if (count_bits_differ("dW in consecutive calls over i", dw, dw3, pb.m * pb.ldw))
                fail();
            free(dw3), free(dw), free(db);
            free_workspace(ws);
            free_problem(&pb);
        }
    }
}

/* dW's m x k values NaN, its padding past k 0 (as in want: unwritten) */
static void poison(float *dw, const problem *pb)
{
    for (size_t j = 0; j < pb->m; j++)
        for (size_t p = 0; p < pb->ldw; p++)
            dw[j * pb->ldw + p] = p < pb->k ? NAN : 0.0f;
}

/* accumulate 0 sets dW and db: whatever they held (NaN here), the bits of
   accumulating onto zeros, on every variant; in one call, with the rows
   in two calls (the first setting, the second adding), and over no rows
   at all (zeros). */
static void weight_grad_sets_as_from_zeros(void **state)
{
    (void)state;
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        const fns_t *f = &FNS_OF[isa];
        for (size_t s = 0; s < N_SHAPES; s++) {
            problem pb = make_problem(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2]);
            const size_t dw_floats = pb.m * pb.ldw;
            float *ws = new_workspace(f->grad_workspace_floats(pb.n, pb.k, pb.m));
            float *want = calloc(dw_floats, sizeof *want), *want_b = calloc(pb.m, sizeof *want_b);
            float *got = new_random(dw_floats), *got_b = new_random(pb.m);
            poison(got, &pb);
            assert_non_null(want);
            assert_non_null(want_b);
            f->weight_grad(want, pb.ldw, want_b, pb.dy, pb.ldy, pb.x, pb.ldx, pb.n, pb.k, pb.m, 1,
                           ws);
            for (size_t j = 0; j < pb.m; j++)
                got_b[j] = NAN;
            f->weight_grad(got, pb.ldw, got_b, pb.dy, pb.ldy, pb.x, pb.ldx, pb.n, pb.k, pb.m, 0,
                           ws);
            if (count_bits_differ("dW set", want, got, dw_floats) ||
                count_bits_differ("db set", want_b, got_b, pb.m))
                fail();
            const size_t cut = pb.n * 3 / 11;
            poison(got, &pb);
            f->weight_grad(got, pb.ldw, NULL, pb.dy, pb.ldy, pb.x, pb.ldx, cut, pb.k, pb.m, 0, ws);
            f->weight_grad(got, pb.ldw, NULL, pb.dy + cut * pb.ldy, pb.ldy, pb.x + cut * pb.ldx,
                           pb.ldx, pb.n - cut, pb.k, pb.m, 1, ws);
            if (count_bits_differ("dW set, then accumulated", want, got, dw_floats))
                fail();
            poison(got, &pb);
            f->weight_grad(got, pb.ldw, got_b, pb.dy, pb.ldy, pb.x, pb.ldx, 0, pb.k, pb.m, 0, ws);
            for (size_t j = 0; j < pb.m; j++)
                for (size_t p = 0; p < pb.k; p++)
                    if (got[j * pb.ldw + p] != 0.0f || got_b[j] != 0.0f) {
                        print_error("%s: over no rows dW[%zu][%zu] = %g, db = %g, want 0\n",
                                    vp_isa_name((vp_isa)isa), j, p, (double)got[j * pb.ldw + p],
                                    (double)got_b[j]);
                        fail();
                    }
            free(want), free(want_b), free(got), free(got_b);
            free_workspace(ws);
            free_problem(&pb);
        }
    }
}

/* W^T read where it lies (matmul_wt_columns) against the same W^T packed
   (pack_transposed, then matmul_columns or matmul_accumulate): the same
   bits, for whole and partial column ranges, with and without a bias,
   setting and accumulating, at a row stride past m, and with k past the
   SIMD sets' KC (blocks of k carried through out). matmul_wt_fits says yes
   for whole panels of columns and, on the SIMD sets, no for a ragged m. */
static void wt_in_place_gives_the_packed_bits(void **state)
{
    (void)state;
    /* {9, 700, 48}: k past both SIMD sets' KC (512, 672 with 48 KiB of L1) */
    static const size_t shapes[][3] = {{1, 1, 48},   {37, 100, 96},  {64, 48, 48},
                                       {9, 700, 48}, {192, 96, 192}, {5, 7, 16}};
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        const fns_t *f = &FNS_OF[isa];
        if (isa != VP_ISA_SCALAR) { /* a ragged m; a large W^T at a 4 KiB stride */
            assert_false(f->wt_fits(8, f->column_block(47) + 1, 64));
            assert_false(f->wt_fits(1024, 1024, 1024));
        }
        size_t tried = 0;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const size_t n = shapes[s][0], k = shapes[s][1], m = shapes[s][2], ldwt = m + 3;
            if (!f->wt_fits(k, m, ldwt))
                continue; /* packed, as before */
            tried++;
            float *x = new_random(n * k), *wt = new_random(k * ldwt), *bias = new_random(m);
            float *start = new_random(n * m);
            float *packed = malloc(f->packed_floats(k, m) * sizeof *packed);
            float *ws = new_workspace(f->workspace_floats(n, k, m));
            assert_non_null(packed);
            f->pack_transposed(packed, wt, ldwt, k, m);
            const size_t block = f->column_block(m);
            const size_t ranges[][2] = {{0, m}, {block, m}, {0, block < m ? block : m}};
            for (size_t r = 0; r < 3; r++)
                for (int acc = 0; acc < 2; acc++) {
                    const size_t j0 = ranges[r][0], j1 = ranges[r][1];
                    if (acc && !(j0 == 0 && j1 == m))
                        continue; /* accumulate has no column range to check against */
                    float *want = copy_of(start, n * m), *got = copy_of(start, n * m);
                    if (acc)
                        f->accumulate(want, m, x, k, packed, n, k, m, ws);
                    else
                        f->columns(want, m, x, k, packed, bias, n, k, m, j0, j1, ws);
                    f->wt_columns(got, m, x, k, wt, ldwt, bias, n, k, m, j0, j1, acc, ws);
                    if (count_bits_differ(vp_isa_name((vp_isa)isa), want, got, n * m))
                        fail();
                    free(want), free(got);
                }
            free(x), free(wt), free(bias), free(start), free(packed);
            free_workspace(ws);
        }
        assert_true(tried >= 4); /* 16 divides 16, 48, 96, 192; 48 and 64 some */
    }
}

/* weight_grad reads a small dy and x where they lie (dy^T through the xt
   kernels, x as W^T) and copies large ones (dy^T transposed, x packed): the
   same sums in the same order, so the same bits. Row strides past 256
   floats make the copies; the problem's own strides (m + 3, k + 5) the
   reads in place. */
static void weight_grad_in_place_gives_the_copies_bits(void **state)
{
    (void)state;
    const size_t wide = 300; /* > MATMUL_IN_PLACE_MAX_LD */
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        const fns_t *f = &FNS_OF[isa];
        for (size_t s = 0; s < N_SHAPES; s++) {
            problem pb = make_problem(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2]);
            if (pb.m > wide || pb.k > wide) {
                free_problem(&pb);
                continue;
            }
            float *dy_wide = calloc(pb.n * wide + 1, sizeof *dy_wide);
            float *x_wide = calloc(pb.n * wide + 1, sizeof *x_wide);
            assert_non_null(dy_wide);
            assert_non_null(x_wide);
            for (size_t i = 0; i < pb.n; i++) {
                memcpy(dy_wide + i * wide, pb.dy + i * pb.ldy, pb.m * sizeof *dy_wide);
                memcpy(x_wide + i * wide, pb.x + i * pb.ldx, pb.k * sizeof *x_wide);
            }
            float *ws = new_workspace(f->grad_workspace_floats(pb.n, pb.k, pb.m));
            for (int acc = 0; acc < 2; acc++) {
                float *want = copy_of(pb.dw0, pb.m * pb.ldw), *got = copy_of(pb.dw0, pb.m * pb.ldw);
                float *want_b = copy_of(pb.db0, pb.m), *got_b = copy_of(pb.db0, pb.m);
                f->weight_grad(want, pb.ldw, want_b, dy_wide, wide, x_wide, wide, pb.n, pb.k, pb.m,
                               acc, ws);
                f->weight_grad(got, pb.ldw, got_b, pb.dy, pb.ldy, pb.x, pb.ldx, pb.n, pb.k, pb.m,
                               acc, ws);
                if (count_bits_differ(vp_isa_name((vp_isa)isa), want, got, pb.m * pb.ldw) ||
                    count_bits_differ("db", want_b, got_b, pb.m))
                    fail();
                free(want), free(got), free(want_b), free(got_b);
            }
            free_workspace(ws);
            free(dy_wide), free(x_wide);
            free_problem(&pb);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dx_matches_double),
        cmocka_unit_test(accumulate_continues_the_matmul),
        cmocka_unit_test(weight_grad_matches_double),
        cmocka_unit_test(simd_matches_scalar),
        cmocka_unit_test(weight_grad_splits_give_the_same_bits),
        cmocka_unit_test(weight_grad_sets_as_from_zeros),
        cmocka_unit_test(wt_in_place_gives_the_packed_bits),
        cmocka_unit_test(weight_grad_in_place_gives_the_copies_bits),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
