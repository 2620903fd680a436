/* The longest-first order of starting runs. */
#include "longest_first.h"

#include <stdlib.h>

typedef struct {
    double cost;
    size_t index;
} ranked;

static int longer_first(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    return x->cost > y->cost     ? -1
           : x->cost < y->cost   ? 1
           : x->index < y->index ? -1
                                 : x->index > y->index;
}

size_t *longest_first(size_t n, run_cost_fn cost, const void *ctx)
{
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    ranked *rank = malloc((n ? n : 1) * sizeof *rank);
    if (!order || !rank) {
        free(order);
        free(rank);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        rank[i] = (ranked){cost(ctx, i), i};
    qsort(rank, n, sizeof *rank, longer_first);
    for (size_t i = 0; i < n; i++)
        order[i] = rank[i].index;
    free(rank);
    return order;
}
