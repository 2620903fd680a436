/* One Adam (AdamW) update of one tensor, in float, as torch.optim.Adam's
 * and AdamW's single-tensor loops (PyTorch 1.13) compute it. */
#ifndef VARPROF_TRAIN_ADAM_H
#define VARPROF_TRAIN_ADAM_H

#include <stddef.h>

typedef struct {
    double lr, beta1, beta2, eps, weight_decay;
    size_t step; /* 1 at the first update: the bias corrections' power */
} adam_step;

/* p, m, v, g: n floats each; m and v the moments, zero before step 1. */
void adam_update(float *p, float *m, float *v, const float *g, size_t n, const adam_step *s);

#endif
