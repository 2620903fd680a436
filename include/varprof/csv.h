/* Writing profiles as CSV: the stable machine interface of varprof(1), OUTPUT.
 *
 * One header row, then one row per engine, placement and sub-block, sub-block
 * 0 included. Numbers are written with %.17g so that they read back to the
 * same double; a field that does not apply is empty.
 */
#ifndef VARPROF_CSV_H
#define VARPROF_CSV_H

#include <stdio.h>

#include "varprof/page_table.h"
#include "varprof/profile.h"

/* How many columns the rows have, and the name of column c (from 0), in
 * order; NULL for c past the last. */
size_t vp_csv_column_count(void);
const char *vp_csv_column_name(size_t column);

/* Writes the header row. VP_EIO when the stream reports an error. */
vp_status vp_csv_write_header(FILE *out);

/* Writes the rows vp_profile_shows_row selects (every >= 1).
 * VP_EIO when the stream reports an error. */
vp_status vp_csv_write_profile(FILE *out, const vp_profile *profile, size_t every);

/* Writes a page table (page_table.h; the maths table, the models table) as
 * CSV: a header of the column keys, then its rows; numbers with %.17g, an
 * empty field for an empty cell or a number that is not finite. VP_EIO on
 * a stream error. */
vp_status vp_csv_write_page_table(FILE *out, const vp_page_table *table);

#endif
