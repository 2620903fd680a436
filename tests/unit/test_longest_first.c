/* The order runs start in (src/sys/longest_first.c): the costliest first,
 * ties in index order, every index once, against an order worked out by
 * hand and a brute-force check over random costs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sys/longest_first.h"
#include "test_filter.h"

static double from_array(const void *ctx, size_t index)
{
    return ((const double *)ctx)[index];
}

static void by_hand(void **state)
{
    (void)state;
    const double costs[] = {3.0, 1.0, 3.0, 2.0, 0.5, 3.0};
    const size_t want[] = {0, 2, 5, 3, 1, 4};
    size_t *order = longest_first(6, from_array, costs);
    assert_non_null(order);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(order[i], want[i]);
    free(order);
}

/* A permutation, the costs never rising, equal costs in index order. */
static void random_costs(void **state)
{
    (void)state;
    srand(7);
    for (size_t n = 1; n <= 40; n++) {
        double costs[40];
        for (size_t i = 0; i < n; i++)
            costs[i] = (double)(rand() % 5);
        size_t *order = longest_first(n, from_array, costs);
        assert_non_null(order);
        int seen[40] = {0};
        for (size_t i = 0; i < n; i++) {
            assert_true(order[i] < n);
            assert_int_equal(seen[order[i]]++, 0);
            if (i > 0) {
                assert_true(costs[order[i - 1]] >= costs[order[i]]);
                if (costs[order[i - 1]] == costs[order[i]])
                    assert_true(order[i - 1] < order[i]);
            }
        }
        free(order);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_hand),
        cmocka_unit_test(random_costs),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
