/* The forward pass's kernels other than matmul, on vectors: written once over
 * the operations of a mapping header (simd_avx2.h, simd_avx512.h: SIMD_W
 * floats a vector) and included once per instruction set, after that
 * header, with KERN_ISA set to the set's suffix (kern_variants.h).
 *
 * The algorithms are those of nn_scalar.c (the specification), with vector
 * exp and erf (nn_internal.h) in place of libm's, sums split over lanes and
 * masked loads for the columns left over. Contracts in kern_list.h. */
#include <math.h>

#include "kernels/kern_variants.h"
#include "kernels/nn_internal.h"
#include "kernels/nn_vec.h"

#define W SIMD_W
#define NN_STAT_BLOCK (4 * NN_STAT_ROWS)

void KERN_FN(kern_exp)(float *out, const float *x, size_t n)
{
    // x, out: (n)
    for (size_t i = 0; i < n; i += W)
        vf_store_first(out + i, exp_v(vf_load_first(x + i, n - i)), n - i);
}

void KERN_FN(kern_erf)(float *out, const float *x, size_t n)
{
    // x, out: (n)
    for (size_t i = 0; i < n; i += W)
        vf_store_first(out + i, erf_v(vf_load_first(x + i, n - i)), n - i);
}

/* LayerNorm, and with stats each row's mean and 1/sqrt(var + eps) into
   stats [n][2], the floats it normalised with (norm_stats's layout). */
static inline __attribute__((always_inline)) void
layernorm_body(float *out, float *stats, const float *x, const float *weight, const float *bias,
               size_t n, size_t d, float eps)
{
    // x, out: (n, d); weight, bias: (d); stats: (n, 2) or NULL
    if (d == 0)
        return;
    /* the statistics of NN_STAT_BLOCK rows, then their rows: each group's
       chain of a division, a square root and a division overlaps the next
       group's sums, where one group's alone were a short row's wait */
    for (size_t block0 = 0; block0 < n; block0 += NN_STAT_BLOCK) {
        const size_t end = n - block0 < NN_STAT_BLOCK ? n : block0 + NN_STAT_BLOCK;
        /* filled below; zeroed for the analysers, which lose the groups' offsets */
        float ms[NN_STAT_BLOCK] = {0}, rstds[NN_STAT_BLOCK] = {0};
        for (size_t row0 = block0; row0 < end; row0 += NN_STAT_ROWS)
            rows_mean_rstd(ms + (row0 - block0), rstds + (row0 - block0), x + row0 * d,
                           stat_group(end - row0), d, eps);
        for (size_t row = block0; row < end; row++) {
            const float *xr = x + row * d;
            float *outr = out + row * d;
            const float m = ms[row - block0], rstd = rstds[row - block0];
            if (stats) {
                stats[2 * row] = m;
                stats[2 * row + 1] = rstd;
            }
            size_t i;
            /* the scalar reference's operations in its order: same bits
               when m and rstd agree */
            const vf mean_v = vf_set1(m), rstd_v = vf_set1(rstd);
            for (i = 0; i + W <= d; i += W) {
                vf y = vf_mul(vf_sub(vf_load(xr + i), mean_v), rstd_v);
                y = vf_add(vf_mul(y, vf_load(weight + i)), vf_load(bias + i));
                vf_store(outr + i, y);
            }
            for (; i < d; i++)
                outr[i] = (xr[i] - m) * rstd * weight[i] + bias[i];
        }
    }
}

void KERN_FN(kern_layernorm)(float *out, const float *x, const float *weight, const float *bias,
                             size_t n, size_t d, float eps)
{
    layernorm_body(out, NULL, x, weight, bias, n, d, eps);
}

void KERN_FN(kern_layernorm_keep)(float *out, float *stats, const float *x, const float *weight,
                                  const float *bias, size_t n, size_t d, float eps)
{
    layernorm_body(out, stats, x, weight, bias, n, d, eps);
}

/* RMSNorm, and with stats each row's 0 and 1/sqrt(mean(x^2) + eps). */
static inline __attribute__((always_inline)) void rmsnorm_body(float *out, float *stats,
                                                               const float *x, const float *weight,
                                                               size_t n, size_t d, float eps)
{
    // x, out: (n, d); weight: (d); stats: (n, 2) or NULL
    if (d == 0)
        return;
    for (size_t row0 = 0; row0 < n; row0 += NN_STAT_ROWS) {
        const size_t rows = stat_group(n - row0);
        float rrmss[NN_STAT_ROWS];
        rows_rrms(rrmss, x + row0 * d, rows, d, eps);
        for (size_t k = 0; k < rows; k++) {
            const float *xr = x + (row0 + k) * d;
            float *outr = out + (row0 + k) * d;
            const float rrms = rrmss[k];
            if (stats) {
                stats[2 * (row0 + k)] = 0.0f;
                stats[2 * (row0 + k) + 1] = rrms;
            }
            size_t i;
            const vf vr = vf_set1(rrms);
            for (i = 0; i + W <= d; i += W) {
                vf y = vf_mul(vf_load(xr + i), vr);
                vf_store(outr + i, vf_mul(y, vf_load(weight + i)));
            }
            for (; i < d; i++)
                outr[i] = xr[i] * rrms * weight[i];
        }
    }
}

void KERN_FN(kern_rmsnorm)(float *out, const float *x, const float *weight, size_t n, size_t d,
                           float eps)
{
    rmsnorm_body(out, NULL, x, weight, n, d, eps);
}

void KERN_FN(kern_rmsnorm_keep)(float *out, float *stats, const float *x, const float *weight,
                                size_t n, size_t d, float eps)
{
    rmsnorm_body(out, stats, x, weight, n, d, eps);
}

/* out = x (1 + erf(x / sqrt 2)) / 2, and with KEEP cdf = (1 + erf) / 2 as
   well (halving is exact), Phi for gelu_backward.
   Erf, not tanh: PyTorch's default GELU; x halved first, as the scalar.
   SIMD_CHAINS vectors a step, then one at a time. */
static inline __attribute__((always_inline)) void gelu_body(const int KEEP, float *out, float *cdf,
                                                            const float *x, size_t n)
{
    const vf half = vf_set1(0.5f), one = vf_set1(1.0f), scale = vf_set1(NN_SQRT1_2);
    size_t i = 0;
    for (; i + SIMD_CHAINS * W <= n; i += SIMD_CHAINS * W) {
        vf v[SIMD_CHAINS], e[SIMD_CHAINS];
        gelu_erf_chains_v(v, e, x + i);
#pragma GCC unroll 4
        for (int k = 0; k < SIMD_CHAINS; k++) {
            const vf w = vf_add(one, e[k]);
            vf_store(out + i + k * W, vf_mul(vf_mul(half, v[k]), w));
            if (KEEP)
                vf_store(cdf + i + k * W, vf_mul(half, w));
        }
    }
    for (; i < n; i += W) {
        vf v = vf_load_first(x + i, n - i);
        const vf w = vf_add(one, erf_v(vf_mul(v, scale)));
        vf_store_first(out + i, vf_mul(vf_mul(half, v), w), n - i);
        if (KEEP)
            vf_store_first(cdf + i, vf_mul(half, w), n - i);
    }
}

void KERN_FN(kern_gelu)(float *out, const float *x, size_t n)
{
    // x, out: (n)
    gelu_body(0, out, NULL, x, n);
}

void KERN_FN(kern_gelu_keep)(float *out, float *cdf, const float *x, size_t n)
{
    // x, out, cdf: (n)
    gelu_body(1, out, cdf, x, n);
}

void KERN_FN(kern_gelu_tanh)(float *out, const float *x, size_t n)
{
    // x, out: (n)
    /* x / (1 + exp(-2u)): nn_internal.h */
    const vf beta2 = vf_set1(NN_GELU_TANH_2BETA), kappa = vf_set1(NN_GELU_TANH_KAPPA);
    const vf one = vf_set1(1.0f), zero = vf_zero();
    for (size_t i = 0; i < n; i += W) {
        vf v = vf_load_first(x + i, n - i);
        vf u2 = vf_mul(beta2, vf_add(v, vf_mul(kappa, vf_mul(vf_mul(v, v), v))));
        vf y = vf_div(v, vf_add(one, exp_v(vf_sub(zero, u2))));
        vf_store_first(out + i, y, n - i);
    }
}

void KERN_FN(kern_relu)(float *out, const float *x, size_t n)
{
    // x, out: (n)
    /* max(x, 0) returns its second operand, 0, for -0 and NaN, as the scalar */
    for (size_t i = 0; i < n; i += W)
        vf_store_first(out + i, vf_max(vf_load_first(x + i, n - i), vf_zero()), n - i);
}

void KERN_FN(kern_silu_mul)(float *out, const float *a, const float *b, size_t n)
{
    // a, b, out: (n)
    const vf one = vf_set1(1.0f), zero = vf_zero();
    for (size_t i = 0; i < n; i += W) {
        vf av = vf_load_first(a + i, n - i);
        vf s = vf_div(av, vf_add(one, exp_v(vf_sub(zero, av))));
        vf_store_first(out + i, vf_mul(s, vf_load_first(b + i, n - i)), n - i);
    }
}

void KERN_FN(kern_gelu_mul)(float *out, const float *a, const float *b, size_t n)
{
    // a, b, out: (n)
    const vf half = vf_set1(0.5f), one = vf_set1(1.0f);
    for (size_t i = 0; i < n; i += W) {
        vf av = vf_load_first(a + i, n - i);
        vf e = erf_v(vf_mul(av, vf_set1(NN_SQRT1_2)));
        vf g = vf_mul(vf_mul(half, av), vf_add(one, e));
        vf_store_first(out + i, vf_mul(g, vf_load_first(b + i, n - i)), n - i);
    }
}

void KERN_FN(kern_softmax)(float *x, size_t n)
{
    // x: (n), in place
    if (n == 0)
        return;
    vf vmax = vf_set1(-INFINITY);
    size_t i = 0;
    for (; i + W <= n; i += W)
        vmax = vf_max(vmax, vf_load(x + i));
    if (i < n)
        vmax = vf_max_first(vmax, x + i, n - i);
    vmax = vf_set1(vf_hmax(vmax));
    /* the sum in double, as the scalar reference */
    vd lo = vd_zero(), hi = vd_zero();
    for (i = 0; i + W <= n; i += W) {
        vf e = exp_v(vf_sub(vf_load(x + i), vmax));
        vf_store(x + i, e);
        add_widened(&lo, &hi, e);
    }
    if (i < n) {
        /* lanes beyond n add 0 */
        vf e = vf_keep_first(exp_v(vf_sub(vf_load_first(x + i, n - i), vmax)), n - i);
        vf_store_first(x + i, e, n - i);
        add_widened(&lo, &hi, e);
    }
    const vf total = vf_set1((float)vd_hsum(vd_add(lo, hi)));
    for (i = 0; i < n; i += W)
        vf_store_first(x + i, vf_div(vf_load_first(x + i, n - i), total), n - i);
}

/* out[j] = sum_{s < len} p[s] v[s * ld + j], j < cols <= 4 W, in float. */
static inline void weighted_rows(float *out, const float *p, const float *v, size_t ld, size_t len,
                                 size_t cols)
{
    if (cols == 4 * W) {
        vf a0 = vf_zero(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t s = 0; s < len; s++) {
            const float *vs = v + s * ld;
            vf ps = vf_set1(p[s]);
            a0 = vf_fmadd(ps, vf_load(vs), a0);
            a1 = vf_fmadd(ps, vf_load(vs + W), a1);
            a2 = vf_fmadd(ps, vf_load(vs + 2 * W), a2);
            a3 = vf_fmadd(ps, vf_load(vs + 3 * W), a3);
        }
        vf_store(out, a0);
        vf_store(out + W, a1);
        vf_store(out + 2 * W, a2);
        vf_store(out + 3 * W, a3);
        return;
    }
    size_t nv = (cols + W - 1) / W;
    vf acc[4] = {vf_zero(), vf_zero(), vf_zero(), vf_zero()};
    for (size_t s = 0; s < len; s++) {
        const float *vs = v + s * ld;
        vf ps = vf_set1(p[s]);
        for (size_t u = 0; u < nv; u++)
            acc[u] = vf_fmadd(ps, vf_load_first(vs + u * W, cols - u * W), acc[u]);
    }
    for (size_t u = 0; u < nv; u++)
        vf_store_first(out + u * W, acc[u], cols - u * W);
}

void KERN_FN(kern_attention)(float *out, size_t ldo, const float *q, const float *k, const float *v,
                             size_t ld, size_t T, size_t H, size_t hd, float scale, float softcap,
                             const float *slopes, size_t window, float *scratch)
{
    // q, k, v: (T, H * hd) with row stride ld; out: (T, H * hd) with stride ldo;
    // scratch: (T)
    for (size_t h = 0; h < H; h++) {
        for (size_t t = 0; t < T; t++) {
            const float *qt = q + t * ld + h * hd;
            /* the window's keys s0 .. t; the others' probabilities are 0 */
            const size_t s0 = kern_window_first(t, window), n = t + 1 - s0;
            for (size_t s = s0; s <= t; s++)
                scratch[s] = dot(qt, k + s * ld + h * hd, hd) * scale;
            if (slopes) /* ALiBi, as the scalar kernel adds it */
                for (size_t s = s0; s <= t; s++)
                    scratch[s] = scratch[s] + slopes[h] * (float)s;
            if (softcap > 0.0f)
                kern_softcap(scratch + s0, NULL, n, softcap);
            KERN_FN(kern_softmax)(scratch + s0, n);
            float *ot = out + t * ldo + h * hd;
            /* 4 vectors of columns a pass over the rows of v: 4 FMA chains */
            for (size_t j = 0; j < hd; j += 4 * W) {
                size_t cols = hd - j < 4 * W ? hd - j : 4 * W;
                weighted_rows(ot + j, scratch + s0, v + s0 * ld + h * hd + j, ld, n, cols);
            }
        }
    }
}

#undef W
