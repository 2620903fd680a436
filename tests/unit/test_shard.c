/* Shards (src/core/shard.c): K/N read or refused; for N from 1 to 13 the
 * parts cover every combination exactly once, in order, none empty; a part's
 * cost stays near the whole's 1/N where the costs allow it; the same costs
 * and N give the same split in every call. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/shard.h"

static void parts_are_read_and_refused(void **state)
{
    (void)state;
    vp_shard s = {0, 0};
    vp_error err = {0};
    assert_int_equal(vp_shard_parse("3/8", &s, &err), VP_OK);
    assert_int_equal(s.index, 3);
    assert_int_equal(s.count, 8);
    assert_int_equal(vp_shard_parse("1/1", &s, &err), VP_OK);
    const char *bad[] = {"0/8", "9/8",  "8",    "/8",       "3/", "3/0",
                         "a/b", "3/8x", "-1/8", "1/100001", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        s = (vp_shard){7, 7};
        assert_int_equal(vp_shard_parse(bad[i], &s, &err), VP_EINVAL);
        assert_int_equal(s.index, 7); /* untouched */
        assert_non_null(strstr(err.message, "K"));
    }
    assert_int_equal(vp_shard_parse("9/8", &s, &err), VP_EINVAL);
    assert_string_equal(err.message, "'9/8': part 9 of 8; K counts from 1 to N");
}

/* Costs of a sweep's kind: layers 1, 2, 4, ... 64 under a few placements. */
static void sweep_costs(double *costs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        costs[i] = (double)(1u << (i % 7));
}

static void every_combination_exactly_once(void **state)
{
    (void)state;
    enum { MAX = 40 };
    double costs[MAX];
    const size_t sizes[] = {13, 21, 40};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        const size_t n = sizes[z];
        sweep_costs(costs, n);
        for (size_t parts = 1; parts <= 13; parts++) {
            int seen[MAX] = {0};
            size_t next = 0;
            for (size_t k = 1; k <= parts; k++) {
                size_t first = 99, end = 99;
                vp_error err;
                assert_int_equal(vp_shard_range(costs, n, (vp_shard){k, parts}, &first, &end, &err),
                                 VP_OK);
                assert_int_equal(first, next); /* contiguous, in order */
                assert_true(end > first);      /* never empty */
                for (size_t i = first; i < end; i++)
                    seen[i]++;
                next = end;
                size_t again_first, again_end;
                vp_shard_range(costs, n, (vp_shard){k, parts}, &again_first, &again_end, &err);
                assert_int_equal(again_first, first);
                assert_int_equal(again_end, end);
            }
            assert_int_equal(next, n);
            for (size_t i = 0; i < n; i++)
                assert_int_equal(seen[i], 1);
        }
    }
}

/* Equal costs split as evenly as counts allow; a part of unequal costs
   holds no more than 1/N of the whole plus the one combination that
   straddles each of its boundaries. */
static void parts_are_balanced_by_cost(void **state)
{
    (void)state;
    double ones[12], costs[40];
    for (size_t i = 0; i < 12; i++)
        ones[i] = 1.0;
    vp_error err;
    for (size_t k = 1; k <= 4; k++) {
        size_t first, end;
        assert_int_equal(vp_shard_range(ones, 12, (vp_shard){k, 4}, &first, &end, &err), VP_OK);
        assert_int_equal(end - first, 3);
    }
    sweep_costs(costs, 40);
    double total = 0.0, largest = 0.0;
    for (size_t i = 0; i < 40; i++) {
        total += costs[i];
        largest = fmax(largest, costs[i]);
    }
    for (size_t parts = 1; parts <= 8; parts++)
        for (size_t k = 1; k <= parts; k++) {
            size_t first, end;
            vp_shard_range(costs, 40, (vp_shard){k, parts}, &first, &end, &err);
            double part = 0.0;
            for (size_t i = first; i < end; i++)
                part += costs[i];
            assert_true(part <= total / (double)parts + largest);
        }
}

static void impossible_splits_are_refused(void **state)
{
    (void)state;
    double costs[3] = {1, 2, 3};
    size_t first = 77, end = 77;
    vp_error err;
    assert_int_equal(vp_shard_range(costs, 3, (vp_shard){1, 4}, &first, &end, &err), VP_EINVAL);
    assert_string_equal(err.message, "4 parts of 3 combinations: a part would have nothing to "
                                     "run; give at most 3 parts");
    assert_int_equal(first, 77);
    costs[1] = NAN;
    assert_int_equal(vp_shard_range(costs, 3, (vp_shard){1, 2}, &first, &end, &err), VP_EINVAL);
    costs[1] = -1;
    assert_int_equal(vp_shard_range(costs, 3, (vp_shard){1, 2}, &first, &end, &err), VP_EINVAL);
    assert_int_equal(vp_shard_range(costs, 3, (vp_shard){3, 2}, &first, &end, &err), VP_EINVAL);
    double zeros[5] = {0};
    assert_int_equal(vp_shard_range(zeros, 5, (vp_shard){5, 5}, &first, &end, &err), VP_OK);
    assert_int_equal(first, 4);
    assert_int_equal(end, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parts_are_read_and_refused),
        cmocka_unit_test(every_combination_exactly_once),
        cmocka_unit_test(parts_are_balanced_by_cost),
        cmocka_unit_test(impossible_splits_are_refused),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
