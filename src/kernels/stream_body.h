/* The Post-LN stream's elementwise steps in double, x = norm(alpha x + o):
 * the scaled sum and the norm's application, included once per instruction
 * set with KERN_ISA set to its suffix (kern_variants.h). Each element is
 * the same few IEEE double operations, none fused (-ffp-contract=off, the
 * Makefile), so every build gives the scalar build's bits; only the width
 * of the vectors gcc makes of the loops (-O3) differs. They were loops of
 * the baseline build, two doubles an instruction: 10 % of a Post-LN
 * training run. Contract in kern_table.h. */
#include "kernels/kern_variants.h"

void KERN_FN(kern_scale_add)(float *out, const float *x, const float *o, size_t n, double alpha)
{
    // x, o, out: (n)
    if (o == NULL) {
        for (size_t i = 0; i < n; i++)
            out[i] = (float)(alpha * x[i]);
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = (float)(alpha * x[i] + o[i]);
}

void KERN_FN(kern_norm_apply)(float *x, const float *restrict weight, const float *restrict bias,
                              size_t d, double mean, double inv)
{
    // x, weight, bias: (d)
    if (bias == NULL) { /* + 0.0 all the same: -0 becomes +0, as with a bias of zeros */
        for (size_t i = 0; i < d; i++)
            x[i] = (float)((x[i] - mean) * inv * weight[i] + 0.0);
        return;
    }
    for (size_t i = 0; i < d; i++)
        x[i] = (float)((x[i] - mean) * inv * weight[i] + bias[i]);
}
