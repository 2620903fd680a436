/* Percentiles by selection against GSL's sort-then-interpolate. */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mc/quantile.h"
#include "test_filter.h"

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void equals_gsl_on_random_data(void **state)
{
    (void)state;
    uint64_t s = 88172645463325252ull;
    const double ps[] = {0.0, 0.05, 0.5, 0.95, 1.0, 0.333};
    for (size_t trial = 0; trial < 2000; trial++) {
        const size_t n = 1 + next(&s) % 300;
        /* few distinct values in some trials: duplicates are the hard case */
        const uint64_t distinct = trial % 3 == 0 ? 1 + next(&s) % 5 : UINT64_MAX;
        double *a = malloc(n * sizeof *a), *sorted = malloc(n * sizeof *a);
        assert_non_null(a);
        assert_non_null(sorted);
        for (size_t i = 0; i < n; i++)
            a[i] = (double)(next(&s) % distinct) * 0.25 - 3.0;
        memcpy(sorted, a, n * sizeof *a);
        gsl_sort(sorted, 1, n);
        double many[6];
        double *copy = malloc(n * sizeof *copy);
        assert_non_null(copy);
        memcpy(copy, a, n * sizeof *a);
        quantiles_select(copy, n, ps, 6, many);
        free(copy);
        for (size_t q = 0; q < sizeof ps / sizeof *ps; q++) {
            double want = gsl_stats_quantile_from_sorted_data(sorted, 1, n, ps[q]);
            if (many[q] != want) {
                print_error("together: n %zu, p %g: %.17g, GSL %.17g\n", n, ps[q], many[q], want);
                fail();
            }
        }
        for (size_t q = 0; q < sizeof ps / sizeof *ps; q++) {
            double want = gsl_stats_quantile_from_sorted_data(sorted, 1, n, ps[q]);
            double got = quantile_select(a, n, ps[q]);
            if (got != want) {
                print_error("n %zu, p %g: %.17g, GSL %.17g\n", n, ps[q], got, want);
                fail();
            }
        }
        free(a);
        free(sorted);
    }
}

/* Shapes that defeat a naive pivot: all equal, sorted, reversed, organ pipe. */
static void awkward_shapes(void **state)
{
    (void)state;
    const size_t n = 20001;
    double *a = malloc(n * sizeof *a), *sorted = malloc(n * sizeof *a);
    assert_non_null(a);
    assert_non_null(sorted);
    for (int shape = 0; shape < 4; shape++) {
        for (size_t i = 0; i < n; i++)
            a[i] = shape == 0   ? 7.0
                   : shape == 1 ? (double)i
                   : shape == 2 ? (double)(n - i)
                                : (double)(i < n / 2 ? i : n - i);
        memcpy(sorted, a, n * sizeof *a);
        gsl_sort(sorted, 1, n);
        const double ps[3] = {0.05, 0.5, 0.95};
        double got[3];
        quantiles_select(a, n, ps, 3, got);
        for (int q = 0; q < 3; q++)
            assert_true(got[q] == gsl_stats_quantile_from_sorted_data(sorted, 1, n, ps[q]));
    }
    free(a);
    free(sorted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(equals_gsl_on_random_data),
                                       cmocka_unit_test(awkward_shapes)};
    test_filter_from_environment();
    return cmocka_run_group_tests_name("quantiles by selection", tests, NULL, NULL);
}
