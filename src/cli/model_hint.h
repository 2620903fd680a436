/* "did you mean gpt-2-small or gpt-2-xl?": what --model NAME most likely
 * meant, when the models table has no NAME. */
#ifndef VARPROF_CLI_MODEL_HINT_H
#define VARPROF_CLI_MODEL_HINT_H

#include <stddef.h>

#include "varprof/models.h"

/* Into hint, "did you mean X? " or "did you mean X, Y or Z? ", or "" where
 * nothing is near: the one model within the edit distance nearest_name
 * allows (a typo), else the models whose names begin with name once both
 * drop case and punctuation (gpt2: gpt-2-small, gpt-2-xl), at most four. */
void model_hint(const char *name, const vp_model_table *table, char *hint, size_t size);

#endif
