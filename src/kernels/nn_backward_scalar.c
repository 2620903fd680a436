/* The backward pass's kernels other than matmul, as plain loops: the
 * specification the SIMD files (nn_backward_avx2.c, nn_backward_avx512.c)
 * are tested against, and the fallback on any CPU. Contracts in
 * kern_table.h.
 *
 * Float arithmetic as PyTorch's float32 autograd, except the reductions the
 * project keeps in double: the norms' statistics (recomputed as
 * nn_scalar.c's forward computes them), the sums over a row that the
 * gradients subtract, softmax's sums and the parameters' column sums. exp
 * and erf are libm's expf and erff. */
#include <math.h>

#include "kernels/nn_backward_internal.h"
#include "kernels/nn_internal.h"
#include "kernels/kern_variants.h"

/* The forward's mean (as float) and 1/sqrt(var + eps) of a row of d. */
static void layernorm_stats(float *mean, float *rstd, const float *x, size_t d, float eps)
{
    double sum = 0.0;
    for (size_t i = 0; i < d; i++)
        sum += x[i];
    double m = sum / (double)d, sq = 0.0;
    for (size_t i = 0; i < d; i++) {
        double c = x[i] - m;
        sq += c * c;
    }
    *mean = (float)m;
    *rstd = (float)(1.0 / sqrt(sq / (double)d + (double)eps));
}

/* The forward's 1/sqrt(mean(x^2) + eps) of a row of d. */
static float rmsnorm_rrms(const float *x, size_t d, float eps)
{
    double sq = 0.0;
    for (size_t i = 0; i < d; i++)
        sq += (double)x[i] * x[i];
    return (float)(1.0 / sqrt(sq / (double)d + (double)eps));
}

/* Row r's statistics: from stats when given, else summed. */
static void row_stats(float *mean, float *rstd, const float *stats, const float *x, size_t r,
                      size_t d, float eps, int rms)
{
    if (stats != NULL) {
        *mean = stats[2 * r];
        *rstd = stats[2 * r + 1];
    } else if (rms) {
        *mean = 0.0f;
        *rstd = rmsnorm_rrms(x + r * d, d, eps);
    } else {
        layernorm_stats(mean, rstd, x + r * d, d, eps);
    }
}

void kern_norm_stats_scalar(float *stats, const float *x, size_t n, size_t d, float eps, int rms)
{
    // x: (n, d); stats: (n, 2)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++)
        row_stats(&stats[2 * row], &stats[2 * row + 1], NULL, x, row, d, eps, rms);
}

void kern_layernorm_backward_scalar(float *dx, const float *dy, const float *x, const float *stats,
                                    const float *weight, size_t n, size_t d, float eps)
{
    // x, dy, dx: (n, d); stats: (n, 2) or NULL; weight: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d, *dyr = dy + row * d;
        float *dxr = dx + row * d;
        float m, rstd;
        row_stats(&m, &rstd, stats, x, row, d, eps, 0);
        double sum_g = 0.0, sum_gx = 0.0;
        for (size_t i = 0; i < d; i++) {
            float xhat = (xr[i] - m) * rstd, g = dyr[i] * weight[i];
            sum_g += g;
            sum_gx += (double)g * xhat;
        }
        float mean_g = (float)(sum_g / (double)d), mean_gx = (float)(sum_gx / (double)d);
        for (size_t i = 0; i < d; i++) {
            float xhat = (xr[i] - m) * rstd, g = dyr[i] * weight[i];
            dxr[i] = (g - mean_g - xhat * mean_gx) * rstd;
        }
    }
}

void kern_rmsnorm_backward_scalar(float *dx, const float *dy, const float *x, const float *stats,
                                  const float *weight, size_t n, size_t d, float eps)
{
    // x, dy, dx: (n, d); stats: (n, 2) or NULL; weight: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d, *dyr = dy + row * d;
        float *dxr = dx + row * d;
        float zero, rrms;
        row_stats(&zero, &rrms, stats, x, row, d, eps, 1);
        double sum_gx = 0.0;
        for (size_t i = 0; i < d; i++)
            sum_gx += (double)(dyr[i] * weight[i]) * (xr[i] * rrms);
        float mean_gx = (float)(sum_gx / (double)d);
        for (size_t i = 0; i < d; i++) {
            float xhat = xr[i] * rrms, g = dyr[i] * weight[i];
            dxr[i] = (g - xhat * mean_gx) * rrms;
        }
    }
}

void kern_norm_param_grads_scalar(float *dweight, float *dbias, const float *dy, const float *x,
                                  const float *stats, size_t n, size_t d, size_t j0, size_t j1,
                                  float eps, int rms)
{
    // x, dy: (n, d); stats: (n, 2) or NULL; dweight, dbias: (d), columns j0 .. j1 - 1
    for (size_t c0 = j0; c0 < j1; c0 += NN_PARAM_COLUMNS) {
        size_t cols = nn_param_block(j1 - c0);
        double sum_w[NN_PARAM_COLUMNS] = {0}, sum_b[NN_PARAM_COLUMNS] = {0};
        for (size_t row = 0; row < n; row++) {
            const float *xr = x + row * d, *dyr = dy + row * d;
            float m, rstd;
            row_stats(&m, &rstd, stats, x, row, d, eps, rms);
            for (size_t c = 0; c < cols; c++) {
                /* the forward's xhat: x rrms, or (x - mean) rstd */
                float xhat = rms ? xr[c0 + c] * rstd : (xr[c0 + c] - m) * rstd;
                sum_w[c] += (double)dyr[c0 + c] * xhat;
                sum_b[c] += dyr[c0 + c];
            }
        }
        for (size_t c = 0; c < cols; c++) {
            dweight[c0 + c] = (float)(dweight[c0 + c] + sum_w[c]);
            if (dbias != NULL)
                dbias[c0 + c] = (float)(dbias[c0 + c] + sum_b[c]);
        }
    }
}

void kern_gelu_backward_scalar(float *dx, const float *dy, const float *x, const float *cdf,
                               size_t n)
{
    // x, dy, cdf, dx: (n)
    /* PyTorch's GeluBackward (exact erf): cdf + x pdf, in its order, cdf
       from the forward (kern_gelu_keep_scalar) */
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        float pdf = expf(-0.5f * v * v) * NN_INV_SQRT_2PI;
        dx[i] = dy[i] * (cdf[i] + v * pdf);
    }
}

void kern_gelu_tanh_backward_scalar(float *dx, const float *dy, const float *x, size_t n)
{
    // x, dy, dx: (n)
    /* d/dx x s(2u) = s + x 2u' s (1 - s), s = 1 / (1 + exp(-2u)) */
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        const float u2 = NN_GELU_TANH_2BETA * (v + NN_GELU_TANH_KAPPA * (v * v * v));
        const float s = 1.0f / (1.0f + expf(-u2));
        const float c = fminf(fmaxf(v, -NN_GELU_TANH_CLAMP), NN_GELU_TANH_CLAMP);
        const float du2 = NN_GELU_TANH_2BETA * (1.0f + 3.0f * NN_GELU_TANH_KAPPA * (c * c));
        dx[i] = dy[i] * (s + c * du2 * (s * (1.0f - s)));
    }
}

void kern_relu_backward_scalar(float *dx, const float *dy, const float *x, size_t n)
{
    // x, dy, dx: (n)
    /* PyTorch's threshold_backward: the gradient where x > 0, else 0 */
    for (size_t i = 0; i < n; i++)
        dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

void kern_silu_mul_backward_scalar(float *da, float *db, const float *dy, const float *a,
                                   const float *b, size_t n)
{
    // a, b, dy, da, db: (n)
    /* autograd's order: db = dy silu(a); da = silu_backward(dy b, a), with
       silu'(a) = s (1 + a (1 - s)), s = 1 / (1 + exp(-a)) */
    for (size_t i = 0; i < n; i++) {
        const float av = a[i], bv = b[i], g = dy[i];
        const float silu = av / (1.0f + expf(-av));
        const float s = 1.0f / (1.0f + expf(-av));
        const float gb = g * bv;
        db[i] = g * silu;
        da[i] = gb * (s * (1.0f + av * (1.0f - s)));
    }
}

void kern_gelu_mul_backward_scalar(float *da, float *db, const float *dy, const float *a,
                                   const float *b, size_t n)
{
    // a, b, dy, da, db: (n)
    /* db = dy gelu(a); da = (dy b) (cdf + a pdf), as gelu_backward */
    for (size_t i = 0; i < n; i++) {
        const float av = a[i], bv = b[i], g = dy[i];
        const float cdf = 0.5f * (1.0f + erff(av * NN_SQRT1_2));
        const float gelu = 0.5f * av * (1.0f + erff(av * NN_SQRT1_2));
        const float pdf = expf(-0.5f * av * av) * NN_INV_SQRT_2PI;
        const float gb = g * bv;
        db[i] = g * gelu;
        da[i] = gb * (cdf + av * pdf);
    }
}

static float dot_scalar(const float *a, const float *b, size_t n)
{
    float acc = 0.0f;
    for (size_t j = 0; j < n; j++)
        acc += a[j] * b[j];
    return acc;
}

void kern_attention_backward_scalar(float *dq, float *dk, float *dv, size_t ldg, const float *dout,
                                    size_t ldo, const float *q, const float *k, const float *v,
                                    size_t ld, size_t T, size_t H, size_t hd, float scale,
                                    float softcap, const float *slopes, size_t window,
                                    float *scratch)
{
    // q, k, v: (T, H * hd) stride ld; dout: stride ldo; dq, dk, dv: stride ldg;
    // scratch: (3 T)
    float *p = scratch, *dp = scratch + T, *capped = scratch + 2 * T;
    for (size_t h = 0; h < H; h++) {
        const size_t col = h * hd;
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < hd; j++)
                dk[t * ldg + col + j] = dv[t * ldg + col + j] = 0.0f;
        for (size_t t = 0; t < T; t++) {
            const float *qt = q + t * ld + col, *dout_t = dout + t * ldo + col;
            /* the forward's probabilities, as kern_attention_scalar makes
               them, over the window's keys s0 .. t (the others' are 0) */
            const size_t s0 = kern_window_first(t, window);
            for (size_t s = s0; s <= t; s++) {
                p[s] = dot_scalar(qt, k + s * ld + col, hd) * scale;
                if (slopes)
                    p[s] = p[s] + slopes[h] * (float)s;
            }
            if (softcap > 0.0f)
                kern_softcap(p + s0, capped + s0, t + 1 - s0, softcap);
            kern_softmax_scalar(p + s0, t + 1 - s0);
            /* dp_s = dout_t . v_s; ds_s = p_s (dp_s - sum_r p_r dp_r) */
            double sum = 0.0;
            for (size_t s = s0; s <= t; s++) {
                dp[s] = dot_scalar(dout_t, v + s * ld + col, hd);
                sum += (double)p[s] * dp[s];
            }
            float c = (float)sum;
            float *dqt = dq + t * ldg + col;
            for (size_t j = 0; j < hd; j++)
                dqt[j] = 0.0f;
            for (size_t s = s0; s <= t; s++) {
                float ds = p[s] * (dp[s] - c);
                if (softcap > 0.0f) /* d cap(z)/dz = 1 - tanh^2 */
                    ds *= 1.0f - capped[s] * capped[s];
                const float ds_scaled = ds * scale;
                const float *ks = k + s * ld + col;
                float *dks = dk + s * ldg + col, *dvs = dv + s * ldg + col;
                for (size_t j = 0; j < hd; j++) {
                    dqt[j] += ds * ks[j];
                    dks[j] += ds_scaled * qt[j];
                    dvs[j] += p[s] * dout_t[j];
                }
            }
            for (size_t j = 0; j < hd; j++)
                dqt[j] *= scale;
        }
    }
}

double kern_cross_entropy_scalar(float *dlogits, const float *logits, const uint32_t *targets,
                                 size_t n, size_t V, double scale)
{
    // logits, dlogits: (n, V); targets: (n)
    double total = 0.0;
    if (V == 0)
        return 0.0;
    for (size_t row = 0; row < n; row++) {
        const float *xr = logits + row * V;
        float *dr = dlogits + row * V;
        float max = xr[0];
        for (size_t j = 1; j < V; j++)
            max = xr[j] > max ? xr[j] : max;
        const float target = xr[targets[row]]; /* before dr overwrites it */
        double sum = 0.0;
        for (size_t j = 0; j < V; j++) {
            dr[j] = expf(xr[j] - max);
            sum += dr[j];
        }
        // cppcheck-suppress invalidFunctionArg ; sum >= 1: the max's own term is exp(0)
        total += (double)max + log(sum) - (double)target;
        float factor = (float)(scale / sum);
        for (size_t j = 0; j < V; j++)
            dr[j] = dr[j] * factor;
        dr[targets[row]] -= (float)scale;
    }
    return total;
}
