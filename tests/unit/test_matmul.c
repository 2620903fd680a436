/* The matmul y = x W^T + b (src/kernels/matmul_*.c): the scalar reference
 * against a plain triple loop in double, every SIMD variant this CPU runs
 * against the scalar one, on random shapes (1..300 each, and the sizes
 * around the vector widths and block sizes) with row strides past the
 * width, bias or none; each row of out depending on its row of x alone,
 * bitwise, however the rows are split between calls; nothing written
 * outside out's n x m corner; any alignment of the workspace.
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

/* Tolerance against exact sums: a float sum of k + 1 terms (the bias and
 * the k products) in any order, each term rounded once (or not at all, in
 * an FMA), is within (k + 1) * 2^-24 * (|b_j| + sum_p |x_ip w_jp|) of the
 * exact value, to first order. The tests allow REF_TOL_FACTOR times that
 * against the double-precision loop, and the sum of two such bounds between
 * a SIMD variant and the scalar one. */
#define REF_TOL_FACTOR 2.0
#define SENTINEL -12345.5f /* out's padding, which no call may touch */

typedef struct {
    size_t (*packed_floats)(size_t k, size_t m);
    void (*pack)(float *packed, const float *w, size_t k, size_t m);
    size_t (*workspace_floats)(size_t n, size_t k, size_t m);
    void (*matmul)(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                   const float *bias, size_t n, size_t k, size_t m, float *workspace);
    size_t (*column_block)(size_t m);
    void (*reblock)(size_t l1, size_t l2);
    void (*columns)(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                    const float *bias, size_t n, size_t k, size_t m, size_t j0, size_t j1,
                    float *workspace);
} matmul_fns;

static const matmul_fns fns[VP_ISA_COUNT] = {
    {kern_matmul_packed_floats_scalar, kern_matmul_pack_scalar, kern_matmul_workspace_floats_scalar,
     kern_matmul_scalar, kern_matmul_column_block_scalar, kern_matmul_reblock_scalar,
     kern_matmul_columns_scalar},
#if defined(__x86_64__)
    {kern_matmul_packed_floats_avx2, kern_matmul_pack_avx2, kern_matmul_workspace_floats_avx2,
     kern_matmul_avx2, kern_matmul_column_block_avx2, kern_matmul_reblock_avx2,
     kern_matmul_columns_avx2},
    {kern_matmul_packed_floats_avx512, kern_matmul_pack_avx512, kern_matmul_workspace_floats_avx512,
     kern_matmul_avx512, kern_matmul_column_block_avx512, kern_matmul_reblock_avx512,
     kern_matmul_columns_avx512},
#endif
};

/* A small deterministic generator for the test data (not under test). */
static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next_u64(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 11;
}
static size_t uniform_size(size_t lo, size_t hi) /* in [lo, hi] */
{
    return lo + (size_t)(next_u64() % (hi - lo + 1));
}
static float uniform_pm1(void)
{
    return (float)((double)(next_u64() >> 29) * 0x1p-24 * 2.0 - 1.0);
}

/* One problem: x (n rows of ldx, k used), w (m x k), bias (m or NULL). The
 * padding of x's rows is NaN, so that a kernel reading it would show. */
typedef struct {
    size_t n, k, m, ldx, ldo;
    float *x, *w, *bias;
} problem;

static problem make_problem(size_t n, size_t k, size_t m, size_t ldx_pad, size_t ldo_pad,
                            int with_bias)
{
    problem pb = {n, k, m, k + ldx_pad, m + ldo_pad, NULL, NULL, NULL};
    pb.x = malloc(n * pb.ldx * sizeof *pb.x);
    pb.w = malloc(m * k * sizeof *pb.w);
    assert_non_null(pb.x);
    assert_non_null(pb.w);
    for (size_t i = 0; i < n; i++)
        for (size_t p = 0; p < pb.ldx; p++)
            pb.x[i * pb.ldx + p] = p < k ? uniform_pm1() : NAN;
    for (size_t i = 0; i < m * k; i++)
        pb.w[i] = uniform_pm1();
    if (with_bias) {
        pb.bias = malloc(m * sizeof *pb.bias);
        assert_non_null(pb.bias);
        for (size_t j = 0; j < m; j++)
            pb.bias[j] = uniform_pm1();
    }
    return pb;
}

static void free_problem(problem *pb)
{
    free(pb->x), free(pb->w), free(pb->bias);
}

static problem random_problem(void)
{
    /* sizes around vector widths (8, 16), register tiles and blocks */
    static const size_t special[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 300};
    size_t dims[3];
    for (int d = 0; d < 3; d++)
        dims[d] = next_u64() % 3 == 0 ? special[next_u64() % (sizeof special / sizeof *special)]
                                      : uniform_size(1, 300);
    return make_problem(dims[0], dims[1], dims[2], uniform_size(0, 3) == 0 ? 0 : uniform_size(1, 9),
                        uniform_size(0, 3) == 0 ? 0 : uniform_size(1, 9), (int)(next_u64() & 1));
}

/* out (n x ldo, padding SENTINEL), filled by the variant on rows [first,
 * first + rows) in one call; the packed weights and the workspace are
 * allocated here, the workspace at a float offset `skew` from malloc's
 * alignment. */
static void run_rows(vp_isa isa, const problem *pb, const float *packed, float *out, size_t first,
                     size_t rows, size_t skew)
{
    const matmul_fns *f = &fns[isa];
    size_t ws_floats = f->workspace_floats(rows, pb->k, pb->m);
    float *ws = malloc((ws_floats + skew + 1) * sizeof *ws);
    assert_non_null(ws);
    f->matmul(out + first * pb->ldo, pb->ldo, pb->x + first * pb->ldx, pb->ldx, packed, pb->bias,
              rows, pb->k, pb->m, ws_floats ? ws + skew : NULL);
    free(ws);
}

static float *new_out(const problem *pb)
{
    float *out = malloc(pb->n * pb->ldo * sizeof *out);
    assert_non_null(out);
    for (size_t i = 0; i < pb->n * pb->ldo; i++)
        out[i] = SENTINEL;
    return out;
}

static float *packed_for(vp_isa isa, const problem *pb)
{
    float *packed = malloc((fns[isa].packed_floats(pb->k, pb->m) + 1) * sizeof *packed);
    assert_non_null(packed);
    fns[isa].pack(packed, pb->w, pb->k, pb->m);
    return packed;
}

/* out of every row at once, from a fresh packing. */
static float *run_all(vp_isa isa, const problem *pb)
{
    float *packed = packed_for(isa, pb), *out = new_out(pb);
    run_rows(isa, pb, packed, out, 0, pb->n, 0);
    free(packed);
    return out;
}

/* |b_j| + sum_p |x_ip w_jp| and the exact sum, in double. */
static void exact(const problem *pb, size_t i, size_t j, double *sum, double *mag)
{
    double s = pb->bias ? pb->bias[j] : 0.0, a = fabs(s);
    for (size_t p = 0; p < pb->k; p++) {
        double t = (double)pb->x[i * pb->ldx + p] * (double)pb->w[j * pb->k + p];
        s += t;
        a += fabs(t);
    }
    *sum = s;
    *mag = a;
}

/* The padding of out's rows still holds SENTINEL. */
static void check_padding(const char *who, const problem *pb, const float *out)
{
    for (size_t i = 0; i < pb->n; i++)
        for (size_t j = pb->m; j < pb->ldo; j++)
            if (out[i * pb->ldo + j] != SENTINEL) {
                fprintf(stderr, "%s %zux%zux%zu: wrote out[%zu][%zu] past m (ldo %zu)\n", who,
                        pb->n, pb->k, pb->m, i, j, pb->ldo);
                fail();
            }
}

/* Compares got with want (NULL: the exact sums) elementwise within
 * `factor` bounds each; prints the first mismatch and the largest
 * difference relative to its tolerance. Returns that largest ratio. */
static double compare(const char *who, const problem *pb, const float *got, const float *want,
                      double factor)
{
    double worst = 0.0, worst_diff = 0.0;
    int mismatches = 0;
    for (size_t i = 0; i < pb->n; i++)
        for (size_t j = 0; j < pb->m; j++) {
            double sum, mag;
            exact(pb, i, j, &sum, &mag);
            double ref = want ? (double)want[i * pb->ldo + j] : sum;
            double tol = factor * (double)(pb->k + 1) * 0x1p-24 * mag;
            double diff = fabs((double)got[i * pb->ldo + j] - ref);
            if (!(diff <= tol)) { /* NaN fails too */
                if (mismatches++ == 0)
                    fprintf(stderr,
                            "%s %zux%zux%zu (ldx %zu, ldo %zu, bias %s): first mismatch "
                            "out[%zu][%zu] = %.9g, want %.9g, |diff| %.3g > tol %.3g\n",
                            who, pb->n, pb->k, pb->m, pb->ldx, pb->ldo, pb->bias ? "yes" : "NULL",
                            i, j, got[i * pb->ldo + j], ref, diff, tol);
            }
            if (tol > 0 && diff / tol > worst)
                worst = diff / tol;
            if (diff > worst_diff || diff != diff)
                worst_diff = diff;
        }
    if (mismatches) {
        fprintf(stderr, "%s: %d mismatches, max |diff| %.3g, max |diff| / tol %.3g\n", who,
                mismatches, worst_diff, worst);
        fail();
    }
    check_padding(who, pb, got);
    return worst;
}

/* ---- the tests ---- */

#define RANDOM_SHAPES 60

static void test_scalar_against_double(void **state)
{
    (void)state;
    double worst = 0.0;
    for (int t = 0; t < RANDOM_SHAPES; t++) {
        problem pb = random_problem();
        float *out = run_all(VP_ISA_SCALAR, &pb);
        double w = compare("scalar vs double", &pb, out, NULL, REF_TOL_FACTOR);
        worst = w > worst ? w : worst;
        free(out);
        free_problem(&pb);
    }
    printf("scalar vs double: %d shapes, max |diff| / tol %.3g (tol = %.0f (k+1) 2^-24 "
           "(|b| + sum |x w|))\n",
           RANDOM_SHAPES, worst, REF_TOL_FACTOR);
}

/* Shapes beyond 300 where the blocks over k, columns and rows start again. */
static const size_t block_shapes[][3] = {
    {13, 1100, 70}, /* k over two blocks of 512 */
    {7, 530, 300},  /* k just past a block, columns past 256 */
    {4100, 5, 3},   /* rows past one block of x, read in place (k <= 512) */
    {4100, 520, 3}, /* the same, x packed (k > 512) */
    {33, 513, 65},
    {13, 1100, 480}, /* AVX-512's 8 x 48 tile: k over two blocks, columns past 240 */
    {9, 40, 96},     /* 8 x 48 and x read in place, a row past a panel */
};

static void test_simd_against_scalar(void **state)
{
    (void)state;
    for (int isa = VP_ISA_AVX2; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa)) {
            printf("%s: not supported by this CPU, skipped\n", vp_isa_name((vp_isa)isa));
            continue;
        }
        char who[64];
        snprintf(who, sizeof who, "%s vs scalar", vp_isa_name((vp_isa)isa));
        double worst = 0.0, worst_exact = 0.0;
        size_t shapes = RANDOM_SHAPES + sizeof block_shapes / sizeof *block_shapes;
        for (size_t t = 0; t < shapes; t++) {
            problem pb = t < RANDOM_SHAPES
                             ? random_problem()
                             : make_problem(block_shapes[t - RANDOM_SHAPES][0],
                                            block_shapes[t - RANDOM_SHAPES][1],
                                            block_shapes[t - RANDOM_SHAPES][2], 3, 5, (int)(t & 1));
            float *ref = run_all(VP_ISA_SCALAR, &pb), *out = run_all((vp_isa)isa, &pb);
            double w = compare(who, &pb, out, ref, 2.0 * REF_TOL_FACTOR);
            double e = compare(who, &pb, out, NULL, REF_TOL_FACTOR);
            worst = w > worst ? w : worst;
            worst_exact = e > worst_exact ? e : worst_exact;
            free(ref), free(out);
            free_problem(&pb);
        }
        printf("%s: %zu shapes, max |diff| / tol %.3g against scalar (tol %.0f (k+1) 2^-24 "
               "(|b| + sum |x w|)), %.3g against double\n",
               who, shapes, worst, 2.0 * REF_TOL_FACTOR, worst_exact);
    }
}

/* Bitwise: every row alone, and rows in random runs, against all at once;
 * and with the workspace at each float offset of a line. */
static void check_rows_independent(vp_isa isa, const problem *pb)
{
    float *packed = packed_for(isa, pb);
    float *all = new_out(pb), *split = new_out(pb);
    run_rows(isa, pb, packed, all, 0, pb->n, 0);

    for (size_t i = 0; i < pb->n; i++)
        run_rows(isa, pb, packed, split, i, 1, i % 16);
    for (int pass = 0; pass < 3; pass++) {
        if (pass > 0)
            for (size_t first = 0, rows; first < pb->n; first += rows) {
                rows = uniform_size(1, pb->n - first < 40 ? pb->n - first : 40);
                run_rows(isa, pb, packed, split, first, rows, next_u64() % 16);
            }
        for (size_t i = 0; i < pb->n; i++) {
            if (memcmp(all + i * pb->ldo, split + i * pb->ldo, pb->m * sizeof *all) == 0)
                continue;
            size_t j = 0;
            while (memcmp(all + i * pb->ldo + j, split + i * pb->ldo + j, sizeof *all) == 0)
                j++;
            fprintf(stderr,
                    "%s %zux%zux%zu: row %zu differs when the rows are split (%s): "
                    "out[%zu][%zu] = %.9g, all at once %.9g\n",
                    vp_isa_name(isa), pb->n, pb->k, pb->m, i,
                    pass == 0 ? "one per call" : "random runs", i, j, split[i * pb->ldo + j],
                    all[i * pb->ldo + j]);
            fail();
        }
    }
    check_padding(vp_isa_name(isa), pb, split);
    free(packed), free(all), free(split);
}

static void test_rows_independent(void **state)
{
    (void)state;
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        for (int t = 0; t < 12; t++) {
            problem pb = t == 0 ? make_problem(40, 1030, 70, 1, 3, 1) : random_problem();
            check_rows_independent((vp_isa)isa, &pb);
            free_problem(&pb);
        }
    }
}

/* Threads share a matmul's columns (forward/branches.c, fw_project):
 * every column range of whole column blocks, in random cuts, gives the
 * columns the same bits as the whole call, and leaves the others as they
 * were (the sentinel in columns not yet done, the padding never). */
static void check_columns_independent(vp_isa isa, const problem *pb)
{
    const matmul_fns *f = &fns[isa];
    float *packed = packed_for(isa, pb);
    float *all = new_out(pb), *split = new_out(pb);
    run_rows(isa, pb, packed, all, 0, pb->n, 0);
    const size_t block = f->column_block(pb->m),
                 ws_floats = f->workspace_floats(pb->n, pb->k, pb->m);
    float *ws = malloc((ws_floats + 1) * sizeof *ws);
    assert_non_null(ws);
    for (size_t j0 = 0, j1; j0 < pb->m; j0 = j1) {
        j1 = j0 + block * uniform_size(1, 3);
        j1 = j1 < pb->m ? j1 : pb->m;
        f->columns(split, pb->ldo, pb->x, pb->ldx, packed, pb->bias, pb->n, pb->k, pb->m, j0, j1,
                   ws_floats ? ws : NULL);
        for (size_t i = 0; i < pb->n; i++)
            for (size_t j = j1; j < pb->m; j++)
                if (split[i * pb->ldo + j] != SENTINEL)
                    fail_msg("%s %zux%zux%zu: columns %zu..%zu wrote out[%zu][%zu]",
                             vp_isa_name(isa), pb->n, pb->k, pb->m, j0, j1, i, j);
    }
    if (memcmp(all, split, pb->n * pb->ldo * sizeof *all) != 0)
        fail_msg("%s %zux%zux%zu: columns in ranges of %zu differ from the whole matmul",
                 vp_isa_name(isa), pb->n, pb->k, pb->m, block);
    check_padding(vp_isa_name(isa), pb, split);
    free(ws), free(packed), free(all), free(split);
}

static void test_columns_independent(void **state)
{
    (void)state;
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        for (int t = 0; t < 12; t++) {
            /* k above the SIMD variants' 512 a block: x packed in each call */
            problem pb = t == 0 ? make_problem(40, 1030, 200, 1, 3, 1) : random_problem();
            check_columns_independent((vp_isa)isa, &pb);
            free_problem(&pb);
        }
    }
}

/* The block sizes follow the caches (matmul_block_for_caches): with the
 * caches of a small core (32 KiB L1, 256 KiB L2: KC 256 or 336, MC a few
 * panels) and of a large one (64 KiB, 2 MiB), packing and matmul give the
 * bits they give with this CPU's own, for shapes whose k spans several
 * blocks and whose m spans several MC blocks. */
static void test_block_sizes_change_nothing(void **state)
{
    (void)state;
    static const size_t caches[][2] = {{32 * 1024, 256 * 1024}, {64 * 1024, 2048 * 1024}};
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        for (int t = 0; t < 4; t++) {
            problem pb = t == 0   ? make_problem(37, 1500, 700, 1, 3, 1)
                         : t == 1 ? make_problem(13, 2100, 300, 0, 0, 0)
                                  : random_problem();
            float *want = run_all((vp_isa)isa, &pb);
            for (size_t c = 0; c < 2; c++) {
                fns[isa].reblock(caches[c][0], caches[c][1]);
                float *got = run_all((vp_isa)isa, &pb);
                if (memcmp(want, got, pb.n * pb.ldo * sizeof *got) != 0)
                    fail_msg("%s %zux%zux%zu: L1 %zu, L2 %zu bytes give other bits",
                             vp_isa_name((vp_isa)isa), pb.n, pb.k, pb.m, caches[c][0],
                             caches[c][1]);
                free(got);
            }
            fns[isa].reblock(0, 0); /* this CPU's again */
            free(want);
            free_problem(&pb);
        }
    }
}

/* The smallest shapes, and a check that no value of x or W is lost or
 * doubled: x one-hot, so out[i][j] = w[j][hot(i)] + b[j] exactly. */
static void test_one_hot(void **state)
{
    (void)state;
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        static const size_t sizes[][3] = {
            {1, 1, 1}, {1, 1, 17}, {17, 1, 1}, {5, 600, 67}, {70, 33, 130}};
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            problem pb = make_problem(sizes[s][0], sizes[s][1], sizes[s][2], 2, 1, (int)(s & 1));
            for (size_t i = 0; i < pb.n; i++)
                for (size_t p = 0; p < pb.k; p++)
                    pb.x[i * pb.ldx + p] = p == (i * 7) % pb.k ? 1.0f : 0.0f;
            float *out = run_all((vp_isa)isa, &pb);
            for (size_t i = 0; i < pb.n; i++)
                for (size_t j = 0; j < pb.m; j++) {
                    float want = pb.w[j * pb.k + (i * 7) % pb.k] + (pb.bias ? pb.bias[j] : 0.0f);
                    if (out[i * pb.ldo + j] != want) {
                        fprintf(stderr, "%s one-hot %zux%zux%zu: out[%zu][%zu] = %.9g, want %.9g\n",
                                vp_isa_name((vp_isa)isa), pb.n, pb.k, pb.m, i, j,
                                out[i * pb.ldo + j], want);
                        fail();
                    }
                }
            check_padding(vp_isa_name((vp_isa)isa), &pb, out);
            free(out);
            free_problem(&pb);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_against_double),
        cmocka_unit_test(test_simd_against_scalar),
        cmocka_unit_test(test_rows_independent),
        cmocka_unit_test(test_columns_independent),
        cmocka_unit_test(test_block_sizes_change_nothing),
        cmocka_unit_test(test_one_hot),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
