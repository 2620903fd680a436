/* Reading a CSV file row by row through libcsv, with line numbers, so that
 * every reader (gains, token ids, models) names the line it refuses. */
#ifndef VARPROF_CSV_READER_H
#define VARPROF_CSV_READER_H

#include <stddef.h>

#include "varprof/status.h"

/* The largest file, cell and row the readers accept: past these a file is
 * refused rather than read into memory. */
#define VP_CSV_MAX_FILE_BYTES (1024L * 1024 * 1024)
#define VP_CSV_MAX_CELL_BYTES 4096
#define VP_CSV_MAX_CELLS 65536 /* a row of token ids may be a long sequence */
#define VP_CSV_MAX_ROW_BYTES (16 * 1024 * 1024)

/* Called once per non-empty row: cells are NUL-terminated and valid only
 * during the call; line counts from 1 and is the line the row ends on. A
 * non-VP_OK return stops the read and is returned by csv_read_file. */
typedef vp_status (*csv_row_fn)(void *ctx, size_t line, size_t n_cells, char *const *cells,
                                vp_error *err);

/* Reads path (or standard input for "-") and calls on_row for each row. A
 * UTF-8 byte-order mark at the start (Excel's "CSV UTF-8") is skipped.
 * Fails with VP_EIO when it cannot be opened or read, VP_EFORMAT for a file,
 * row or cell over the limits above, a NUL byte, or a quote left open; each
 * message starts with the path. */
vp_status csv_read_file(const char *path, csv_row_fn on_row, void *ctx, vp_error *err);

/* Refuses a row whose cell count is not the header's: VP_EFORMAT saying
 * "line L has N cells; <expected>" (e.g. "the header has 3"), and, when the
 * row has more cells and two neighbouring ones read as one number written
 * with a decimal comma ("0,5"),
 * that this is the likely cause and what to write (see csv_decimal_comma_hint
 * for number_column). VP_OK when n_cells is
 * width. */
vp_status csv_check_row_width(size_t line, size_t n_cells, char *const *cells, size_t width,
                              size_t number_column, const char *expected, vp_error *err);

/* Writes into hint (size bytes) "; 'A,B' looks like the number A.B written
 * with a decimal comma: write A.B" for neighbouring cells A and B that read
 * so (A whole digits with an optional sign, B digits with an optional
 * exponent), else "". Cells number_column and the next are tried first: the
 * column a number is expected in; then every pair from the left. */
void csv_decimal_comma_hint(size_t n_cells, char *const *cells, size_t number_column, char *hint,
                            size_t size);

/* Whether cell is name but for letter case and surrounding spaces ("Gain",
 * " gain "), and not name itself: a header meant but misspelt. */
int csv_header_near_miss(const char *cell, const char *name);

#endif
