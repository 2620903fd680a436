/* The row fields: one entry per figure a profile's rows are written with,
 * holding every fact about it: its name, where its value comes from, when it
 * applies and where it appears. The CSV header and rows, the JSON rows and
 * the comparison against the closed form all walk this one table, so a new
 * column is one entry in row_fields.c.
 *
 * The table's order is the CSV's and the JSON's both: a field only one of
 * them writes sits where that one has always written it. varprof(1), OUTPUT, fixes the
 * CSV's order and allows new columns only at the end.
 */
#ifndef VARPROF_CORE_ROW_FIELDS_H
#define VARPROF_CORE_ROW_FIELDS_H

#include <stddef.h>

#include "varprof/profile.h"

/* How a value is written: text (CSV quotes it when it must; JSON writes null
 * for ""), a size_t in decimal, or a double with %.17g. */
typedef enum { ROW_FIELD_TEXT, ROW_FIELD_SIZE, ROW_FIELD_DOUBLE } row_field_kind;

/* Where a field appears. */
enum {
    ROW_FIELD_CSV = 1u << 0,  /* a column of the CSV rows */
    ROW_FIELD_JSON = 1u << 1, /* a key of each JSON row */
};

typedef struct {
    const char *name; /* the CSV column and the JSON key */
    row_field_kind kind;
    unsigned needs; /* VP_HAS_* the profile must carry for a value; 0: always */
    /* The value at row k: a double member of vp_row at offset, unless one of
       these derives it from the profile (the one that matches kind). */
    size_t offset;
    double (*number)(const vp_profile *profile, size_t k);
    size_t (*size)(const vp_profile *profile, size_t k);
    const char *(*text)(const vp_profile *profile, size_t k);
    /* NULL, or whether the profile has a value at all (a fact of how it was
       made, such as a width, rather than of its rows) */
    int (*has)(const vp_profile *profile);
    int branch_only;  /* no value for sub-block 0, the embedding */
    unsigned appears; /* ROW_FIELD_CSV | ROW_FIELD_JSON */
    /* Held against the closed form by vp_compare: the figure's name in prose
       (vp_quantity_name) and the vp_row member of its standard error. NULL
       for a field that is not compared. */
    const char *compared_as;
    size_t se_offset;
} row_field;

/* The table, row_field_table_size entries in output order. */
extern const row_field row_field_table[];
extern const size_t row_field_table_size;

/* Whether the field applies at sub-block k at all (branch-only fields do not
 * at k = 0), whatever the profile carries. */
int row_field_applies(const row_field *field, size_t k);

/* Whether row k of profile has a value for the field: it applies there and
 * the profile carries the VP_HAS_* it needs. */
int row_field_present(const row_field *field, const vp_profile *profile, size_t k);

/* The value at row k, by the field's kind. Meaningful where present. */
double row_field_double(const row_field *field, const vp_profile *profile, size_t k);
size_t row_field_size(const row_field *field, const vp_profile *profile, size_t k);
const char *row_field_text(const row_field *field, const vp_profile *profile, size_t k);

/* A compared field's standard error at row k (its se_offset member). */
double row_field_se(const row_field *field, const vp_profile *profile, size_t k);

/* The n-th compared field in table order (n counts from 0), or NULL past the
 * last: vp_quantity q is the field row_field_compared(q). */
const row_field *row_field_compared(size_t n);

#endif
