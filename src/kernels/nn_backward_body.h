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
 * Contracts in kern_list.h. */
#include <math.h>

#include "kernels/kern_table.h"
#include "kernels/kern_variants.h"
#include "kernels/nn_backward_internal.h"
#include "kernels/nn_internal.h"
#include "kernels/nn_vec.h"

#define W SIMD_W

/* The statistics of the group of rows from row0 (at most NN_STAT_ROWS):
   from stats when given, else summed as the forward sums them. */
static inline void group_stats(float *ms, float *rstds, const float *stats, const float *x,
                               size_t row0, size_t rows, size_t d, float eps, int rms)
{
    if (stats != NULL) {
        for (size_t k = 0; k < rows; k++) {
            ms[k] = stats[2 * (row0 + k)];
            rstds[k] = stats[2 * (row0 + k) + 1];
        }
    } else if (rms) {
        rows_rrms(rstds, x + row0 * d, rows, d, eps);
    } else {
        rows_mean_rstd(ms, rstds, x + row0 * d, rows, d, eps);
    }
}

void KERN_FN(kern_norm_stats)(float *stats, const float *x, size_t n, size_t d, float eps, int rms)
{
    // x: (n, d); stats: (n, 2)
    if (d == 0)
        return;
    for (size_t row0 = 0; row0 < n; row0 += NN_STAT_ROWS) {
        const size_t rows = stat_group(n - row0);
        float ms[NN_STAT_ROWS] = {0}, rstds[NN_STAT_ROWS];
        group_stats(ms, rstds, NULL, x, row0, rows, d, eps, rms);
        for (size_t k = 0; k < rows; k++) {
            stats[2 * (row0 + k)] = ms[k];
            stats[2 * (row0 + k) + 1] = rstds[k];
        }
    }
}

void KERN_FN(kern_layernorm_backward)(float *dx, const float *dy, const float *x,
                                      const float *stats, const float *weight, size_t n, size_t d,
                                      float eps)
{
    // x, dy, dx: (n, d); stats: (n, 2) or NULL; weight: (d)
    if (d == 0)
        return;
    for (size_t row0 = 0; row0 < n; row0 += NN_STAT_ROWS) {
        const size_t rows = stat_group(n - row0);
        float ms[NN_STAT_ROWS], rstds[NN_STAT_ROWS];
        group_stats(ms, rstds, stats, x, row0, rows, d, eps, 0);
        for (size_t k = 0; k < rows; k++) {
            const size_t row = row0 + k;
            const float *xr = x + row * d, *dyr = dy + row * d;
            float *dxr = dx + row * d;
            const vf mean_v = vf_set1(ms[k]), rstd_v = vf_set1(rstds[k]);
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
}

void KERN_FN(kern_rmsnorm_backward)(float *dx, const float *dy, const float *x, const float *stats,
                                    const float *weight, size_t n, size_t d, float eps)
{
    // x, dy, dx: (n, d); stats: (n, 2) or NULL; weight: (d)
    if (d == 0)
        return;
    for (size_t row0 = 0; row0 < n; row0 += NN_STAT_ROWS) {
        const size_t rows = stat_group(n - row0);
        float zeros[NN_STAT_ROWS], rrmss[NN_STAT_ROWS];
        group_stats(zeros, rrmss, stats, x, row0, rows, d, eps, 1);
        for (size_t k = 0; k < rows; k++) {
            const size_t row = row0 + k;
            const float *xr = x + row * d, *dyr = dy + row * d;
            float *dxr = dx + row * d;
            const vf rrms = vf_set1(rrmss[k]);
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
}

void KERN_FN(kern_norm_param_grads)(float *dweight, float *dbias, const float *dy, const float *x,
                                    const float *stats, size_t n, size_t d, size_t j0, size_t j1,
                                    float eps, int rms)
{
    // x, dy: (n, d); stats: (n, 2) or NULL; dweight, dbias: (d), columns j0 .. j1 - 1
    /* a column's sum is the scalar one's: products of floats are exact in
       double, added in row order; vectors only run columns side by side */
    for (size_t c0 = j0; c0 < j1; c0 += NN_PARAM_COLUMNS) {
        size_t cols = nn_param_block(j1 - c0);
        double sum_w[NN_PARAM_COLUMNS], sum_b[NN_PARAM_COLUMNS];
        for (size_t c = 0; c < cols; c++)
            sum_w[c] = sum_b[c] = 0.0;
        for (size_t row0 = 0; row0 < n; row0 += NN_STAT_ROWS) {
            const size_t rows = stat_group(n - row0);
            float ms[NN_STAT_ROWS] = {0}, rstds[NN_STAT_ROWS];
            group_stats(ms, rstds, stats, x, row0, rows, d, eps, rms);
            for (size_t k = 0; k < rows; k++) {
                const size_t row = row0 + k;
                const float *xr = x + row * d + c0, *dyr = dy + row * d + c0;
                const float m = ms[k], rstd = rstds[k];
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
        }
        for (size_t c = 0; c < cols; c++) {
            dweight[c0 + c] = (float)(dweight[c0 + c] + sum_w[c]);
            if (dbias != NULL)
                dbias[c0 + c] = (float)(dbias[c0 + c] + sum_b[c]);
        }
    }
}

void KERN_FN(kern_gelu_backward)(float *dx, const float *dy, const float *x, const float *cdf,
                                 size_t n)
{
    // x, dy, cdf, dx: (n)
    /* cdf + x pdf, in PyTorch's order; the erf came with cdf */
    const vf minus_half = vf_set1(-0.5f), inv_root = vf_set1(NN_INV_SQRT_2PI);
    size_t i = 0;
    for (; i + W <= n; i += W) {
        const vf v = vf_load(x + i);
        const vf pdf = vf_mul(exp_v(vf_mul(vf_mul(minus_half, v), v)), inv_root);
        const vf g = vf_add(vf_load(cdf + i), vf_mul(v, pdf));
        vf_store(dx + i, vf_mul(vf_load(dy + i), g));
    }
    if (i < n) {
        const vf v = vf_load_first(x + i, n - i);
        const vf pdf = vf_mul(exp_v(vf_mul(vf_mul(minus_half, v), v)), inv_root);
        const vf g = vf_add(vf_load_first(cdf + i, n - i), vf_mul(v, pdf));
        vf_store_first(dx + i, vf_mul(vf_load_first(dy + i, n - i), g), n - i);
    }
}

void KERN_FN(kern_gelu_tanh_backward)(float *dx, const float *dy, const float *x, size_t n)
{
    // x, dy, dx: (n)
    const vf beta2 = vf_set1(NN_GELU_TANH_2BETA), kappa = vf_set1(NN_GELU_TANH_KAPPA);
    const vf kappa3 = vf_set1(3.0f * NN_GELU_TANH_KAPPA), bound = vf_set1(NN_GELU_TANH_CLAMP);
    const vf one = vf_set1(1.0f), zero = vf_zero();
    for (size_t i = 0; i < n; i += W) {
        vf v = vf_load_first(x + i, n - i);
        vf u2 = vf_mul(beta2, vf_add(v, vf_mul(kappa, vf_mul(vf_mul(v, v), v))));
        vf s = vf_div(one, vf_add(one, exp_v(vf_sub(zero, u2))));
        vf c = vf_min(vf_max(v, vf_sub(zero, bound)), bound);
        vf du2 = vf_mul(beta2, vf_add(one, vf_mul(kappa3, vf_mul(c, c))));
        vf g = vf_add(s, vf_mul(vf_mul(c, du2), vf_mul(s, vf_sub(one, s))));
        vf_store_first(dx + i, vf_mul(vf_load_first(dy + i, n - i), g), n - i);
    }
}

void KERN_FN(kern_relu_backward)(float *dx, const float *dy, const float *x, size_t n)
{
    // x, dy, dx: (n)
    const vf zero = vf_zero();
    for (size_t i = 0; i < n; i += W) {
        vm pos = vf_lt(zero, vf_load_first(x + i, n - i));
        vf_store_first(dx + i, vf_select(pos, vf_load_first(dy + i, n - i), zero), n - i);
    }
}

void KERN_FN(kern_silu_mul_backward)(float *da, float *db, const float *dy, const float *a,
                                     const float *b, size_t n)
{
    // a, b, dy, da, db: (n)
    const vf one = vf_set1(1.0f), zero = vf_zero();
    for (size_t i = 0; i < n; i += W) {
        vf av = vf_load_first(a + i, n - i), bv = vf_load_first(b + i, n - i);
        vf g = vf_load_first(dy + i, n - i);
        vf e1 = vf_add(one, exp_v(vf_sub(zero, av)));
        vf silu = vf_div(av, e1), s = vf_div(one, e1);
        vf gb = vf_mul(g, bv);
        vf dsilu = vf_mul(s, vf_add(one, vf_mul(av, vf_sub(one, s))));
        vf_store_first(db + i, vf_mul(g, silu), n - i);
        vf_store_first(da + i, vf_mul(gb, dsilu), n - i);
    }
}

void KERN_FN(kern_gelu_mul_backward)(float *da, float *db, const float *dy, const float *a,
                                     const float *b, size_t n)
{
    // a, b, dy, da, db: (n)
    const vf half = vf_set1(0.5f), minus_half = vf_set1(-0.5f), one = vf_set1(1.0f);
    for (size_t i = 0; i < n; i += W) {
        vf av = vf_load_first(a + i, n - i), bv = vf_load_first(b + i, n - i);
        vf g = vf_load_first(dy + i, n - i);
        vf one_erf = vf_add(one, erf_v(vf_mul(av, vf_set1(NN_SQRT1_2))));
        vf cdf = vf_mul(half, one_erf);
        vf gelu = vf_mul(vf_mul(half, av), one_erf);
        vf pdf = vf_mul(exp_v(vf_mul(vf_mul(minus_half, av), av)), vf_set1(NN_INV_SQRT_2PI));
        vf gb = vf_mul(g, bv);
        vf_store_first(db + i, vf_mul(g, gelu), n - i);
        vf_store_first(da + i, vf_mul(gb, vf_add(cdf, vf_mul(av, pdf))), n - i);
    }
}

static inline size_t att_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* A register tile of a small matmul: c[i][j] = alpha sum_k a[i ar + k ak]
   b[k ldb + j] for i < rows <= 4, j < cols <= 2 W, k < kn in order; add:
   c[i][j] += that instead. Rows past rows repeat row 0's a (computed, not
   stored); columns past cols load and store nothing. */
static inline void attention_tile(float *c, size_t ldc, size_t rows, size_t cols, int add,
                                  float alpha, const float *a, size_t ar, size_t ak, const float *b,
                                  size_t ldb, size_t kn)
{
    const float *a0 = a, *a1 = a + (rows > 1 ? ar : 0);
    const float *a2 = a + (rows > 2 ? 2 * ar : 0), *a3 = a + (rows > 3 ? 3 * ar : 0);
    const size_t c1 = cols > W ? cols - W : 0;
    vf x00 = vf_zero(), x01 = vf_zero(), x10 = vf_zero(), x11 = vf_zero();
    vf x20 = vf_zero(), x21 = vf_zero(), x30 = vf_zero(), x31 = vf_zero();
    for (size_t k = 0; k < kn; k++) {
        const float *bk = b + k * ldb;
        const vf b0 = vf_load_first(bk, cols), b1 = vf_load_first(bk + W, c1);
        const size_t ka = k * ak;
        vf s = vf_set1(a0[ka]);
        x00 = vf_fmadd(s, b0, x00), x01 = vf_fmadd(s, b1, x01);
        s = vf_set1(a1[ka]);
        x10 = vf_fmadd(s, b0, x10), x11 = vf_fmadd(s, b1, x11);
        s = vf_set1(a2[ka]);
        x20 = vf_fmadd(s, b0, x20), x21 = vf_fmadd(s, b1, x21);
        s = vf_set1(a3[ka]);
        x30 = vf_fmadd(s, b0, x30), x31 = vf_fmadd(s, b1, x31);
    }
    const vf x[4][2] = {{x00, x01}, {x10, x11}, {x20, x21}, {x30, x31}};
    const vf va = vf_set1(alpha);
    for (size_t i = 0; i < rows; i++) {
        float *ci = c + i * ldc;
        if (add) {
            vf_store_first(ci, vf_fmadd(x[i][0], va, vf_load_first(ci, cols)), cols);
            if (c1 > 0)
                vf_store_first(ci + W, vf_fmadd(x[i][1], va, vf_load_first(ci + W, c1)), c1);
        } else {
            vf_store_first(ci, vf_mul(x[i][0], va), cols);
            if (c1 > 0)
                vf_store_first(ci + W, vf_mul(x[i][1], va), c1);
        }
    }
}

/* One head's columns of k (or v), transposed into panels of 2 W keys:
   panel[j][s] = k[s0 + s][j], zeros past T (Tp, T rounded up). */
static void attention_pack(float *panels, const float *k, size_t ld, size_t T, size_t Tp, size_t hd)
{
    for (size_t s0 = 0; s0 < Tp; s0 += 2 * W) {
        float *panel = panels + s0 * hd;
        for (size_t s = 0; s < 2 * W; s++)
            for (size_t j = 0; j < hd; j++)
                panel[j * 2 * W + s] = s0 + s < T ? k[(s0 + s) * ld + j] : 0.0f;
    }
}

/* rows rows of hd floats, from stride ld to stride hd */
static void attention_copy_rows(float *dst, const float *src, size_t ld, size_t rows, size_t hd)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < hd; j += W)
            vf_store_first(dst + r * hd + j, vf_load_first(src + r * ld + j, hd - j), hd - j);
}

/* The first key a block of query rows from t0 meets through the window,
   down to a panel's first (a multiple of 2 W, so of 4): the keys before it
   have p 0 for every row of the block, and the block skips them. */
static inline size_t attention_first_key(size_t t0, size_t window)
{
    return kern_window_first(t0, window) / (2 * W) * (2 * W);
}

/* For query rows t0 .. t0 + rows - 1 (rows <= the block) of one head, q
   and dout of the block packed (stride hd): p and ds (rows of Tp) from the
   packed k and v, as the scalar kernel makes them over each row's window
   of keys s0 .. t; zeros from the block's first key (attention_first_key)
   to s0 and past t up to the block's last key. */
static void attention_block_probs(float *p, float *ds, float *capped, const float *qb,
                                  const float *ob, const float *kp, const float *vp, size_t t0,
                                  size_t rows, size_t Tp, size_t hd, float scale, float softcap,
                                  const float *slope, size_t window)
{
    const size_t first = attention_first_key(t0, window);
    for (size_t r0 = 0; r0 < rows; r0 += 4) {
        const size_t nr = att_min(4, rows - r0), keys = t0 + r0 + nr;
        for (size_t s0 = first; s0 < keys; s0 += 2 * W) {
            attention_tile(p + r0 * Tp + s0, Tp, nr, 2 * W, 0, scale, qb + r0 * hd, hd, 1,
                           kp + s0 * hd, 2 * W, hd);
            attention_tile(ds + r0 * Tp + s0, Tp, nr, 2 * W, 0, 1.0f, ob + r0 * hd, hd, 1,
                           vp + s0 * hd, 2 * W, hd);
        }
    }
    const size_t end = t0 + rows;
    for (size_t r = 0; r < rows; r++) {
        const size_t t = t0 + r, s0 = kern_window_first(t, window);
        float *pr = p + r * Tp, *dsr = ds + r * Tp, *tr = capped + r * Tp;
        if (slope) /* ALiBi, as the forward adds it */
            for (size_t s = s0; s <= t; s++)
                pr[s] = pr[s] + *slope * (float)s;
        if (softcap > 0.0f)
            kern_softcap(pr + s0, tr + s0, t + 1 - s0, softcap);
        KERN_FN(kern_softmax)(pr + s0, t + 1 - s0);
        /* lanes past t load 0: add nothing */
        vd lo = vd_zero(), hi = vd_zero();
        for (size_t s = s0; s <= t; s += W) {
            const vf pv = vf_load_first(pr + s, t + 1 - s), dpv = vf_load_first(dsr + s, t + 1 - s);
            lo = vd_fmadd(vf_widen_lo(pv), vf_widen_lo(dpv), lo);
            hi = vd_fmadd(vf_widen_hi(pv), vf_widen_hi(dpv), hi);
        }
        const vf c = vf_set1((float)vd_hsum(vd_add(lo, hi)));
        /* dp becomes ds = p (dp - c) */
        for (size_t s = s0; s <= t; s += W) {
            const vf dpv = vf_sub(vf_load_first(dsr + s, t + 1 - s), c);
            vf_store_first(dsr + s, vf_mul(vf_load_first(pr + s, t + 1 - s), dpv), t + 1 - s);
        }
        if (softcap > 0.0f) /* d cap(z)/dz = 1 - tanh^2, as the scalar kernel rounds it */
            for (size_t s = s0; s <= t; s++)
                dsr[s] *= 1.0f - tr[s] * tr[s];
        /* keys outside the window: p 0, as the -inf mask gives */
        for (size_t s = first; s < s0; s++)
            pr[s] = dsr[s] = 0.0f;
        for (size_t s = t + 1; s < end; s++)
            pr[s] = dsr[s] = 0.0f;
    }
}

void KERN_FN(kern_attention_backward)(float *dq, float *dk, float *dv, size_t ldg,
                                      const float *dout, size_t ldo, const float *q, const float *k,
                                      const float *v, size_t ld, size_t T, size_t H, size_t hd,
                                      float scale, float softcap, const float *slopes,
                                      size_t window, float *scratch)
{
    // q, k, v: (T, H * hd) stride ld; dout: stride ldo; dq, dk, dv: stride ldg;
    // scratch: KERN_ATTENTION_BACKWARD_SCRATCH(T, hd)
    /* Per head, blocks of query rows as small matmuls: p and dp of the
       block against the packed k and v, then dq = ds k, dk += ds^T q and
       dv += p^T dout, over register tiles of 4 rows by 2 W columns. The
       head's rows are copied to stride hd, dk and dv summed there: rows
       of stride ld (a multiple of 4 KiB) would share a few cache sets. */
    const size_t B = KERN_ATTENTION_BACKWARD_BLOCK, Tp = (T + 31) / 32 * 32;
    float *kp = scratch, *vp = kp + hd * Tp, *kc = vp + hd * Tp, *dkc = kc + hd * Tp;
    float *dvc = dkc + hd * Tp, *p = dvc + hd * Tp, *ds = p + B * Tp, *qb = ds + B * Tp;
    float *ob = qb + B * hd, *capped = ob + B * hd;
    for (size_t h = 0; h < H; h++) {
        const size_t col = h * hd;
        attention_copy_rows(kc, k + col, ld, T, hd);
        attention_pack(kp, kc, hd, T, Tp, hd);
        attention_pack(vp, v + col, ld, T, Tp, hd);
        for (size_t i = 0; i < T * hd; i++)
            dkc[i] = dvc[i] = 0.0f;
        for (size_t t0 = 0; t0 < T; t0 += B) {
            const size_t rows = att_min(B, T - t0), keys = t0 + rows;
            const size_t first = attention_first_key(t0, window);
            attention_copy_rows(qb, q + t0 * ld + col, ld, rows, hd);
            attention_copy_rows(ob, dout + t0 * ldo + col, ldo, rows, hd);
            attention_block_probs(p, ds, capped, qb, ob, kp, vp, t0, rows, Tp, hd, scale, softcap,
                                  slopes ? slopes + h : NULL, window);
            for (size_t r0 = 0; r0 < rows; r0 += 4)
                for (size_t j = 0; j < hd; j += 2 * W)
                    attention_tile(dq + (t0 + r0) * ldg + col + j, ldg, att_min(4, rows - r0),
                                   att_min(2 * W, hd - j), 0, scale, ds + r0 * Tp + first, Tp, 1,
                                   kc + first * hd + j, hd, t0 + att_min(r0 + 4, rows) - first);
            /* key s meets rows t >= s only: the block's rows from s0 - t0;
               the keys before first none of them */
            for (size_t s0 = first; s0 < keys; s0 += 4) {
                const size_t r0 = s0 > t0 ? s0 - t0 : 0, nk = att_min(4, keys - s0);
                for (size_t j = 0; j < hd; j += 2 * W) {
                    const size_t cols = att_min(2 * W, hd - j);
                    attention_tile(dkc + s0 * hd + j, hd, nk, cols, 1, scale, ds + r0 * Tp + s0, 1,
                                   Tp, qb + r0 * hd + j, hd, rows - r0);
                    attention_tile(dvc + s0 * hd + j, hd, nk, cols, 1, 1.0f, p + r0 * Tp + s0, 1,
                                   Tp, ob + r0 * hd + j, hd, rows - r0);
                }
            }
        }
        for (size_t t = 0; t < T; t++)
            for (size_t j = 0; j < hd; j += W) {
                vf_store_first(dk + t * ldg + col + j, vf_load_first(dkc + t * hd + j, hd - j),
                               hd - j);
                vf_store_first(dv + t * ldg + col + j, vf_load_first(dvc + t * hd + j, hd - j),
                               hd - j);
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
