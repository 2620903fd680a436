/* The strict number parser: every text a user might type, and what it gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/parse.h"

static void accepts_decimal_numbers(void **state)
{
    (void)state;
    const struct {
        const char *text;
        double value;
    } cases[] = {
        {"1", 1.0},       {"0", 0.0},   {"-3", -3.0},       {"+2.5", 2.5},
        {".5", 0.5},      {"2.", 2.0},  {"1e-300", 1e-300}, {"1.5E3", 1500.0},
        {"1e150", 1e150}, {"0.1", 0.1}, {"00012", 12.0},    {"1e+2", 100.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double value = -99.0;
        vp_error err;
        assert_int_equal(vp_parse_double(cases[i].text, &value, &err), VP_OK);
        assert_true(value == cases[i].value); /* strtod rounds correctly: exact */
    }
}

static void refuses_what_is_not_a_finite_number(void **state)
{
    (void)state;
    const char *bad[] = {"",       "nan",   "NaN",  "inf",   "-inf", "infinity", "1e400",
                         "-1e400", "12abc", " 1",   "1 ",    "0x10", "1e",       "e5",
                         ".",      "+",     "1..2", "1e5.5", "--1",  "1,5",      "1e-400"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double value = 42.0;
        vp_error err = {0};
        if (vp_parse_double(bad[i], &value, &err) != VP_EINVAL) {
            print_error("'%s' was accepted as %g\n", bad[i], value);
            fail();
        }
        assert_true(value == 42.0); /* untouched */
        assert_true(strlen(err.message) > 0);
    }
}

static void whole_numbers_are_strict(void **state)
{
    (void)state;
    size_t value = 0;
    vp_error err;
    assert_int_equal(vp_parse_size("32", 1, 1000000, &value, &err), VP_OK);
    assert_int_equal(value, 32);
    assert_int_equal(vp_parse_size("1000000", 1, 1000000, &value, &err), VP_OK);
    assert_int_equal(value, 1000000);
    const char *bad[] = {"",   "0",     "1000001", "1.5", "-3",
                         "+3", "12abc", "1e3",     " 3",  "99999999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        value = 7;
        if (vp_parse_size(bad[i], 1, 1000000, &value, &err) != VP_EINVAL) {
            print_error("'%s' was accepted as %zu\n", bad[i], value);
            fail();
        }
        assert_int_equal(value, 7);
    }
    /* the message names the text and the range */
    vp_parse_size("1000001", 1, 1000000, &value, &err);
    assert_non_null(strstr(err.message, "1000001"));
    assert_non_null(strstr(err.message, "1 to 1000000"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepts_decimal_numbers),
        cmocka_unit_test(refuses_what_is_not_a_finite_number),
        cmocka_unit_test(whole_numbers_are_strict),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("number parsing", tests, NULL, NULL);
}
