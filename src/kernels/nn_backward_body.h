/* The backward pass's kernels other than matmul, on vectors: written once
 * over the operations of a mapping header (simd_avx2.h, simd_avx512.h) and
 * included once per instruction set after it, with KERN_ISA set to the
 * set's suffix (kern_variants.h).
 *
 * The algorithms and the order of their float operations are those of
 * nn_backward_scalar.c (the specification), with the vector exp and erf of
 * nn_vec.h, sums split over lanes and masked loads for the columns left
 * over; no multiply-add is fused that the scalar rounds twice, except in
 * the dot products and the attention's accumulations (matmul-like sums).
 * Contracts in kern_table.h. */
#include <math.h>

#include "kernels/kern_variants.h"
#include "kernels/nn_backward_internal.h"
#include "kernels/nn_internal.h"
#include "kernels/nn_vec.h"

#define W SIMD_W

void KERN_FN(kern_layernorm_backward)(float *dx, const float *dy, const float *x,
                                      const float *weight, size_t n, size_t d, float eps)
{
    // x, dy, dx: (n, d); weight: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d, *dyr = dy + row * d;
        float *dxr = dx + row * d;
        float m, rstd;
        row_mean_rstd(&m, &rstd, xr, d, eps);
        const vf mean_v = vf_set1(m), rstd_v = vf_set1(rstd);
        /* lanes past d load 0 into dy and weight: g = 0 adds nothing */
        vd g_lo = vd_zero(), g_hi = vd_zero(), gx_lo = vd_zero(), gx_hi = vd_zero();
        for (size_t i = 0; i < d; i += W) {
            vf xhat = vf_mul(vf_sub(vf_load_first(xr + i, d - i), mean_v), rstd_v);
            vf g = vf_mul(vf_load_first(dyr + i, d - i), vf_load_first(weight + i, d - i));
            add_widened(&g_lo, &g_hi, g);
            gx_lo = vd_fmadd(vf_widen_lo(g), vf_widen_lo(xhat), gx_lo);
            gx_hi = vd_fmadd(vf_widen_hi(g), vf_widen_hi(xhat), gx_hi);
        }
        const vf mean_g = vf_set1((float)(vd_hsum(vd_add(g_lo, g_hi)) / (double)d));
        const vf mean_gx = vf_set1((float)(vd_hsum(vd_add(gx_lo, gx_hi)) / (double)d));
        for (size_t i = 0; i < d; i += W) {
            vf xhat = vf_mul(vf_sub(vf_load_first(xr + i, d - i), mean_v), rstd_v);
            vf g = vf_mul(vf_load_first(dyr + i, d - i), vf_load_first(weight + i, d - i));
            vf t = vf_sub(vf_sub(g, mean_g), vf_mul(xhat, mean_gx));
            vf_store_first(dxr + i, vf_mul(t, rstd_v), d - i);
        }
    }
}

void KERN_FN(kern_rmsnorm_backward)(float *dx, const float *dy, const float *x, const float *weight,
                                    size_t n, size_t d, float eps)
{
    // x, dy, dx: (n, d); weight: (d)
    if (d == 0)
        return;
    for (size_t row = 0; row < n; row++) {
        const float *xr = x + row * d, *dyr = dy + row * d;
        float *dxr = dx + row * d;
        const vf rrms = vf_set1(row_rrms(xr, d, eps));
        vd lo = vd_zero(), hi = vd_zero();
        for (size_t i = 0; i < d; i += W) {
            vf xhat = vf_mul(vf_load_first(xr + i, d - i), rrms);
            vf g = vf_mul(vf_load_first(dyr + i, d - i), vf_load_first(weight + i, d - i));
            lo = vd_fmadd(vf_widen_lo(g), vf_widen_lo(xhat), lo);
            hi = vd_fmadd(vf_widen_hi(g), vf_widen_hi(xhat), hi);
        }
        const vf mean_gx = vf_set1((float)(vd_hsum(vd_add(lo, hi)) / (double)d));
        for (size_t i = 0; i < d; i += W) {
            vf xhat = vf_mul(vf_load_first(xr + i, d - i), rrms);
            vf g = vf_mul(vf_load_first(dyr + i, d - i), vf_load_first(weight + i, d - i));
            vf t = vf_sub(g, vf_mul(xhat, mean_gx));
            vf_store_first(dxr + i, vf_mul(t, rrms), d - i);
        }
    }
}

void KERN_FN(kern_norm_param_grads)(float *dweight, float *dbias, const float *dy, const float *x,
                                    size_t n, size_t d, size_t j0, size_t j1, float eps, int rms)
{
    // x, dy: (n, d); dweight, dbias: (d), columns j0 .. j1 - 1
    /* a column's sum is the scalar one's: products of floats are exact in
       double, added in row order; vectors only run columns side by side */
    for (size_t c0 = j0; c0 < j1; c0 += NN_PARAM_COLUMNS) {
        size_t cols = nn_param_block(j1 - c0);
        double sum_w[NN_PARAM_COLUMNS], sum_b[NN_PARAM_COLUMNS];
        for (size_t c = 0; c < cols; c++)
            sum_w[c] = sum_b[c] = 0.0;
        for (size_t row = 0; row < n; row++) {
            const float *xr = x + row * d + c0, *dyr = dy + row * d + c0;
            float m = 0.0f, rstd;
            if (rms)
                rstd = row_rrms(x + row * d, d, eps);
            else
                row_mean_rstd(&m, &rstd, x + row * d, d, eps);
            const vf mean_v = vf_set1(m), rstd_v = vf_set1(rstd);
            size_t c = 0;
            for (; c + W <= cols; c += W) {
                vf xv = vf_load(xr + c);
                vf xhat = rms ? vf_mul(xv, rstd_v) : vf_mul(vf_sub(xv, mean_v), rstd_v);
                vf g = vf_load(dyr + c);
                vd gl = vf_widen_lo(g), gh = vf_widen_hi(g);
                vd_store(sum_w + c, vd_add(vd_load(sum_w + c), vd_mul(gl, vf_widen_lo(xhat))));
                vd_store(sum_w + c + W / 2,
                         vd_add(vd_load(sum_w + c + W / 2), vd_mul(gh, vf_widen_hi(xhat))));
                vd_store(sum_b + c, vd_add(vd_load(sum_b + c), gl));
                vd_store(sum_b + c + W / 2, vd_add(vd_load(sum_b + c + W / 2), gh));
            }
            for (; c < cols; c++) {
                float xhat = rms ? xr[c] * rstd : (xr[c] - m) * rstd;
                sum_w[c] += (double)dyr[c] * xhat;
                sum_b[c] += dyr[c];
            }
        }
        for (size_t c = 0; c < cols; c++) {
            dweight[c0 + c] = (float)(dweight[c0 + c] + sum_w[c]);
            if (dbias != NULL)
                dbias[c0 + c] = (float)(dbias[c0 + c] + sum_b[c]);
        }
    }
}

void KERN_FN(kern_gelu_backward)(float *dx, const float *dy, const float *x, size_t n)
{
    // x, dy, dx: (n)
    const vf half = vf_set1(0.5f), minus_half = vf_set1(-0.5f), one = vf_set1(1.0f);
    for (size_t i = 0; i < n; i += W) {
        vf v = vf_load_first(x + i, n - i);
        vf cdf = vf_mul(half, vf_add(one, erf_v(vf_mul(v, vf_set1(NN_SQRT1_2)))));
        vf pdf = vf_mul(exp_v(vf_mul(vf_mul(minus_half, v), v)), vf_set1(NN_INV_SQRT_2PI));
        vf g = vf_add(cdf, vf_mul(v, pdf));
        vf_store_first(dx + i, vf_mul(vf_load_first(dy + i, n - i), g), n - i);
    }
}

/* One head's columns j .. j + cols - 1 (cols <= W) for query t: dq_t =
   scale sum_s ds_s k_s, and dk_s += scale ds_s q_t, dv_s += p_s dout_t for
   s <= t. ds holds ds_s, p p_s. */
static inline void attention_backward_columns(float *dqt, float *dk, float *dv, size_t ldg,
                                              const float *qt, const float *dout_t, const float *k,
                                              size_t ld, const float *p, const float *ds,
                                              size_t len, size_t cols, float scale)
{
    const vf qv = vf_load_first(qt, cols), dov = vf_load_first(dout_t, cols);
    const vf vscale = vf_set1(scale);
    vf acc = vf_zero();
    for (size_t s = 0; s < len; s++) {
        vf dss = vf_set1(ds[s]);
        acc = vf_fmadd(dss, vf_load_first(k + s * ld, cols), acc);
        float *dks = dk + s * ldg, *dvs = dv + s * ldg;
        vf_store_first(dks, vf_fmadd(vf_mul(dss, vscale), qv, vf_load_first(dks, cols)), cols);
        vf_store_first(dvs, vf_fmadd(vf_set1(p[s]), dov, vf_load_first(dvs, cols)), cols);
    }
    vf_store_first(dqt, vf_mul(acc, vscale), cols);
}

void KERN_FN(kern_attention_backward)(float *dq, float *dk, float *dv, size_t ldg,
                                      const float *dout, size_t ldo, const float *q, const float *k,
                                      const float *v, size_t ld, size_t T, size_t H, size_t hd,
                                      float *scratch)
{
    // q, k, v: (T, H * hd) stride ld; dout: stride ldo; dq, dk, dv: stride ldg;
    // scratch: (2 T)
    float scale = (float)(1.0 / sqrt((double)hd));
    float *p = scratch, *dp = scratch + T;
    for (size_t h = 0; h < H; h++) {
        const size_t col = h * hd;
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < hd; j += W) {
                vf_store_first(dk + t * ldg + col + j, vf_zero(), hd - j);
                vf_store_first(dv + t * ldg + col + j, vf_zero(), hd - j);
            }
        for (size_t t = 0; t < T; t++) {
            const float *qt = q + t * ld + col, *dout_t = dout + t * ldo + col;
            for (size_t s = 0; s <= t; s++)
                p[s] = dot(qt, k + s * ld + col, hd) * scale;
            KERN_FN(kern_softmax)(p, t + 1);
            double sum = 0.0;
            for (size_t s = 0; s <= t; s++) {
                dp[s] = dot(dout_t, v + s * ld + col, hd);
                sum += (double)p[s] * dp[s];
            }
            const float c = (float)sum;
            /* dp becomes ds = p (dp - c) */
            for (size_t s = 0; s <= t; s++)
                dp[s] = p[s] * (dp[s] - c);
            for (size_t j = 0; j < hd; j += W)
                attention_backward_columns(dq + t * ldg + col + j, dk + col + j, dv + col + j, ldg,
                                           qt + j, dout_t + j, k + col + j, ld, p, dp, t + 1,
                                           hd - j < W ? hd - j : W, scale);
        }
    }
}

double KERN_FN(kern_cross_entropy)(float *dlogits, const float *logits, const uint32_t *targets,
                                   size_t n, size_t V, double scale)
{
    // logits, dlogits: (n, V); targets: (n)
    double total = 0.0;
    if (V == 0)
        return 0.0;
    for (size_t row = 0; row < n; row++) {
        const float *xr = logits + row * V;
        float *dr = dlogits + row * V;
        vf vmax = vf_set1(-INFINITY);
        size_t j = 0;
        for (; j + W <= V; j += W)
            vmax = vf_max(vmax, vf_load(xr + j));
        if (j < V)
            vmax = vf_max_first(vmax, xr + j, V - j);
        const float max = vf_hmax(vmax);
        const float target = xr[targets[row]]; /* before dr overwrites it */
        const vf maxv = vf_set1(max);
        vd lo = vd_zero(), hi = vd_zero();
        for (j = 0; j < V; j += W) {
            /* lanes beyond V add 0 */
            vf e = vf_keep_first(exp_v(vf_sub(vf_load_first(xr + j, V - j), maxv)), V - j);
            vf_store_first(dr + j, e, V - j);
            add_widened(&lo, &hi, e);
        }
        double sum = vd_hsum(vd_add(lo, hi));
        // cppcheck-suppress invalidFunctionArg ; sum >= 1: the max's own term is exp(0)
        total += (double)max + log(sum) - (double)target;
        const vf factor = vf_set1((float)(scale / sum));
        for (j = 0; j < V; j += W)
            vf_store_first(dr + j, vf_mul(vf_load_first(dr + j, V - j), factor), V - j);
        dr[targets[row]] -= (float)scale;
    }
    return total;
}

#undef W
