/* --model NAME's "did you mean": the models table's names nearest a mistyped one. */
#include "model_hint.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nearest_name.h"

#define MOST_BEGINNINGS 4

/* Whether name begins with typed, case and everything but letters and
 * digits left out of both: a model named as its family is ("gpt2",
 * "llama3.1") without its size. */
static int begins_with(const char *name, const char *typed)
{
    size_t matched = 0;
    for (const char *t = typed; *t; t++) {
        if (!isalnum((unsigned char)*t))
            continue;
        while (*name && !isalnum((unsigned char)*name))
            name++;
        if (tolower((unsigned char)*name) != tolower((unsigned char)*t))
            return 0;
        name++;
        matched++;
    }
    return matched > 0;
}

/* The nearest name by edit distance, as nearest_name judges near, or NULL. */
static const char *nearest_model(const char *name, const vp_model_table *table)
{
    const vp_model *near = NULL;
    size_t best = 3;
    for (size_t i = 0; i < table->count; i++) {
        const size_t d = edit_distance(name, strlen(name), table->models[i].name);
        if (d < best && 2 * d < strlen(table->models[i].name)) {
            near = &table->models[i];
            best = d;
        }
    }
    return near ? near->name : NULL;
}

void model_hint(const char *name, const vp_model_table *table, char *hint, size_t size)
{
    hint[0] = '\0';
    const char *near = nearest_model(name, table);
    if (near) {
        snprintf(hint, size, "did you mean %s? ", near);
        return;
    }
    const char *found[MOST_BEGINNINGS];
    size_t n = 0;
    for (size_t i = 0; i < table->count && n < MOST_BEGINNINGS; i++)
        if (begins_with(table->models[i].name, name))
            found[n++] = table->models[i].name;
    size_t at = 0;
    for (size_t i = 0; i < n && at < size; i++) {
        const char *before = i == 0 ? "did you mean " : i + 1 < n ? ", " : " or ";
        at += (size_t)snprintf(hint + at, size - at, "%s%s", before, found[i]);
    }
    if (n > 0 && at < size)
        snprintf(hint + at, size - at, "? ");
}
