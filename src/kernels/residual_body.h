/* The residual update and the sums the forward pass measures, included once
 * per instruction set with RESIDUAL_NAME set to the function's name.
 *
 * Each sum keeps eight partial sums in a vector of eight doubles (GCC's
 * vector extension: one AVX-512 register, two AVX2 ones, four SSE2 ones),
 * element i in lane i mod 8 (the tail's elements in lanes 0, 1, ..), added
 * in one fixed order at the end. Every term is a product of two floats,
 * exact in double, so a fused multiply-add rounds as a multiply then an add
 * does: every build gives the scalar build's bits. The stream's new value is
 * the float sum x + o, as PyTorch adds. Contract in nn_kernels.h. */
#include <string.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/nn_kernels.h"

#define LANES 8
typedef double v8d __attribute__((vector_size(LANES * sizeof(double))));
typedef float v8f __attribute__((vector_size(LANES * sizeof(float))));

static inline v8f load8(const float *p)
{
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* float to double, lane by lane: one instruction where there is one (GCC
   splits the generic conversion into halves) */
static inline v8d widen(v8f v)
{
#if defined(__AVX512F__)
    return (v8d)_mm512_cvtps_pd((__m256)v);
#else
    return __builtin_convertvector(v, v8d);
#endif
}

static inline double total8(v8d acc, const double tail[LANES])
{
    double a[LANES];
    memcpy(a, &acc, sizeof a);
    for (int l = 0; l < LANES; l++)
        a[l] += tail[l];
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

static void residual_sums(float *x, const float *o, const float *h, const float *f, size_t n,
                          int add, double *s)
{
    v8d xx = {0}, oo = {0}, xo = {0}, hh = {0}, ff = {0}, yy = {0};
    size_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        const v8f xf = load8(x + i), of = load8(o + i);
        const v8d xv = widen(xf), ov = widen(of);
        const v8d hv = widen(load8(h + i)), fv = widen(load8(f + i));
        xx += xv * xv;
        oo += ov * ov;
        xo += xv * ov;
        hh += hv * hv;
        ff += fv * fv;
        if (add) {
            const v8f y = xf + of;
            memcpy(x + i, &y, sizeof y);
            const v8d yv = widen(y);
            yy += yv * yv;
        }
    }
    double txx[LANES] = {0}, too[LANES] = {0}, txo[LANES] = {0}, thh[LANES] = {0},
           tff[LANES] = {0}, tyy[LANES] = {0};
    for (int l = 0; i < n; i++, l++) {
        const double xi = x[i], oi = o[i], hi = h[i], fi = f[i];
        txx[l] = xi * xi;
        too[l] = oi * oi;
        txo[l] = xi * oi;
        thh[l] = hi * hi;
        tff[l] = fi * fi;
        if (add) {
            x[i] = x[i] + o[i];
            tyy[l] = (double)x[i] * x[i];
        }
    }
    s[VP_RESIDUAL_XX_BEFORE] = total8(xx, txx);
    s[VP_RESIDUAL_OO] = total8(oo, too);
    s[VP_RESIDUAL_XO] = total8(xo, txo);
    s[VP_RESIDUAL_HH] = total8(hh, thh);
    s[VP_RESIDUAL_FF] = total8(ff, tff);
    if (add)
        s[VP_RESIDUAL_XX] = total8(yy, tyy);
}

void RESIDUAL_NAME(float *x, const float *o, const float *h, const float *f, size_t n, int add,
                   double *sums)
{
    // x, o, h, f: (n); sums: (VP_RESIDUAL_SUMS)
    /* two instances, so that the add's test leaves the loop */
    if (add)
        residual_sums(x, o, h, f, n, 1, sums);
    else
        residual_sums(x, o, h, f, n, 0, sums);
}
