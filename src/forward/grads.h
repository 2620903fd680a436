/* The gradient arena: every trainable tensor's gradient in one block, one
 * slot per tensor in fw_model_tensors' order (the weights' order), as
 * llm.c's ParameterTensors mirrors its parameters. The backward pass makes
 * each gradient in its slot (fw_workspace_set_grads), and a trainer walks
 * the slots: one loop per tensor over its values and its gradient, no name
 * looked up. Private to libvarprof. */
#ifndef VARPROF_FORWARD_GRADS_H
#define VARPROF_FORWARD_GRADS_H

#include <stddef.h>

#include "forward/network.h"

typedef struct {
    const char *name;  /* the weights file's name, owned by the arena */
    float *param;      /* the values trained: a linear's raw W, else in place */
    float *grad;       /* [n] in the arena's block */
    fw_linear *linear; /* a linear's W: to repack after an update; else NULL */
    size_t rows, cols; /* cols 0: a vector */
    size_t n;          /* rows x cols, or rows */
    size_t offset;     /* grad - block: the slot's place in any block of this layout */
} fw_grad_slot;

typedef struct fw_grads fw_grads;

/* An arena for every tensor of m (fw_model_tensors), its gradients zero.
 * m must keep its tensors where they are while the arena lives (a model
 * made by fw_model_alloc_trainable). NULL in *out and VP_ENOMEM when memory
 * runs out. */
vp_status fw_grads_create(fw_model *m, fw_grads **out, vp_error *err);

/* Frees the arena; NULL is allowed. */
void fw_grads_free(fw_grads *g);

/* The slots, in fw_model_tensors' order, and their number. */
fw_grad_slot *fw_grads_slots(const fw_grads *g);
size_t fw_grads_count(const fw_grads *g);

/* Floats of the arena's block, padding included: another block of the
 * same layout (Adam's moments) holds a slot's floats at its offset. */
size_t fw_grads_floats(const fw_grads *g);

/* The whole block, every slot and the zeros between them. */
float *fw_grads_block(const fw_grads *g);

/* The slot of the tensor whose values start at param (a linear's raw W,
 * its bias, a norm's weight, ...), found by its address; NULL for an
 * address that starts none of the arena's tensors. */
const fw_grad_slot *fw_grads_slot_of(const fw_grads *g, const float *param);

#endif
