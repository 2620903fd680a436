/* Writing profiles as JSON through cJSON.
 *
 * The document is {"varprof": VERSION, "profiles": [PROFILE, ...]}; each
 * PROFILE carries its configuration, its summary at the top of the stack and
 * its rows, with the keys of the CSV columns and null where a figure does not
 * apply. Rows are built and printed one at a time, so that a million-layer
 * stack never holds its whole document in memory.
 */
#ifndef VARPROF_JSON_H
#define VARPROF_JSON_H

#include <stdio.h>

#include "varprof/page_table.h"
#include "varprof/profile.h"

typedef struct {
    FILE *out;
    size_t profiles_written;
} vp_json_writer;

/* Starts the document on out. VP_EIO when the stream reports an error. */
vp_status vp_json_begin(vp_json_writer *writer, FILE *out);

/* Appends one profile, with the rows vp_profile_shows_row selects (every >= 1).
 * VP_ENOMEM when cJSON cannot allocate, VP_EIO on a stream error. */
vp_status vp_json_add_profile(vp_json_writer *writer, const vp_profile *profile, size_t every);

/* Closes the document. VP_EIO on a stream error. */
vp_status vp_json_end(vp_json_writer *writer);

/* Writes a page table (page_table.h; the maths table, the models table) as
 * the document {"varprof": VERSION, "rows": [ROW, ...]}, each ROW an object
 * with the column keys; null for an empty cell or a number that is not
 * finite. VP_ENOMEM, VP_EIO on a stream error. */
vp_status vp_json_write_page_table(FILE *out, const vp_page_table *table);

#endif
