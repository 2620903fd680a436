/* The trainer's tokens when no stream is given: Philox keyed by the seed,
 * its counter by the step, so that any step's batch is drawn alone. */
#ifndef VARPROF_TRAIN_TOKENS_H
#define VARPROF_TRAIN_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "varprof/train.h"

/* The successor of each token for the task next: a permutation of vocab
 * ids drawn from the seed (Fisher-Yates over Philox), into next[vocab]. */
void train_successors(uint32_t *next, size_t vocab, unsigned long long seed);

/* Step `step`'s batch, ids[batch][tokens]: uniform ids for copy; for next a
 * uniform first id, then each the successor of the one before. */
void train_tokens(unsigned *ids, size_t batch, size_t tokens, size_t vocab, vp_task task,
                  const uint32_t *next, unsigned long long seed, size_t step);

#endif
