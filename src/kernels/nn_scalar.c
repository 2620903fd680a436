/* The forward pass's kernels other than matmul, as plain loops: the
 * specification the SIMD files (nn_avx2.c, nn_avx512.c) are tested against,
 * and the fallback on any CPU. Contracts in kern_list.h.
 *
 * Float arithmetic throughout, as PyTorch's float32, except the reductions
 * the project keeps in double: the norms' mean, variance and mean square and
 * softmax's sum. exp and erf are libm's expf and erff. */
#include <math.h>

#include "kernels/nn_internal.h"
#include "kernels/kern_variants.h"

void kern_layernorm_keep_scalar(float *out, float *stats, const float *x, const float *weight,
                                const float *bias, size_t n, size_t d, float eps)
{
    // x, out: (n, d); weight, bias: (d); stats: (n, 2) or NULL
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d;
        float *outr = out + row * d;
        double sum = 0.0;
        for (size_t i = 0; i < d; i++)
            sum += xr[i];
        double mean = sum / (double)d;
        /* Two passes: a constant row gives variance exactly 0 (and out =
           bias), which sum(x^2) - d mean^2 would not. */
        double sq = 0.0;
        for (size_t i = 0; i < d; i++) {
            double c = xr[i] - mean;
            sq += c * c;
        }
        double var = sq / (double)d; /* biased, as PyTorch */
        float m = (float)mean;
        float rstd = (float)(1.0 / sqrt(var + (double)eps));
        if (stats) {
            stats[2 * row] = m;
            stats[2 * row + 1] = rstd;
        }
        for (size_t i = 0; i < d; i++)
            outr[i] = (xr[i] - m) * rstd * weight[i] + bias[i];
    }
}

void kern_layernorm_scalar(float *out, const float *x, const float *weight, const float *bias,
                           size_t n, size_t d, float eps)
{
    kern_layernorm_keep_scalar(out, NULL, x, weight, bias, n, d, eps);
}

void kern_rmsnorm_keep_scalar(float *out, float *stats, const float *x, const float *weight,
                              size_t n, size_t d, float eps)
{
    // x, out: (n, d); weight: (d); stats: (n, 2) or NULL
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d;
        float *outr = out + row * d;
        double sq = 0.0;
        for (size_t i = 0; i < d; i++)
            sq += (double)xr[i] * xr[i];
        float rrms = (float)(1.0 / sqrt(sq / (double)d + (double)eps));
        if (stats) {
            stats[2 * row] = 0.0f;
            stats[2 * row + 1] = rrms;
        }
        for (size_t i = 0; i < d; i++)
            outr[i] = xr[i] * rrms * weight[i];
    }
}

void kern_rmsnorm_scalar(float *out, const float *x, const float *weight, size_t n, size_t d,
                         float eps)
{
    kern_rmsnorm_keep_scalar(out, NULL, x, weight, n, d, eps);
}

void kern_gelu_scalar(float *out, const float *x, size_t n)
{
    // x, out: (n)
    /* erf, not tanh: PyTorch's default GELU. Halving x first (exact) keeps
       x * 2 from overflowing near FLT_MAX. */
    for (size_t i = 0; i < n; i++)
        out[i] = 0.5f * x[i] * (1.0f + erff(x[i] * NN_SQRT1_2));
}

void kern_gelu_keep_scalar(float *out, float *cdf, const float *x, size_t n)
{
    // x, out, cdf: (n)
    /* kern_gelu_scalar's operations, and 1 + erf halved (exactly) into cdf
       for kern_gelu_backward_scalar */
    for (size_t i = 0; i < n; i++) {
        const float v = x[i], w = 1.0f + erff(v * NN_SQRT1_2);
        out[i] = 0.5f * v * w;
        cdf[i] = 0.5f * w;
    }
}

void kern_gelu_tanh_scalar(float *out, const float *x, size_t n)
{
    // x, out: (n)
    /* x / (1 + exp(-2u)) = 0.5 x (1 + tanh(u)): nn_internal.h */
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        const float u2 = NN_GELU_TANH_2BETA * (v + NN_GELU_TANH_KAPPA * (v * v * v));
        out[i] = v / (1.0f + expf(-u2));
    }
}

void kern_relu_scalar(float *out, const float *x, size_t n)
{
    // x, out: (n)
    for (size_t i = 0; i < n; i++)
        out[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void kern_silu_mul_scalar(float *out, const float *a, const float *b, size_t n)
{
    // a, b, out: (n)
    /* silu(a) = a / (1 + exp(-a)), as PyTorch's; rounded, then times b */
    for (size_t i = 0; i < n; i++) {
        const float s = a[i] / (1.0f + expf(-a[i]));
        out[i] = s * b[i];
    }
}

void kern_gelu_mul_scalar(float *out, const float *a, const float *b, size_t n)
{
    // a, b, out: (n)
    for (size_t i = 0; i < n; i++) {
        const float g = 0.5f * a[i] * (1.0f + erff(a[i] * NN_SQRT1_2));
        out[i] = g * b[i];
    }
}

void kern_softmax_scalar(float *x, size_t n)
{
    // x: (n), in place
    if (n == 0)
        return;
    float max = x[0];
    for (size_t i = 1; i < n; i++)
        max = x[i] > max ? x[i] : max;
    double sum = 0.0; /* in double: n terms of up to 1 */
    for (size_t i = 0; i < n; i++) {
        x[i] = expf(x[i] - max);
        sum += x[i];
    }
    float total = (float)sum;
    for (size_t i = 0; i < n; i++)
        x[i] = x[i] / total;
}

void kern_attention_scalar(float *out, size_t ldo, const float *q, const float *k, const float *v,
                           size_t ld, size_t T, size_t H, size_t hd, float scale, float softcap,
                           const float *slopes, size_t window, float *scratch)
{
    // q, k, v: (T, H * hd) with row stride ld; out: (T, H * hd) with stride ldo;
    // scratch: (T)
    /* Dot products and the weighted sum in float, as a matmul's; the
       softmax's sum in double. Keys s0 .. t, the window's: the others'
       probabilities are 0 and add nothing. */
    for (size_t h = 0; h < H; h++) {
        for (size_t t = 0; t < T; t++) {
            const float *qt = q + t * ld + h * hd;
            const size_t s0 = kern_window_first(t, window);
            for (size_t s = s0; s <= t; s++) {
                const float *ks = k + s * ld + h * hd;
                float dot = 0.0f;
                for (size_t j = 0; j < hd; j++)
                    dot += qt[j] * ks[j];
                scratch[s] = dot * scale;
                if (slopes) /* ALiBi: its product rounded, then added */
                    scratch[s] = scratch[s] + slopes[h] * (float)s;
            }
            if (softcap > 0.0f)
                kern_softcap(scratch + s0, NULL, t + 1 - s0, softcap);
            kern_softmax_scalar(scratch + s0, t + 1 - s0);
            float *ot = out + t * ldo + h * hd;
            for (size_t j = 0; j < hd; j++) {
                float acc = 0.0f;
                for (size_t s = s0; s <= t; s++)
                    acc += scratch[s] * v[s * ld + h * hd + j];
                ot[j] = acc;
            }
        }
    }
}
