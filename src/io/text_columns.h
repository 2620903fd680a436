/* The text tables' columns: each one's head, width and how its cell is
 * written from the row fields (core/row_fields.h), defined once and listed
 * by the tables that show it, so that a head and its cells cannot part. A
 * table may show several profiles side by side: a column reads one. */
#ifndef VARPROF_IO_TEXT_COLUMNS_H
#define VARPROF_IO_TEXT_COLUMNS_H

#include <stddef.h>
#include <stdio.h>

#include "varprof/profile.h"

/* How a cell is written from its field's value v (and the fields in
 * `also`); every cell is "-" at a row its field does not apply to (a
 * branch's figure at sub-block 0). */
typedef enum {
    TEXT_CELL_SIZE,     /* a size_t in decimal */
    TEXT_CELL_TEXT,     /* the field's text */
    TEXT_CELL_NUMBER,   /* format applied to v */
    TEXT_CELL_FIGURE,   /* as NUMBER, "-" for NaN: the gradient left float's range above */
    TEXT_CELL_ESTIMATE, /* format applied to v and its 95 % half-width, (also[1] - also[0]) / 2 */
    TEXT_CELL_SPREAD,   /* format applied to also[0], v and also[1] */
    TEXT_CELL_PERCENT,  /* vp_format_percent(v) */
    TEXT_CELL_SHARE,    /* vp_format_share(v, also[0], the share's log2) */
    TEXT_CELL_SHARE_80, /* as SHARE, the power of two left off where it makes it wider than 15 */
    TEXT_CELL_SE,       /* the difference of v from the first profile's in v's standard
                           errors (text_se_units); "" where the field does not apply */
    TEXT_CELL_SE_80,    /* as SE, whole from 1000 on */
    TEXT_CELL_DASH,     /* "-" on every row: a figure this run has none to compare */
} text_cell;

typedef struct {
    const char *key;     /* the row field of its value */
    const char *also[2]; /* the other row fields the cell reads, or NULL */
    const char *head;
    int width; /* the head and the cells padded to this; negative: left-aligned */
    text_cell cell;
    const char *format; /* for NUMBER, FIGURE, ESTIMATE and SPREAD */
    size_t from;        /* the table's profile it reads: 0, the first; a row that profile
                           lacks has NaN */
    int tight;          /* one space before it rather than two: it pairs with the last */
} text_column;

/* The sub-block and its part, of the first profile: every table opens with them. */
extern const text_column text_col_sub_block, text_col_part;

/* Writes the heads of a table's columns (a NULL-terminated list, each two
 * spaces from the last, one where tight), then row k of the profiles for
 * each k below rows that is a multiple of every or the last; a column reads
 * profiles[column->from]. VP_EINVAL, nothing written, when a column names a
 * field the row-field table lacks or there are more than 16. */
vp_status text_write_table(FILE *out, const text_column *const *columns,
                           const vp_profile *const *profiles, size_t rows, size_t every);

#endif
