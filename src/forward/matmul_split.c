/* A projection's output shared among threads in whole tiles (matmul_split.h). */
#include "forward/matmul_split.h"

static size_t at_least_one(size_t v)
{
    return v ? v : 1;
}

/* a / b rounded up, without overflow; b is never 0 here (0 all the same) */
static size_t ceil_div(size_t a, size_t b)
{
    return b ? a / b + (a % b != 0) : 0;
}

/* The split into (about) g row groups: each group's share of the threads
   takes the columns in even runs of whole blocks. */
static fw_split split_in(size_t rows, size_t cols, size_t mr, size_t nr, size_t threads, size_t g)
{
    const size_t tiles = ceil_div(rows, mr), blocks = ceil_div(cols, nr);
    const size_t tiles_each = at_least_one(ceil_div(tiles, g)),
                 groups = at_least_one(ceil_div(tiles, tiles_each));
    const size_t blocks_each = ceil_div(blocks, at_least_one(threads / groups));
    fw_split s = {rows, cols, tiles_each * mr, at_least_one(blocks_each) * nr, groups, 0};
    if (groups == 1 || s.rows_each > rows)
        s.rows_each = rows;
    if (s.cols_each > cols)
        s.cols_each = cols;
    s.row_groups = ceil_div(rows, s.rows_each);
    s.col_chunks = ceil_div(cols, s.cols_each);
    return s;
}

fw_split fw_split_for(size_t rows, size_t cols, size_t mr, size_t nr, size_t threads, size_t redo)
{
    rows = at_least_one(rows), cols = at_least_one(cols);
    mr = at_least_one(mr), nr = at_least_one(nr), threads = at_least_one(threads);
    const size_t tiles = ceil_div(rows, mr), most = tiles < threads ? tiles : threads;
    fw_split best = split_in(rows, cols, mr, nr, threads, 1);
    double best_load = (double)best.cols_each * (double)(best.rows_each + redo);
    for (size_t g = 2; g <= most; g++) {
        const fw_split s = split_in(rows, cols, mr, nr, threads, g);
        const double load = (double)s.cols_each * (double)(s.rows_each + redo);
        if (load < best_load)
            best = s, best_load = load;
    }
    return best;
}

size_t fw_split_tasks(const fw_split *s)
{
    return s->row_groups * s->col_chunks;
}

void fw_split_task(const fw_split *s, size_t t, size_t *i0, size_t *i1, size_t *j0, size_t *j1)
{
    const size_t group = t / s->col_chunks, chunk = t % s->col_chunks;
    *i0 = group * s->rows_each;
    *i1 = *i0 + s->rows_each < s->rows ? *i0 + s->rows_each : s->rows;
    *j0 = chunk * s->cols_each;
    *j1 = *j0 + s->cols_each < s->cols ? *j0 + s->cols_each : s->cols;
}
