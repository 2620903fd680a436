/* Reading per-sub-block gains (--gains FILE). */
#ifndef VARPROF_GAINS_FILE_H
#define VARPROF_GAINS_FILE_H

#include <stddef.h>

#include "varprof/status.h"

/* The most gains a file may hold: one per sub-block of the deepest stack. */
#define VP_MAX_GAINS (2u * 1000000u)

/* Reads gains g_1..g_K from a CSV file: either a single column of numbers,
 * or a header row naming one column exactly `gain` (other columns are
 * ignored), every row then with as many cells as the header. A UTF-8
 * byte-order mark is skipped. Each gain must be a finite number >= 0. On
 * success *gains is a malloc'd array of *count values, owned by the caller
 * (free). On failure *gains is NULL and err names the file, and where it
 * applies the line and column: VP_EIO (cannot read), VP_EFORMAT (not a
 * number, negative, a row with more or fewer cells than the header or than
 * one, saying so when a decimal comma is the likely cause; several columns
 * and no `gain` header, a header `Gain` or ` gain `, `gain` twice, no gains,
 * more than VP_MAX_GAINS), VP_ENOMEM. */
vp_status vp_gains_read(const char *path, double **gains, size_t *count, vp_error *err);

#endif
