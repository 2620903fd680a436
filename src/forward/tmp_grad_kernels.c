/* THROWAWAY scalar backward kernels (see tmp_grad_kernels.h). */
#include "forward/tmp_grad_kernels.h"

#include <math.h>
#include <string.h>

static void norm_backward(float *dx, const float *dy, const float *x, const float *weight,
                          size_t n, size_t d, float eps, int centre)
{
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d, *g = dy + row * d;
        float *out = dx + row * d;
        double mean = 0.0, ms = 0.0;
        if (centre) {
            for (size_t i = 0; i < d; i++)
                mean += xr[i];
            mean /= (double)d;
        }
        for (size_t i = 0; i < d; i++)
            ms += (xr[i] - mean) * (xr[i] - mean);
        const double rstd = 1.0 / sqrt(ms / (double)d + eps);
        double mg = 0.0, mgx = 0.0;
        for (size_t i = 0; i < d; i++) {
            const double gi = (double)g[i] * weight[i], xh = (xr[i] - mean) * rstd;
            mg += gi;
            mgx += gi * xh;
        }
        mg /= (double)d;
        mgx /= (double)d;
        for (size_t i = 0; i < d; i++) {
            const double gi = (double)g[i] * weight[i], xh = (xr[i] - mean) * rstd;
            out[i] = (float)(rstd * (gi - (centre ? mg : 0.0) - xh * mgx));
        }
    }
}

void fw_tmp_layernorm_backward(float *dx, const float *dy, const float *x, const float *weight,
                               size_t n, size_t d, float eps)
{
    norm_backward(dx, dy, x, weight, n, d, eps, 1);
}

void fw_tmp_rmsnorm_backward(float *dx, const float *dy, const float *x, const float *weight,
                             size_t n, size_t d, float eps)
{
    norm_backward(dx, dy, x, weight, n, d, eps, 0);
}

void fw_tmp_gelu_backward(float *dx, const float *dy, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const double z = x[i];
        const double cdf = 0.5 * (1.0 + erf(z / sqrt(2.0)));
        const double pdf = exp(-0.5 * z * z) / sqrt(2.0 * 3.14159265358979323846);
        dx[i] = (float)(dy[i] * (cdf + z * pdf));
    }
}

void fw_tmp_attention_backward(float *dq, float *dk, float *dv, const float *dout, size_t ldo,
                               const float *q, const float *k, const float *v, size_t ld,
                               size_t T, size_t H, size_t hd, float *scratch)
{
    const double scale = 1.0 / sqrt((double)hd);
    for (size_t t = 0; t < T; t++) {
        memset(dq + t * ld, 0, H * hd * sizeof(float));
        memset(dk + t * ld, 0, H * hd * sizeof(float));
        memset(dv + t * ld, 0, H * hd * sizeof(float));
    }
    float *p = scratch, *dp = scratch + T;
    for (size_t h = 0; h < H; h++) {
        const size_t c = h * hd;
        for (size_t t = 0; t < T; t++) {
            const float *qt = q + t * ld + c, *dot = dout + t * ldo + c;
            double most = -INFINITY;
            for (size_t s = 0; s <= t; s++) {
                double a = 0.0;
                for (size_t i = 0; i < hd; i++)
                    a += (double)qt[i] * k[s * ld + c + i];
                p[s] = (float)(a * scale);
                most = p[s] > most ? p[s] : most;
            }
            double sum = 0.0;
            for (size_t s = 0; s <= t; s++)
                sum += (p[s] = (float)exp(p[s] - most));
            double pdp = 0.0;
            for (size_t s = 0; s <= t; s++) {
                p[s] = (float)(p[s] / sum);
                double a = 0.0;
                for (size_t i = 0; i < hd; i++)
                    a += (double)dot[i] * v[s * ld + c + i];
                dp[s] = (float)a;
                pdp += (double)p[s] * a;
            }
            for (size_t s = 0; s <= t; s++) {
                const double ds = p[s] * (dp[s] - pdp) * scale;
                for (size_t i = 0; i < hd; i++) {
                    dv[s * ld + c + i] += p[s] * dot[i];
                    dq[t * ld + c + i] += (float)(ds * k[s * ld + c + i]);
                    dk[s * ld + c + i] += (float)(ds * qt[i]);
                }
            }
        }
    }
}
