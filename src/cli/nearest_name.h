/* "Did you mean pre-norm?": the known name nearest a misspelt one, by
 * Damerau-Levenshtein distance (optimal string alignment: an insertion, a
 * deletion, a substitution or a swap of two neighbours each count 1). */
#ifndef VARPROF_CLI_NEAREST_NAME_H
#define VARPROF_CLI_NEAREST_NAME_H

#include <stddef.h>

/* The edit distance between a and b (ASCII case ignored); SIZE_MAX for
 * names longer than 63 bytes. */
size_t edit_distance(const char *a, size_t a_length, const char *b);

/* Of the n names, the nearest to typed (its first `length` bytes), or NULL
 * when none is near: within 2 edits and fewer edits than half the name's
 * length, so that "x" suggests nothing. The first of equals wins. */
const char *nearest_name(const char *typed, size_t length, const char *const *names, size_t n);

#endif
