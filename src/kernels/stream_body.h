/* The stream's steps in double: Post-LN's x = norm(alpha x + o), its
 * scaled sum and the norm's application, and |v|^2, included once per
 * instruction set with KERN_ISA set to its suffix (kern_variants.h). Each
 * element is the same few IEEE double operations, none fused
 * (-ffp-contract=off, the Makefile), so every build gives the scalar
 * build's bits; only the width of the vectors differs. The Post-LN steps
 * were loops of the baseline build, two doubles an instruction, a visible
 * share of a Post-LN training run. Contract in kern_list.h. */
#include <string.h>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/kern_variants.h"

void KERN_FN(kern_scale_add)(float *out, const float *x, const float *o, size_t n, double alpha)
{
    // x, o, out: (n)
    if (alpha == 1.0) {
        /* Post-LN's: 1 x is x, and a sum of two floats rounded to double
           and then to float is their float sum (double has the 2 x 24 + 2
           bits that make the second rounding harmless), so float lanes,
           twice as many a vector, give the same bits */
        if (o == NULL) {
            if (out != x)
                memmove(out, x, n * sizeof *out);
            return;
        }
        for (size_t i = 0; i < n; i++)
            out[i] = x[i] + o[i];
        return;
    }
    if (o == NULL) {
        for (size_t i = 0; i < n; i++)
            out[i] = (float)(alpha * x[i]);
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = (float)(alpha * x[i] + o[i]);
}

void KERN_FN(kern_norm_apply)(float *x, const float *restrict weight, const float *restrict bias,
                              size_t d, double mean, double inv)
{
    // x, weight, bias: (d)
    if (bias == NULL) { /* + 0.0 all the same: -0 becomes +0, as with a bias of zeros */
        for (size_t i = 0; i < d; i++)
            x[i] = (float)((x[i] - mean) * inv * weight[i] + 0.0);
        return;
    }
    for (size_t i = 0; i < d; i++)
        x[i] = (float)((x[i] - mean) * inv * weight[i] + bias[i]);
}

/* Four doubles: one AVX register, two SSE ones. */
typedef double stream_v4d __attribute__((vector_size(32)));

static inline stream_v4d widen4(const float *p)
{
#if defined(__AVX2__) || defined(__AVX512F__)
    return (stream_v4d)_mm256_cvtps_pd(_mm_loadu_ps(p));
#else
    return (stream_v4d){p[0], p[1], p[2], p[3]};
#endif
}

double KERN_FN(kern_square_sum)(const float *v, size_t n)
{
    // v: (n)
    /* four lanes, not the residual's eight: the sums the forward pass has
       always made, element i in lane i mod 4. The square of a float is
       exact in double, so squaring apart and then adding rounds as a fused
       multiply-add does, and takes the multiply out of each lane's chain
       of dependent adds: on Zen 5 an add waits 2 cycles, an FMA 4. */
    stream_v4d acc = {0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const stream_v4d a = widen4(v + i), square = a * a;
        acc += square;
    }
    for (int l = 0; i < n; i++, l++)
        acc[l] += (double)v[i] * v[i];
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* Eight doubles: one AVX-512 register, two AVX ones, four SSE ones. */
typedef double stream_v8d __attribute__((vector_size(64)));

static inline stream_v8d widen8(const float *p)
{
#if defined(__AVX512F__)
    return (stream_v8d)_mm512_cvtps_pd(_mm256_loadu_ps(p));
#else
    const stream_v4d lo = widen4(p), hi = widen4(p + 4);
    return (stream_v8d){lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]};
#endif
}

double KERN_FN(kern_square_sum_wide)(const float *v, size_t n)
{
    // v: (n)
    /* 32 lanes, element i in lane i mod 32: four vector
       chains of dependent adds side by side, where square_sum's four lanes
       are one chain, an add every 2 cycles for four floats (0.55 cycles a
       float on Zen 5). Then the lanes pairwise, 16 apart, 8, .., 1. */
    enum { LANES = 32 };
    stream_v8d acc[LANES / 8] = {{0}};
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int g = 0; g < LANES / 8; g++) {
            const stream_v8d a = widen8(v + i + 8 * g), square = a * a;
            acc[g] += square;
        }
    double lane[LANES];
    memcpy(lane, acc, sizeof lane);
    for (int l = 0; i < n; i++, l++)
        lane[l] += (double)v[i] * v[i];
    for (int half = LANES / 2; half >= 1; half /= 2)
        for (int l = 0; l < half; l++)
            lane[l] += lane[l + half];
    return lane[0];
}
