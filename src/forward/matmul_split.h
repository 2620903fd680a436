/* How a projection's output [rows][cols] is shared among threads: whole
 * micro-kernel tiles (MR rows by NR columns) to each task, cut over the
 * columns first and over the rows as well only where the columns alone
 * cannot give every thread an even share. Every output element is in one
 * task, and its sum runs whole in that task in the kernel's one order
 * (kern_list.h), so no split changes a bit. Private to src/forward. */
#ifndef VARPROF_FORWARD_MATMUL_SPLIT_H
#define VARPROF_FORWARD_MATMUL_SPLIT_H

#include <stddef.h>

/* Rows of FMAs a drawn weight's panel costs to make again, per column: a
   task that shares its columns with another row group draws their panels
   too. A draw is a Philox block's share and a Box-Muller step, tens of
   vector operations against one FMA per row that reads it: in the 7B
   stack's forward pass at 128 tokens the panels take about two thirds of
   what the micro-kernels do (tests/bench/README.md, "Where the remaining
   time goes"), some 85 rows' worth; 96 errs towards drawing once. */
#define FW_SPLIT_DRAW_ROWS 96
/* The same for stored weights: a second row group reads the packed panels
   of its columns again, from L2 or L3 or, for a matrix larger than the
   caches (the 70B's 940 MB), from memory, which 16 cores share. */
#define FW_SPLIT_STORED_ROWS 8

/* Tasks of row_groups x col_chunks: task t is row group t / col_chunks
   (rows_each rows, the last fewer) and column chunk t % col_chunks
   (cols_each columns, the last fewer). rows_each is a multiple of the
   tile's rows and cols_each of its columns, but where one group or chunk
   is all of them. */
typedef struct {
    size_t rows, cols;
    size_t rows_each, cols_each;
    size_t row_groups, col_chunks;
} fw_split;

/* The split of [rows][cols] in tiles of mr x nr over at most `threads`
   tasks that keeps the busiest task's work least, the work of a task
   counted as its columns times (its rows + redo): redo is the rows' worth
   each further row group repeats for its columns (FW_SPLIT_DRAW_ROWS for
   drawn weights, FW_SPLIT_STORED_ROWS for stored ones). Of equal splits, the one with the
   fewest row groups. rows, cols, mr, nr and threads >= 1 (0 is taken as 1). */
fw_split fw_split_for(size_t rows, size_t cols, size_t mr, size_t nr, size_t threads, size_t redo);

/* row_groups * col_chunks */
size_t fw_split_tasks(const fw_split *s);

/* Task t's rows [*i0, *i1) and columns [*j0, *j1); t < fw_split_tasks(s). */
void fw_split_task(const fw_split *s, size_t t, size_t *i0, size_t *i1, size_t *j0, size_t *j1);

#endif
