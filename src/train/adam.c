/* Adam in PyTorch's order (torch/optim/adam.py, _single_tensor_adam; the
 * decay of adamw.py first): each Python float reaches the float kernels as
 * a float, each tensor operation rounds to float. */
#include "train/adam.h"

#include <math.h>

void adam_update(float *p, float *m, float *v, const float *g, size_t n, const adam_step *s)
{
    const double correction1 = 1.0 - pow(s->beta1, (double)s->step);
    const double correction2_sqrt = sqrt(1.0 - pow(s->beta2, (double)s->step));
    const float decay = (float)(1.0 - s->lr * s->weight_decay);
    const float b1 = (float)s->beta1, one_minus_b1 = (float)(1.0 - s->beta1);
    const float b2 = (float)s->beta2, one_minus_b2 = (float)(1.0 - s->beta2);
    const float c2 = (float)correction2_sqrt, eps = (float)s->eps;
    const float step_size = (float)-(s->lr / correction1);
    for (size_t i = 0; i < n; i++) {
        float pi = s->weight_decay != 0.0 ? p[i] * decay : p[i];
        float mi = m[i] * b1;
        mi = mi + one_minus_b1 * g[i];
        float vi = v[i] * b2;
        vi = vi + one_minus_b2 * g[i] * g[i];
        const float denom = sqrtf(vi) / c2 + eps;
        p[i] = pi + step_size * (mi / denom);
        m[i] = mi;
        v[i] = vi;
    }
}
