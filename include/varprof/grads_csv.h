/* The parameter gradients' CSV (--grads-out): one row per named tensor,
 * `name,shape,frobenius,rms`, the exact gradient of the batch's loss as the
 * forward engine's backward pass hands it out (vp_forward_options.on_param_grad). */
#ifndef VARPROF_GRADS_CSV_H
#define VARPROF_GRADS_CSV_H

#include <stdio.h>

#include "varprof/forward.h"

/* One tensor's gradient, summed up: ||g||_F and ||g||_F / sqrt(elements),
 * in double. */
typedef struct {
    char name[96];
    size_t rank, shape[2];
    double frobenius, rms;
} vp_grad_norm;

typedef struct {
    vp_grad_norm *rows;
    size_t count, capacity;
    vp_status status; /* VP_ENOMEM once an append failed; VP_OK otherwise */
} vp_grad_norms;

/* A vp_param_grad_fn: appends g's norms to ctx, a vp_grad_norms (zeroed to
 * start). Memory running out sets its status to VP_ENOMEM and drops the row;
 * a name too long for vp_grad_norm.name is cut. */
void vp_grad_norms_add(void *ctx, const vp_param_grad *g);

/* Frees the rows; the struct is zeroed. NULL is allowed. */
void vp_grad_norms_free(vp_grad_norms *norms);

/* Writes the header and one row per tensor in the weights file's order
 * (the embedding first, the head last: the reverse of the backward's),
 * shape as `96x48` (one number for a vector), norms with %.17g. VP_ENOMEM
 * when norms->status says a row was lost, VP_EIO when a write fails. */
vp_status vp_grads_csv_write(FILE *out, const vp_grad_norms *norms);

#endif
