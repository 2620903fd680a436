/* The placement table: every row complete and consistent with itself, the
 * accessors reading it, and NULL for a placement out of range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/varprof.h"

static void every_row_is_complete(void **state)
{
    (void)state;
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++) {
        const vp_placement_traits *t = vp_placement_traits_of((vp_placement)p);
        assert_non_null(t);
        assert_non_null(t->name);
        assert_non_null(t->formula);
        assert_non_null(t->display_name);
        assert_string_equal(vp_placement_name((vp_placement)p), t->name);
        assert_string_equal(vp_placement_display_name((vp_placement)p), t->display_name);
        assert_string_equal(vp_placement_formula((vp_placement)p), t->formula);
        /* a layer is an attention and an MLP branch, however they are grouped */
        assert_int_equal(t->branches_per_sub_block * t->sub_blocks_per_layer, 2);
        assert_int_equal(vp_sub_blocks_per_layer((vp_placement)p), t->sub_blocks_per_layer);
        /* alpha scales the stream before a norm brings it back; without one it
           would compound */
        if (t->residual_alpha)
            assert_true(t->norm_stream);
        vp_placement parsed;
        vp_error err;
        assert_int_equal(vp_placement_parse(t->name, &parsed, &err), VP_OK);
        assert_int_equal(parsed, p);
    }
}

static void the_table_says_what_the_formulas_say(void **state)
{
    (void)state;
    const vp_placement_traits *pre = vp_placement_traits_of(VP_PRE_NORM);
    assert_true(pre->norm_in && !pre->norm_out && !pre->norm_stream);
    const vp_placement_traits *sandwich = vp_placement_traits_of(VP_SANDWICH);
    assert_true(sandwich->norm_in && sandwich->norm_out && !sandwich->norm_stream);
    const vp_placement_traits *deep = vp_placement_traits_of(VP_DEEPNORM);
    assert_true(deep->norm_stream && deep->residual_alpha && deep->branch_beta);
    const vp_placement_traits *parallel = vp_placement_traits_of(VP_PARALLEL);
    assert_int_equal(parallel->branches_per_sub_block, 2);
    assert_int_equal(vp_sub_block_part(VP_PARALLEL, 1), VP_PART_BLOCK);
    assert_int_equal(vp_sub_block_part(VP_PRE_NORM, 2), VP_PART_MLP);
    const vp_placement_traits *none = vp_placement_traits_of(VP_NO_NORM);
    assert_true(!none->norm_in && !none->norm_out && !none->norm_stream);
}

static void out_of_range_is_null(void **state)
{
    (void)state;
    assert_null(vp_placement_traits_of(VP_PLACEMENT_COUNT));
    assert_null(vp_placement_traits_of((vp_placement)-1));
    assert_null(vp_placement_name(VP_PLACEMENT_COUNT));
    assert_null(vp_placement_formula(VP_PLACEMENT_COUNT));
    assert_null(vp_placement_display_name(VP_PLACEMENT_COUNT));
}

/* What a reader sees in a figure, not what is typed on the command line. */
static void display_names_are_the_literature_s(void **state)
{
    (void)state;
    const char *want[VP_PLACEMENT_COUNT] = {
        [VP_POST_LN] = "Post-LN",   [VP_PRE_NORM] = "Pre-norm",
        [VP_SANDWICH] = "Sandwich", [VP_OUTPUT_NORM] = "Output norm",
        [VP_DEEPNORM] = "DeepNorm", [VP_PARALLEL] = "Parallel",
        [VP_NO_NORM] = "None"};
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
        assert_string_equal(vp_placement_display_name((vp_placement)p), want[p]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_is_complete),
        cmocka_unit_test(the_table_says_what_the_formulas_say),
        cmocka_unit_test(out_of_range_is_null),
        cmocka_unit_test(display_names_are_the_literature_s),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
