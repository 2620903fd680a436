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

/* Every entry of t set to the set's own function, kern_NAME_<isa>, for
   every kernel of kern_list.h: a new kernel is checked as soon as it is
   listed, and an entry pointing at another set's function is caught. */
#define KERN(type, name, parameters) assert_true(t->name == KERN_CAT(kern_##name, KERN_CHECKING));
static void every_entry_is_scalar(const kern_table *t)
{
#define KERN_CHECKING scalar
#include "kernels/kern_list.h"
#undef KERN_CHECKING
}
#if defined(__x86_64__)
static void every_entry_is_avx2(const kern_table *t)
{
#define KERN_CHECKING avx2
#include "kernels/kern_list.h"
#undef KERN_CHECKING
}
static void every_entry_is_avx512(const kern_table *t)
{
#define KERN_CHECKING avx512
#include "kernels/kern_list.h"
#undef KERN_CHECKING
}
#endif
#undef KERN

static void each_table_holds_its_set(void **state)
{
    (void)state;
    const kern_table *scalar = kern_for(VP_ISA_SCALAR);
    every_entry_is_scalar(scalar);
#if defined(__x86_64__)
    if (vp_isa_supported(VP_ISA_AVX2)) {
        const kern_table *t = kern_for(VP_ISA_AVX2);
        every_entry_is_avx2(t);
    } else {
        assert_ptr_equal(kern_for(VP_ISA_AVX2), scalar);
    }
    if (vp_isa_supported(VP_ISA_AVX512)) {
        const kern_table *t = kern_for(VP_ISA_AVX512);
        every_entry_is_avx512(t);
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
