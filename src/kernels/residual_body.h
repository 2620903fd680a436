/* The residual update and the sums the forward pass measures (the residual
 * kernel and |v|^2), included once per instruction set with KERN_ISA set to
 * its suffix (kern_variants.h).
 *
 * Each sum keeps eight partial sums in eight lanes of double (GCC's vector
 * extension: one AVX-512 register, two AVX2 ones, four SSE2 ones), element
 * i in lane i mod 8 (the tail's elements in lanes 0, 1, ..), added
 * in one fixed order at the end. Every term is a product of two floats,
 * exact in double, so a fused multiply-add rounds as a multiply then an add
 * does: every build gives the scalar build's bits. The stream's new value is
 * the float sum x + o, as PyTorch adds. Contract in kern_list.h. */
#include <string.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/kern_variants.h"

#define LANES 8
typedef double v8d __attribute__((vector_size(LANES * sizeof(double))));
typedef double v4d __attribute__((vector_size(4 * sizeof(double))));
typedef float v8f __attribute__((vector_size(LANES * sizeof(float))));
typedef float v4f __attribute__((vector_size(4 * sizeof(float))));

static inline v8f load8(const float *p)
{
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Eight lanes of double: one AVX-512 register, or two vectors of four
   (lanes 0-3 and 4-7; an AVX register each, two SSE2 ones), because
   without AVX-512 GCC takes a generic vector of eight doubles through
   memory. */
#if defined(__AVX512F__)
typedef struct {
    v8d v;
} lanes;

static inline lanes widen(v8f v)
{
    return (lanes){(v8d)_mm512_cvtps_pd((__m256)v)};
}

static inline lanes add_product(lanes acc, lanes a, lanes b)
{
    return (lanes){acc.v + a.v * b.v};
}

static inline void lanes_store(double *out, lanes a)
{
    memcpy(out, &a.v, sizeof a.v);
}
#else
typedef struct {
    v4d lo, hi;
} lanes;

static inline lanes widen(v8f v)
{
    return (lanes){__builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3), v4d),
                   __builtin_convertvector(__builtin_shufflevector(v, v, 4, 5, 6, 7), v4d)};
}

static inline lanes add_product(lanes acc, lanes a, lanes b)
{
    return (lanes){acc.lo + a.lo * b.lo, acc.hi + a.hi * b.hi};
}

static inline void lanes_store(double *out, lanes a)
{
    memcpy(out, &a.lo, sizeof a.lo);
    memcpy(out + 4, &a.hi, sizeof a.hi);
}
#endif

static inline double total8(lanes acc, const double tail[LANES])
{
    double a[LANES];
    lanes_store(a, acc);
    for (int l = 0; l < LANES; l++)
        a[l] += tail[l];
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

static void residual_sums(float *x, const float *o, const float *h, const float *f, size_t n,
                          int add, double *s)
{
    /* h = x and f = o (the branch reads the stream; nothing normalises its
       output) share x's and o's sums: the same terms in the same order */
    const int own_h = h != x, own_f = f != o;
    const lanes zero = widen((v8f){0});
    lanes xx = zero, oo = zero, xo = zero, hh = zero, ff = zero, yy = zero;
    size_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        const v8f xf = load8(x + i), of = load8(o + i);
        const lanes xv = widen(xf), ov = widen(of);
        xx = add_product(xx, xv, xv);
        oo = add_product(oo, ov, ov);
        xo = add_product(xo, xv, ov);
        if (own_h) {
            const lanes hv = widen(load8(h + i));
            hh = add_product(hh, hv, hv);
        }
        if (own_f) {
            const lanes fv = widen(load8(f + i));
            ff = add_product(ff, fv, fv);
        }
        if (add) {
            const v8f y = xf + of;
            memcpy(x + i, &y, sizeof y);
            const lanes yv = widen(y);
            yy = add_product(yy, yv, yv);
        }
    }
    double txx[LANES] = {0}, too[LANES] = {0}, txo[LANES] = {0}, thh[LANES] = {0}, tff[LANES] = {0},
           tyy[LANES] = {0};
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
    s[KERN_RESIDUAL_XX_BEFORE] = total8(xx, txx);
    s[KERN_RESIDUAL_OO] = total8(oo, too);
    s[KERN_RESIDUAL_XO] = total8(xo, txo);
    s[KERN_RESIDUAL_HH] = own_h ? total8(hh, thh) : s[KERN_RESIDUAL_XX_BEFORE];
    s[KERN_RESIDUAL_FF] = own_f ? total8(ff, tff) : s[KERN_RESIDUAL_OO];
    if (add)
        s[KERN_RESIDUAL_XX] = total8(yy, tyy);
}

void KERN_FN(kern_residual)(float *x, const float *o, const float *h, const float *f, size_t n,
                            int add, double *sums)
{
    // x, o, h, f: (n); sums: (KERN_RESIDUAL_SUMS)
    /* two instances, so that the add's test leaves the loop */
    if (add)
        residual_sums(x, o, h, f, n, 1, sums);
    else
        residual_sums(x, o, h, f, n, 0, sums);
}
