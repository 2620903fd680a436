/* The row-field table against the contracts it must keep: varprof(1)'s CSV
 * columns in their order, names used once, a value source matching each
 * field's kind, and the comparison's quantities in vp_quantity's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/row_fields.h"
#include "test_filter.h"
#include "varprof/compare.h"
#include "varprof/csv.h"

/* Written out here, not read from the table: the CSV is the stable machine
 * interface, and a column may only be appended. */
static const char *const csv_contract[] = {
    /* varprof(1), OUTPUT */
    "engine",
    "placement",
    "norm",
    "layers",
    "sub_block",
    "layer",
    "part",
    "gain",
    "stream_var",
    "stream_size",
    "update_ratio",
    "embedding_share",
    "stream_var_lo",
    "stream_var_hi",
    "update_ratio_lo",
    "update_ratio_hi",
    "embedding_share_lo",
    "embedding_share_hi",
    "measured_gain",
    "update_cosine",
    "stream_norm",
    /* added since, at the end */
    "stream_size_p05",
    "stream_size_p50",
    "stream_size_p95",
    /* a sweep's values on every row (issue 12) */
    "gain_setting",
    "width",
    "log2_embedding_share",
    /* the backward half (issue 13) */
    "grad_var",
    "grad_size",
    "weight_grad",
    "grad_var_lo",
    "grad_var_hi",
    "grad_size_lo",
    "grad_size_hi",
    "weight_grad_lo",
    "weight_grad_hi",
};

static void csv_columns_keep_their_order(void **state)
{
    (void)state;
    const size_t contract = sizeof csv_contract / sizeof *csv_contract;
    assert_true(vp_csv_column_count() >= contract);
    for (size_t c = 0; c < contract; c++) {
        if (strcmp(vp_csv_column_name(c), csv_contract[c]) != 0)
            print_error("column %zu is %s, the contract says %s\n", c, vp_csv_column_name(c),
                        csv_contract[c]);
        assert_string_equal(vp_csv_column_name(c), csv_contract[c]);
    }
    assert_null(vp_csv_column_name(vp_csv_column_count()));
}

static void every_field_is_named_once_and_has_a_value(void **state)
{
    (void)state;
    for (size_t f = 0; f < row_field_table_size; f++) {
        const row_field *field = &row_field_table[f];
        assert_non_null(field->name);
        assert_true(field->appears != 0);
        for (size_t g = 0; g < f; g++)
            assert_string_not_equal(field->name, row_field_table[g].name);
        switch (field->kind) {
        case ROW_FIELD_TEXT: assert_non_null(field->text); break;
        case ROW_FIELD_SIZE: assert_non_null(field->size); break;
        case ROW_FIELD_DOUBLE:
            /* a member of vp_row, or derived: never both */
            assert_true(field->number == NULL || field->offset == 0);
            assert_true(field->offset + sizeof(double) <= sizeof(vp_row));
            break;
        }
        if (field->compared_as)
            assert_true(field->kind == ROW_FIELD_DOUBLE && field->se_offset > 0 &&
                        field->se_offset + sizeof(double) <= sizeof(vp_row));
    }
}

static void compared_fields_are_the_quantities(void **state)
{
    (void)state;
    assert_string_equal(row_field_compared(VP_Q_STREAM_VAR)->name, "stream_var");
    assert_string_equal(row_field_compared(VP_Q_UPDATE_RATIO)->name, "update_ratio");
    assert_string_equal(row_field_compared(VP_Q_EMBEDDING_SHARE)->name, "embedding_share");
    assert_null(row_field_compared(VP_Q_COUNT));
    assert_string_equal(vp_quantity_name(VP_Q_STREAM_VAR), "stream variance");
    assert_string_equal(vp_quantity_name(VP_Q_UPDATE_RATIO), "update ratio");
    assert_string_equal(vp_quantity_name(VP_Q_EMBEDDING_SHARE), "embedding share");
    assert_string_equal(vp_quantity_name(VP_Q_GRAD_VAR), "gradient variance");
    assert_string_equal(vp_quantity_name(VP_Q_WEIGHT_GRAD), "weight gradient");
    assert_false(vp_quantity_applies(VP_Q_WEIGHT_GRAD, 0));
    assert_true(vp_quantity_applies(VP_Q_GRAD_VAR, 0));
    assert_false(vp_quantity_applies(VP_Q_UPDATE_RATIO, 0));
    assert_true(vp_quantity_applies(VP_Q_UPDATE_RATIO, 1));
    assert_true(vp_quantity_applies(VP_Q_STREAM_VAR, 0));
}

static void presence_follows_the_profile_and_the_sub_block(void **state)
{
    (void)state;
    vp_profile *p = vp_profile_alloc(2);
    assert_non_null(p);
    p->fields = VP_HAS_BOUNDS;
    p->rows[1].update_ratio_lo = 0.25;
    for (size_t f = 0; f < row_field_table_size; f++) {
        const row_field *field = &row_field_table[f];
        if (strcmp(field->name, "update_ratio_lo") == 0) {
            assert_false(row_field_present(field, p, 0)); /* no branch at the embedding */
            assert_true(row_field_present(field, p, 1));
            assert_true(row_field_double(field, p, 1) == 0.25);
        }
        if (strcmp(field->name, "measured_gain") == 0)
            assert_false(row_field_present(field, p, 1)); /* not measured */
    }
    vp_profile_free(p);
}

static const row_field *field_named(const char *name)
{
    for (size_t f = 0; f < row_field_table_size; f++)
        if (strcmp(row_field_table[f].name, name) == 0)
            return &row_field_table[f];
    fail_msg("no field %s", name);
    return NULL;
}

/* A sweep's rows are grouped by gain_setting and width: on every row, the
 * embedding's included, and only where the profile has them. */
static void sweep_columns_are_on_every_row_where_they_apply(void **state)
{
    (void)state;
    vp_profile *p = vp_profile_alloc(2);
    assert_non_null(p);
    p->config.gain = 2.5;
    const row_field *gain = field_named("gain_setting"), *width = field_named("width");
    assert_true(row_field_present(gain, p, 0));
    assert_true(row_field_double(gain, p, 0) == 2.5);
    assert_false(row_field_present(width, p, 0)); /* the closed form has no width */
    p->sampling.generator = "philox4x32-10";
    p->sampling.width = 256;
    assert_true(row_field_present(width, p, 0));
    assert_int_equal(row_field_size(width, p, 2), 256);
    p->gains_from_file = 1; /* one gain per sub-block: no single setting */
    assert_false(row_field_present(gain, p, 1));
    assert_int_equal(gain->appears, ROW_FIELD_CSV);
    assert_int_equal(width->appears, ROW_FIELD_CSV);
    vp_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_columns_keep_their_order),
        cmocka_unit_test(every_field_is_named_once_and_has_a_value),
        cmocka_unit_test(compared_fields_are_the_quantities),
        cmocka_unit_test(presence_follows_the_profile_and_the_sub_block),
        cmocka_unit_test(sweep_columns_are_on_every_row_where_they_apply),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("row fields", tests, NULL, NULL);
}
