/* Name tables: an enum's names in a count-sized array, looked up both ways. */
#ifndef VARPROF_CORE_NAME_TABLE_H
#define VARPROF_CORE_NAME_TABLE_H

#include <stddef.h>

#include "varprof/status.h"

/* A table's names: a plain array of names, or the name member of an array
 * of rows, stride bytes apart. gloss, where not NULL, is a second member of
 * each row (same stride) said after the name in a list: "yes (every
 * projection)". Make one with NAME_LIST or NAME_ROWS. */
typedef struct {
    const char *const *name;
    const char *const *gloss;
    size_t stride;
    size_t count;
} name_table;

#define NAME_LIST(names)                                                                           \
    ((name_table){(names), NULL, sizeof(names)[0], sizeof(names) / sizeof(names)[0]})
#define NAME_ROWS(rows)                                                                            \
    ((name_table){&(rows)[0].name, NULL, sizeof(rows)[0], sizeof(rows) / sizeof(rows)[0]})

/* The name of value; NULL out of range (negative or >= count). */
const char *name_table_name(name_table t, int value);

/* The value named name, or -1 (name NULL included). */
int name_table_find(name_table t, const char *name);

/* "a, b, c" (with glosses, "a (gloss), b (gloss)"), truncated to size. */
void name_table_list(name_table t, char *buf, size_t size);

/* The value named name into *out; else VP_EINVAL with the message
 * "<what> '<name>' is not one of: a, b, c" (the list as name_table_list's). */
vp_status name_table_parse(name_table t, const char *what, const char *name, int *out,
                           vp_error *err);

/* VP_OK for a value the table names; else VP_EINVAL with the message
 * "<what> <value> is not one of: a, b, c", for an enum a caller filled in
 * by hand rather than by parsing a name. */
vp_status name_table_check(name_table t, const char *what, int value, vp_error *err);

#endif
