/* The kernel tables (src/kernels/kern_table.c): one per instruction set,
 * every entry filled and naming that set's functions; kern_for falls back
 * to the scalar table for a set this CPU or build lacks and for a value
 * outside the enum; kern_current is the table of vp_isa_current(), the same
 * pointer from every call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernels/kern_variants.h"
#include "test_filter.h"
#include "varprof/isa.h"

/* Every entry of t set. */
static void every_entry_is_set(const kern_table *t)
{
    assert_non_null(t->matmul_packed_floats);
    assert_non_null(t->matmul_pack);
    assert_non_null(t->matmul_workspace_floats);
    assert_non_null(t->matmul);
    assert_non_null(t->layernorm);
    assert_non_null(t->rmsnorm);
    assert_non_null(t->gelu);
    assert_non_null(t->softmax);
    assert_non_null(t->attention);
    assert_non_null(t->residual);
    assert_non_null(t->square_sum);
    assert_non_null(t->adam);
    assert_non_null(t->gauss_fill);
    assert_non_null(t->mc_noise_sums);
    assert_non_null(t->mc_add_branch);
    assert_non_null(t->mc_add_and_normalise);
}

static void each_table_holds_its_set(void **state)
{
    (void)state;
    const kern_table *scalar = kern_for(VP_ISA_SCALAR);
    every_entry_is_set(scalar);
    assert_true(scalar->matmul == kern_matmul_scalar);
    assert_true(scalar->layernorm == kern_layernorm_scalar);
    assert_true(scalar->gauss_fill == kern_gauss_fill_scalar);
    assert_true(scalar->mc_add_branch == kern_mc_add_branch_scalar);
#if defined(__x86_64__)
    if (vp_isa_supported(VP_ISA_AVX2)) {
        const kern_table *t = kern_for(VP_ISA_AVX2);
        every_entry_is_set(t);
        assert_true(t->matmul == kern_matmul_avx2);
        assert_true(t->attention == kern_attention_avx2);
        assert_true(t->residual == kern_residual_avx2);
        assert_true(t->gauss_fill == kern_gauss_fill_avx2);
        assert_true(t->mc_noise_sums == kern_mc_noise_sums_avx2);
    } else {
        assert_ptr_equal(kern_for(VP_ISA_AVX2), scalar);
    }
    if (vp_isa_supported(VP_ISA_AVX512)) {
        const kern_table *t = kern_for(VP_ISA_AVX512);
        every_entry_is_set(t);
        assert_true(t->matmul == kern_matmul_avx512);
        assert_true(t->softmax == kern_softmax_avx512);
        assert_true(t->square_sum == kern_square_sum_avx512);
        assert_true(t->gauss_fill == kern_gauss_fill_avx512);
        assert_true(t->mc_add_and_normalise == kern_mc_add_and_normalise_avx512);
    } else {
        assert_ptr_equal(kern_for(VP_ISA_AVX512), scalar);
    }
#endif
}

static void outside_the_enum_is_scalar(void **state)
{
    (void)state;
    assert_ptr_equal(kern_for(VP_ISA_COUNT), kern_for(VP_ISA_SCALAR));
    assert_ptr_equal(kern_for((vp_isa)-1), kern_for(VP_ISA_SCALAR));
    assert_false(kern_built(VP_ISA_COUNT));
    assert_true(kern_built(VP_ISA_SCALAR));
}

static void current_is_the_chosen_set(void **state)
{
    (void)state;
    const kern_table *t = kern_current();
    assert_ptr_equal(t, kern_for(vp_isa_current()));
    assert_ptr_equal(t, kern_current());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_table_holds_its_set),
        cmocka_unit_test(outside_the_enum_is_scalar),
        cmocka_unit_test(current_is_the_chosen_set),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("kernel tables", tests, NULL, NULL);
}
