/* The gradient arena (forward/grads.h): the model's tensor list walked once,
 * a slot laid out for each, and the slots indexed by the address of their
 * values so that the backward finds a tensor's slot from the tensor it
 * differentiates. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/grads.h"
#include "sys/big_block.h"

typedef struct {
    uintptr_t param;
    const fw_grad_slot *slot;
} addressed;

struct fw_grads {
    fw_grad_slot *slots; /* [count], fw_model_tensors' order */
    size_t count;
    char *names;        /* [count][FW_TENSOR_NAME_MAX] */
    addressed *by_addr; /* [count]: the slots, their param addresses ascending */
    float *block;
    size_t floats;
};

static size_t aligned(size_t floats)
{
    return (floats + 15) & ~(size_t)15; /* each slot at 64 bytes, for the vector loads */
}

static vp_status count_tensor(void *ctx, const fw_tensor *t)
{
    (void)t;
    ((fw_grads *)ctx)->count++;
    return VP_OK;
}

static vp_status add_slot(void *ctx, const fw_tensor *t)
{
    fw_grads *g = ctx;
    char *name = g->names + g->count * FW_TENSOR_NAME_MAX;
    snprintf(name, FW_TENSOR_NAME_MAX, "%s", t->name);
    const size_t n = t->rows * (t->cols ? t->cols : 1);
    g->slots[g->count] = (fw_grad_slot){.name = name,
                                        .param = t->data,
                                        .linear = t->linear,
                                        .rows = t->rows,
                                        .cols = t->cols,
                                        .n = n,
                                        .offset = g->floats};
    g->floats += aligned(n);
    g->count++;
    return VP_OK;
}

static int by_param(const void *a, const void *b)
{
    const uintptr_t pa = ((const addressed *)a)->param, pb = ((const addressed *)b)->param;
    return (pa > pb) - (pa < pb);
}

vp_status fw_grads_create(fw_model *m, fw_grads **out, vp_error *err)
{
    *out = NULL;
    fw_grads *g = calloc(1, sizeof *g);
    if (!g)
        return vp_fail(err, VP_ENOMEM, "no memory for the gradients");
    (void)fw_model_tensors(m, count_tensor, g);
    const size_t count = g->count ? g->count : 1;
    g->slots = calloc(count, sizeof *g->slots);
    g->names = calloc(count, FW_TENSOR_NAME_MAX);
    g->by_addr = calloc(count, sizeof *g->by_addr);
    if (!g->slots || !g->names || !g->by_addr) {
        fw_grads_free(g);
        return vp_fail(err, VP_ENOMEM, "no memory for the gradients");
    }
    g->count = 0;
    (void)fw_model_tensors(m, add_slot, g);
    /* huge pages where the kernel gives them: the block is written whole
       every step, and 4 KiB pages fault in one at a time */
    g->block = big_block_alloc((g->floats ? g->floats : 1) * sizeof(float));
    if (!g->block) {
        const size_t floats = g->floats;
        fw_grads_free(g);
        return vp_fail(err, VP_ENOMEM, "no memory for the gradients (%zu floats)", floats);
    }
    memset(g->block, 0, g->floats * sizeof(float));
    for (size_t i = 0; i < g->count; i++) {
        g->slots[i].grad = g->block + g->slots[i].offset;
        g->by_addr[i] = (addressed){(uintptr_t)g->slots[i].param, &g->slots[i]};
    }
    qsort(g->by_addr, g->count, sizeof *g->by_addr, by_param);
    *out = g;
    return VP_OK;
}

void fw_grads_free(fw_grads *g)
{
    if (!g)
        return;
    free(g->slots);
    free(g->names);
    free(g->by_addr);
    free(g->block);
    free(g);
}

fw_grad_slot *fw_grads_slots(const fw_grads *g)
{
    return g->slots;
}

size_t fw_grads_count(const fw_grads *g)
{
    return g->count;
}

size_t fw_grads_floats(const fw_grads *g)
{
    return g->floats;
}

float *fw_grads_block(const fw_grads *g)
{
    return g->block;
}

const fw_grad_slot *fw_grads_slot_of(const fw_grads *g, const float *param)
{
    const uintptr_t at = (uintptr_t)param;
    size_t lo = 0, hi = g->count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (g->by_addr[mid].param == at)
            return g->by_addr[mid].slot;
        if (g->by_addr[mid].param < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
