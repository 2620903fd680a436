/* One Adam (AdamW) update of one tensor, in float, as torch.optim.Adam's
 * and AdamW's single-tensor loops (PyTorch 1.13) compute it. */
#ifndef VARPROF_TRAIN_ADAM_H
#define VARPROF_TRAIN_ADAM_H

#include <stddef.h>

#include "kernels/kern_table.h"

typedef struct {
    double lr, beta1, beta2, eps, weight_decay;
    size_t step; /* 1 at the first update: the bias corrections' power */
} adam_step;

/* p, m, v, g: n floats each, not overlapping; m and v the moments, zero
   before step 1; the loop kern's (kern_current() in a run). */
void adam_update(const kern_table *kern, float *p, float *m, float *v, const float *g, size_t n,
                 const adam_step *s);

#endif
