/* The residual form's table and the interleaved rotary pairing: the rows round-trip
 * by name, their columns say what a parallel block is, and rope_interleaved turns
 * each pair (2i, 2i + 1) by the angle of pair i, in every instruction set's
 * variant, against a plain double loop written here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kern_variants.h"
#include "test_filter.h"
#include "varprof/isa.h"
#include "varprof/varprof.h"

static void residual_rows_round_trip(void **state)
{
    (void)state;
    for (int r = 0; r < VP_RESIDUAL_COUNT; r++) {
        const vp_residual_traits *t = vp_residual_traits_of((vp_residual)r);
        assert_non_null(t);
        assert_string_equal(vp_residual_name((vp_residual)r), t->name);
        vp_residual back = VP_RESIDUAL_COUNT;
        assert_int_equal(vp_residual_parse(t->name, &back, NULL), VP_OK);
        assert_int_equal(back, r);
        assert_int_equal(vp_residual_check((vp_residual)r, NULL), VP_OK);
        /* a layer is an attention and an MLP branch, however grouped */
        assert_int_equal(t->branches_per_sub_block * t->sub_blocks_per_layer, 2);
    }
    assert_null(vp_residual_traits_of(VP_RESIDUAL_COUNT));
    assert_null(vp_residual_name(VP_RESIDUAL_COUNT));
    vp_error err = {0};
    vp_residual out;
    assert_int_equal(vp_residual_parse("parallel", &out, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "parallel-two-norms"));
    assert_int_equal(vp_residual_check(VP_RESIDUAL_COUNT, &err), VP_EINVAL);
}

static void residual_columns(void **state)
{
    (void)state;
    const vp_residual_traits *shared = vp_residual_traits_of(VP_RESIDUAL_PARALLEL_SHARED_NORM);
    const vp_residual_traits *two = vp_residual_traits_of(VP_RESIDUAL_PARALLEL_TWO_NORMS);
    const vp_residual_traits *seq = vp_residual_traits_of(VP_RESIDUAL_SEQUENTIAL);
    assert_int_equal(seq->sub_blocks_per_layer, 2);
    assert_int_equal(seq->norms_per_sub_block, 1);
    assert_int_equal(shared->sub_blocks_per_layer, 1);
    assert_int_equal(shared->norms_per_sub_block, 1);
    assert_int_equal(two->sub_blocks_per_layer, 1);
    assert_int_equal(two->norms_per_sub_block, 2);
    /* the parallel placement's row lays out the shared-norm form */
    const vp_placement_traits *p = vp_placement_traits_of(VP_PARALLEL);
    assert_int_equal(p->branches_per_sub_block, shared->branches_per_sub_block);
    assert_int_equal(p->sub_blocks_per_layer, shared->sub_blocks_per_layer);
}

static void positions_pairings(void **state)
{
    (void)state;
    assert_int_equal(vp_positions_traits_of(VP_POSITIONS_ROPE)->rotary, VP_ROTARY_HALF);
    assert_int_equal(vp_positions_traits_of(VP_POSITIONS_ROPE_INTERLEAVED)->rotary,
                     VP_ROTARY_INTERLEAVED);
    vp_positions p = VP_POSITIONS_NONE;
    assert_int_equal(vp_positions_parse("rope-interleaved", &p, NULL), VP_OK);
    assert_int_equal(p, VP_POSITIONS_ROPE_INTERLEAVED);
}

typedef void (*rope_fn)(float *, size_t, const float *, const float *, size_t, size_t, size_t, int);

static const struct {
    vp_isa isa;
    rope_fn rope;
} VARIANTS[] = {
    {VP_ISA_SCALAR, kern_rope_interleaved_scalar},
#if defined(__x86_64__)
    {VP_ISA_AVX2, kern_rope_interleaved_avx2},
    {VP_ISA_AVX512, kern_rope_interleaved_avx512},
#endif
};

enum { ROWS = 5, HEADS = 3, HD = 6, LD = HEADS * HD + 2 };

/* x_{2i} c - x_{2i+1} s, x_{2i+1} c + x_{2i} s in double: within a few
   float roundings of the kernel's float products; inverse negates s */
static void interleaved_matches_a_plain_loop(void **state)
{
    (void)state;
    float cos_t[ROWS * HD / 2], sin_t[ROWS * HD / 2], x[ROWS * LD], y[ROWS * LD];
    for (size_t i = 0; i < ROWS * HD / 2; i++) {
        cos_t[i] = (float)cos(0.3 * (double)i + 0.1);
        sin_t[i] = (float)sin(0.3 * (double)i + 0.1);
    }
    for (size_t i = 0; i < ROWS * LD; i++)
        x[i] = (float)sin(1.7 * (double)i) * 2.0f;
    for (size_t v = 0; v < sizeof VARIANTS / sizeof *VARIANTS; v++) {
        if (!vp_isa_supported(VARIANTS[v].isa))
            continue;
        for (int inverse = 0; inverse < 2; inverse++) {
            memcpy(y, x, sizeof y);
            VARIANTS[v].rope(y, LD, cos_t, sin_t, ROWS, HEADS, HD, inverse);
            for (size_t r = 0; r < ROWS; r++)
                for (size_t h = 0; h < HEADS; h++)
                    for (size_t i = 0; i < HD / 2; i++) {
                        const size_t at = r * LD + h * HD + 2 * i;
                        const double c = cos_t[r * HD / 2 + i];
                        const double s = (inverse ? -1.0 : 1.0) * sin_t[r * HD / 2 + i];
                        const double a = x[at], b = x[at + 1];
                        assert_true(fabs(y[at] - (a * c - b * s)) < 4e-6); /* values below 3 */
                        assert_true(fabs(y[at + 1] - (b * c + a * s)) < 4e-6);
                    }
            /* the columns past the heads are left alone */
            for (size_t r = 0; r < ROWS; r++)
                assert_memory_equal(y + r * LD + HEADS * HD, x + r * LD + HEADS * HD,
                                    2 * sizeof *y);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(residual_rows_round_trip),
        cmocka_unit_test(residual_columns),
        cmocka_unit_test(positions_pairings),
        cmocka_unit_test(interleaved_matches_a_plain_loop),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
