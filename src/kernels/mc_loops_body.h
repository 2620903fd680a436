/* The body of the Monte Carlo's loops, included once per instruction set with
 * KERN_ISA set to its suffix (kern_variants.h); contracts in kern_list.h.
 * Each reduction keeps eight partial sums in a vector of eight doubles (GCC's
 * vector extension: one AVX-512 register, two AVX2 ones, four SSE2 ones) and
 * adds them in one fixed order, and no multiply-add is fused: every build
 * gives the scalar build's bits. */
#include <string.h>

#include "kernels/kern_variants.h"

#define LANES 8
typedef double v8d __attribute__((vector_size(LANES * sizeof(double))));
typedef float v8f __attribute__((vector_size(LANES * sizeof(float))));

static inline v8d load_f(const float *p)
{
    v8f v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, v8d);
}

static inline v8d load_d(const double *p)
{
    v8d v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store_d(double *p, v8d v)
{
    memcpy(p, &v, sizeof v);
}

/* Adds the tail's terms to the lanes they would have had, then the lanes. */
static inline double mc_total(v8d acc, const double tail[LANES])
{
    double a[LANES];
    memcpy(a, &acc, sizeof a);
    for (int l = 0; l < LANES; l++)
        a[l] += tail[l];
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

void KERN_FN(kern_mc_noise_sums)(double *out, const double *restrict x, const float *restrict xi,
                                 size_t d)
{
    v8d s1 = {0}, sx = {0}, ss = {0};
    size_t i = 0;
    for (; i + LANES <= d; i += LANES) {
        v8d v = load_f(xi + i);
        s1 += v;
        sx += load_d(x + i) * v;
        ss += v * v;
    }
    double t1[LANES] = {0}, tx[LANES] = {0}, ts[LANES] = {0};
    for (int l = 0; i < d; i++, l++) {
        double v = xi[i];
        t1[l] = v;
        tx[l] = x[i] * v;
        ts[l] = v * v;
    }
    out[0] = mc_total(s1, t1);
    out[1] = mc_total(sx, tx);
    out[2] = mc_total(ss, ts);
}

double KERN_FN(kern_mc_add_branch)(double *restrict x, double *out, const float *restrict xi,
                                   size_t d, double alpha, double a, double b)
{
    v8d oo = {0}, xx = {0}, x1 = {0};
    size_t i = 0;
    for (; i + LANES <= d; i += LANES) {
        v8d o = a * load_f(xi + i) + b;
        v8d y = alpha * load_d(x + i) + o;
        store_d(x + i, y);
        oo += o * o;
        xx += y * y;
        x1 += y;
    }
    double to[LANES] = {0}, tx[LANES] = {0}, t1[LANES] = {0};
    for (int l = 0; i < d; i++, l++) {
        double o = a * xi[i] + b;
        double y = alpha * x[i] + o;
        x[i] = y;
        to[l] = o * o;
        tx[l] = y * y;
        t1[l] = y;
    }
    out[0] = mc_total(xx, tx);
    out[1] = mc_total(x1, t1);
    return mc_total(oo, to);
}

double KERN_FN(kern_mc_add_and_normalise)(double *restrict x, double *restrict c, double *out,
                                          const float *restrict xi, size_t d, double alpha,
                                          double a, double b, double shift, double scale,
                                          double c_shift)
{
    v8d oo = {0}, xx = {0}, x1 = {0}, cc = {0}, c1 = {0};
    size_t i = 0;
    for (; i + LANES <= d; i += LANES) {
        v8d o = a * load_f(xi + i) + b;
        v8d y = ((alpha * load_d(x + i) + o) - shift) * scale;
        v8d e = (alpha * load_d(c + i) - c_shift) * scale;
        store_d(x + i, y);
        store_d(c + i, e);
        oo += o * o;
        xx += y * y;
        x1 += y;
        cc += e * e;
        c1 += e;
    }
    double to[LANES] = {0}, tx[LANES] = {0}, t1[LANES] = {0}, tc[LANES] = {0}, te[LANES] = {0};
    for (int l = 0; i < d; i++, l++) {
        double o = a * xi[i] + b;
        double y = ((alpha * x[i] + o) - shift) * scale;
        double e = (alpha * c[i] - c_shift) * scale;
        x[i] = y;
        c[i] = e;
        to[l] = o * o;
        tx[l] = y * y;
        t1[l] = y;
        tc[l] = e * e;
        te[l] = e;
    }
    out[0] = mc_total(xx, tx);
    out[1] = mc_total(x1, t1);
    out[2] = mc_total(cc, tc);
    out[3] = mc_total(c1, te);
    return mc_total(oo, to);
}
