/* The matmul's reference: y = x W^T + b as plain loops, the specification
 * the SIMD variants (matmul_avx2.c, matmul_avx512.c) are tested against.
 * Each out[i][j] starts from bias[j] and adds x[i][p] * w[j][p] for p = 0,
 * 1, .., k - 1 in that order, as the SIMD variants do with one FMA per term
 * (they differ from this only by the product's rounding). */
#include <string.h>

#include "kernels/kern_variants.h"

/* "Packed" is W itself: the dot products below read its rows as they are. */
size_t kern_matmul_packed_floats_scalar(size_t k, size_t m)
{
    return k * m;
}

void kern_matmul_pack_scalar(float *packed, const float *w, size_t k, size_t m)
{
    memcpy(packed, w, k * m * sizeof *packed);
}

size_t kern_matmul_workspace_floats_scalar(size_t n, size_t k, size_t m)
{
    (void)n, (void)k, (void)m;
    return 0;
}

void kern_matmul_scalar(float *out, size_t ldo, const float *x, size_t ldx, const float *packed,
                        const float *bias, size_t n, size_t k, size_t m, float *workspace)
{
    // x: (n, k) row stride ldx; packed = w: (m, k); out: (n, m) row stride ldo
    (void)workspace;
    for (size_t i = 0; i < n; i++) {
        const float *xi = x + i * ldx;
        for (size_t j = 0; j < m; j++) {
            const float *wj = packed + j * k;
            float acc = bias != NULL ? bias[j] : 0.0f;
            for (size_t p = 0; p < k; p++)
                acc += xi[p] * wj[p]; // no FMA: the file is built with -ffp-contract=off
            out[i * ldo + j] = acc;
        }
    }
}

void kern_matmul_reblock_scalar(size_t l1, size_t l2)
{
    (void)l1, (void)l2; /* no blocks: a column's sum runs whole */
}

size_t kern_matmul_column_block_scalar(size_t m)
{
    (void)m;
    return 1; /* a column is a row of w: any range */
}

size_t kern_matmul_row_block_scalar(size_t m)
{
    (void)m;
    return 1; /* a row's sums are its own: any range */
}

void kern_matmul_columns_scalar(float *out, size_t ldo, const float *x, size_t ldx,
                                const float *packed, const float *bias, size_t n, size_t k,
                                size_t m, size_t j0, size_t j1, float *workspace)
{
    // columns j0 .. j1 - 1 of kern_matmul_scalar's: its own columns, shifted
    (void)m;
    kern_matmul_scalar(out + j0, ldo, x, ldx, packed + j0 * k, bias ? bias + j0 : NULL, n, k,
                       j1 - j0, workspace);
}

size_t kern_matmul_drawn_workspace_floats_scalar(size_t n, size_t k, size_t m)
{
    (void)n, (void)m;
    return k; /* one row of W */
}

void kern_matmul_drawn_columns_scalar(float *out, size_t ldo, const float *x, size_t ldx,
                                      const kern_panel_source *w, const float *bias, size_t n,
                                      size_t k, size_t m, size_t j0, size_t j1, float *workspace)
{
    // W (m, k) from w, a row (a panel of one column) at a time; columns j0 .. j1 - 1
    (void)m;
    for (size_t j = j0; j < j1; j++) {
        w->fill(w->ctx, workspace, 1, j, 0, k);
        kern_matmul_scalar(out + j, ldo, x, ldx, workspace, bias ? bias + j : NULL, n, k, 1, NULL);
    }
}

void kern_matmul_pack_transposed_scalar(float *packed, const float *wt, size_t ldwt, size_t k,
                                        size_t m)
{
    // wt: (k, m) row stride ldwt; packed = w: (m, k)
    for (size_t j = 0; j < m; j++)
        for (size_t p = 0; p < k; p++)
            packed[j * k + p] = wt[p * ldwt + j];
}

int kern_matmul_wt_fits_scalar(size_t k, size_t m, size_t ldwt)
{
    (void)k, (void)m, (void)ldwt;
    return 1; /* the loops read any wt */
}

void kern_matmul_wt_columns_scalar(float *out, size_t ldo, const float *x, size_t ldx,
                                   const float *wt, size_t ldwt, const float *bias, size_t n,
                                   size_t k, size_t m, size_t j0, size_t j1, int accumulate,
                                   float *workspace)
{
    // x: (n, k) row stride ldx; wt = W^T: (k, m) row stride ldwt; columns j0 .. j1 - 1
    (void)m, (void)workspace;
    for (size_t i = 0; i < n; i++) {
        const float *xi = x + i * ldx;
        for (size_t j = j0; j < j1; j++) {
            float acc = accumulate ? out[i * ldo + j] : bias != NULL ? bias[j] : 0.0f;
            for (size_t p = 0; p < k; p++)
                acc += xi[p] * wt[p * ldwt + j];
            out[i * ldo + j] = acc;
        }
    }
}

void kern_matmul_accumulate_scalar(float *out, size_t ldo, const float *x, size_t ldx,
                                   const float *packed, size_t n, size_t k, size_t m,
                                   float *workspace)
{
    // x: (n, k) row stride ldx; packed = w: (m, k); out: (n, m) row stride ldo; out +=
    (void)workspace;
    for (size_t i = 0; i < n; i++) {
        const float *xi = x + i * ldx;
        for (size_t j = 0; j < m; j++) {
            const float *wj = packed + j * k;
            float acc = out[i * ldo + j];
            for (size_t p = 0; p < k; p++)
                acc += xi[p] * wj[p];
            out[i * ldo + j] = acc;
        }
    }
}

#define KERN_ISA scalar
#include "kernels/matmul_grad_body.h"
