/* Token ids for training, drawn per step from Philox (tokens.h). */
#include "train/tokens.h"

#include <Random123/philox.h>

/* Philox's third counter word for the trainer: apart from the weights'
 * (network.c) and the forward pass's token stream */
#define TRAIN_TOKENS 0xFFFFFF10u
#define TRAIN_SUCCESSORS 0xFFFFFF11u

static uint32_t draw(unsigned long long seed, uint32_t stream, size_t step, size_t i)
{
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t ctr = {{(uint32_t)i, (uint32_t)((uint64_t)i >> 32), stream, (uint32_t)step}};
    return philox4x32(ctr, key).v[0];
}

/* an id in [0, n) from 32 random bits, by multiply and shift */
static uint32_t below(uint32_t bits, size_t n)
{
    return (uint32_t)(((uint64_t)bits * n) >> 32);
}

void train_successors(uint32_t *next, size_t vocab, unsigned long long seed)
{
    for (size_t i = 0; i < vocab; i++)
        next[i] = (uint32_t)i;
    for (size_t i = vocab; i > 1; i--) {
        const uint32_t j = below(draw(seed, TRAIN_SUCCESSORS, 0, i), i);
        const uint32_t t = next[i - 1];
        next[i - 1] = next[j];
        next[j] = t;
    }
}

void train_tokens(unsigned *ids, size_t batch, size_t tokens, size_t vocab, vp_task task,
                  const uint32_t *next, unsigned long long seed, size_t step)
{
    for (size_t b = 0; b < batch; b++)
        for (size_t t = 0; t < tokens; t++) {
            const size_t i = b * tokens + t;
            if (task == VP_TASK_NEXT && t > 0)
                ids[i] = next[ids[i - 1]];
            else
                ids[i] = below(draw(seed, TRAIN_TOKENS, step, i), vocab);
        }
}
