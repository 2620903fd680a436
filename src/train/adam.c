/* Adam in PyTorch's order (torch/optim/adam.py, _single_tensor_adam; the
 * decay of adamw.py first): each Python float reaches the float kernels as
 * a float, each tensor operation rounds to float. The loop is the kernel
 * table's (adam_body.h). */
#include "train/adam.h"

#include <math.h>

void adam_update(const kern_table *kern, float *p, float *m, float *v, const float *g, size_t n,
                 const adam_step *s)
{
    const double correction1 = 1.0 - pow(s->beta1, (double)s->step);
    const double correction2_sqrt = sqrt(1.0 - pow(s->beta2, (double)s->step));
    /* no decay multiplies by 1: exact */
    const kern_adam_step k = {
        .decay = s->weight_decay != 0.0 ? (float)(1.0 - s->lr * s->weight_decay) : 1.0f,
        .beta1 = (float)s->beta1,
        .one_minus_beta1 = (float)(1.0 - s->beta1),
        .beta2 = (float)s->beta2,
        .one_minus_beta2 = (float)(1.0 - s->beta2),
        .correction2_sqrt = (float)correction2_sqrt,
        .eps = (float)s->eps,
        .step_size = (float)-(s->lr / correction1)};
    kern->adam(p, m, v, g, n, &k);
}
