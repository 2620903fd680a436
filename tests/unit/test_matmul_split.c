/* The projection's split over threads (src/forward/matmul_split.c): every
 * output element in exactly one task, every task whole tiles (its first row
 * and column on a tile's edge, its size a whole number of tiles but at the
 * output's edge), no more tasks than threads, and the columns alone where
 * they share evenly. Shapes: 128 x 4096 on 16 threads (the 7B stack's
 * projections), 7 x 13 on 3, one row, and a sweep of small ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "forward/matmul_split.h"
#include "test_filter.h"

/* Checks the split's promises; returns its task count. */
static size_t check_split(size_t rows, size_t cols, size_t mr, size_t nr, size_t threads,
                          size_t redo)
{
    const fw_split s = fw_split_for(rows, cols, mr, nr, threads, redo);
    const size_t tasks = fw_split_tasks(&s);
    assert_true(tasks >= 1);
    assert_true(tasks <= threads);
    unsigned char *seen = calloc(rows * cols, 1);
    assert_non_null(seen);
    for (size_t t = 0; t < tasks; t++) {
        size_t i0, i1, j0, j1;
        fw_split_task(&s, t, &i0, &i1, &j0, &j1);
        assert_true(i0 < i1 && i1 <= rows);
        assert_true(j0 < j1 && j1 <= cols);
        /* whole tiles: starts on a tile's edge, ends on one or at the edge */
        assert_int_equal(i0 % mr, 0);
        assert_int_equal(j0 % nr, 0);
        assert_true(i1 == rows || (i1 - i0) % mr == 0);
        assert_true(j1 == cols || (j1 - j0) % nr == 0);
        for (size_t i = i0; i < i1; i++)
            for (size_t j = j0; j < j1; j++)
                seen[i * cols + j]++;
    }
    for (size_t e = 0; e < rows * cols; e++)
        if (seen[e] != 1)
            fail_msg("%zu x %zu, tiles %zu x %zu, %zu threads: element (%zu, %zu) in %u tasks",
                     rows, cols, mr, nr, threads, e / cols, e % cols, seen[e]);
    free(seen);
    return tasks;
}

static void the_named_shapes(void **state)
{
    (void)state;
    /* the 7B stack's d = 4096 at 128 tokens, AVX-512's 6 x 64: 64 column
       blocks share 16 ways evenly, so the columns alone, one task a thread */
    const fw_split s = fw_split_for(128, 4096, 6, 64, 16, 0);
    assert_int_equal(s.row_groups, 1);
    assert_int_equal(s.col_chunks, 16);
    assert_int_equal(s.cols_each, 256);
    assert_int_equal(check_split(128, 4096, 6, 64, 16, 0), 16);
    assert_int_equal(check_split(128, 4096, 6, 64, 16, FW_SPLIT_DRAW_ROWS), 16);
    check_split(128, 4096, 8, 48, 16, 0);
    check_split(7, 13, 6, 16, 3, 0);
    check_split(7, 13, 1, 1, 3, 0);
    check_split(7, 13, 6, 4, 3, FW_SPLIT_DRAW_ROWS);
    /* one row: the columns alone, whatever the threads */
    const fw_split one = fw_split_for(1, 4096, 6, 64, 16, 0);
    assert_int_equal(one.row_groups, 1);
    assert_int_equal(check_split(1, 4096, 6, 64, 16, 0), 16);
    assert_int_equal(check_split(1, 13, 6, 16, 3, 0), 1);
}

/* Where the columns are too few for the threads, the rows are split too:
   1024 columns of 64 are 16 blocks, which leave 48 of 64 threads idle */
static void rows_too_where_columns_are_few(void **state)
{
    (void)state;
    const fw_split s = fw_split_for(128, 1024, 6, 64, 64, 0);
    assert_true(s.row_groups > 1);
    assert_true(fw_split_tasks(&s) > 16);
    check_split(128, 1024, 6, 64, 64, 0);
    /* 24 blocks on 16 threads: 2 blocks each on 12 threads by columns
       alone; with the rows in two groups, 3 blocks of half the rows on 16 */
    const fw_split u = fw_split_for(128, 1536, 6, 64, 16, 0);
    assert_int_equal(u.row_groups, 2);
    assert_int_equal(fw_split_tasks(&u), 16);
    const fw_split st = fw_split_for(128, 1536, 6, 64, 16, FW_SPLIT_STORED_ROWS);
    assert_int_equal(st.row_groups, 2);
    check_split(128, 1536, 6, 64, 16, FW_SPLIT_STORED_ROWS);
    /* drawn weights weigh the panels drawn twice: the rows of a 16-token
       call are too few to be worth it */
    const fw_split d = fw_split_for(16, 1536, 6, 64, 16, FW_SPLIT_DRAW_ROWS);
    assert_int_equal(d.row_groups, 1);
}

static void small_shapes(void **state)
{
    (void)state;
    const size_t tiles[][2] = {{1, 1}, {6, 16}, {6, 64}, {8, 48}};
    for (size_t t = 0; t < sizeof tiles / sizeof *tiles; t++)
        for (size_t rows = 1; rows <= 40; rows += 3)
            for (size_t cols = 1; cols <= 200; cols += 17)
                for (size_t threads = 1; threads <= 17; threads += 2) {
                    check_split(rows, cols, tiles[t][0], tiles[t][1], threads, 0);
                    check_split(rows, cols, tiles[t][0], tiles[t][1], threads,
                                FW_SPLIT_STORED_ROWS);
                    check_split(rows, cols, tiles[t][0], tiles[t][1], threads, FW_SPLIT_DRAW_ROWS);
                }
}

/* The same arguments give the same split (a run's every call agrees). */
static void the_same_split_every_call(void **state)
{
    (void)state;
    const fw_split a = fw_split_for(128, 11008, 6, 64, 7, 0),
                   b = fw_split_for(128, 11008, 6, 64, 7, 0);
    assert_memory_equal(&a, &b, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_named_shapes),
        cmocka_unit_test(rows_too_where_columns_are_few),
        cmocka_unit_test(small_shapes),
        cmocka_unit_test(the_same_split_every_call),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
