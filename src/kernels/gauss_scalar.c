/* The Gaussian generator's scalar reference: the specification every SIMD
 * variant is tested against, and the fallback on any CPU.
 *
 * Draw i of stream (seed, token, sub_block) is output i % 4 of block i / 4;
 * a block is one Philox4x32-10 call turned into four normals by Box-Muller.
 * All arithmetic is float, with fmaf wherever the SIMD files use an FMA, so
 * that each operation rounds the same way in every variant. */
#include <math.h>
#include <string.h>

#include <Random123/philox.h>

#include "kernels/gauss_internal.h"
#include "kernels/kern_variants.h"

static uint32_t float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Two's-complement reinterpretation without implementation-defined casts. */
static int32_t as_int32(uint32_t u)
{
    return u < 0x80000000u ? (int32_t)u : -(int32_t)(~u) - 1;
}

/* log(u) for u in [2^-32, 1] (normal, positive), about 1 ulp. */
static float gauss_log(float u)
{
    /* Shift the exponent boundary so that m lands in [sqrt(1/2), sqrt(2)):
     * log(m) then stays small and keeps its relative accuracy. */
    uint32_t ix = float_bits(u) + (GAUSS_ONE_BITS - GAUSS_SQRT_HALF_BITS);
    float e = (float)((int32_t)(ix >> 23) - 127);
    float m = bits_float((ix & 0x007fffffu) + GAUSS_SQRT_HALF_BITS);
    float f = m - 1.0f; /* exact (Sterbenz) */
    float s = f / (2.0f + f);
    float z = s * s;
    float r = fmaf(fmaf(fmaf(GAUSS_LOG_C4, z, GAUSS_LOG_C3), z, GAUSS_LOG_C2), z, GAUSS_LOG_C1);
    r = r * z;
    float hfsq = (0.5f * f) * f;
    /* The division's rounding only reaches the small correction s*(hfsq+r),
     * not the leading f. */
    float lo = fmaf(s, hfsq + r, fmaf(e, GAUSS_LN2_LO, -hfsq));
    return fmaf(e, GAUSS_LN2_HI, lo + f);
}

/* sin(2 pi t / 2^32) and cos of the same, about 1 ulp. The quadrant nearest
 * the angle comes from the top bits of t and the residual from the rest, in
 * integers, so the reduction is exact. */
static void gauss_sincos_turn(uint32_t t, float *sin_out, float *cos_out)
{
    uint32_t q = ((t + 0x20000000u) >> 30) & 3u; /* angle = q*pi/2 + pi/4*x */
    float x = (float)as_int32(t << 2) * GAUSS_ANGLE_SCALE;
    float x2 = x * x;
    float ps =
        fmaf(fmaf(fmaf(fmaf(GAUSS_SIN_S9, x2, GAUSS_SIN_S7), x2, GAUSS_SIN_S5), x2, GAUSS_SIN_S3),
             x2, GAUSS_SIN_S1);
    float s = ps * x;
    float c = fmaf(
        fmaf(fmaf(fmaf(fmaf(GAUSS_COS_C10, x2, GAUSS_COS_C8), x2, GAUSS_COS_C6), x2, GAUSS_COS_C4),
             x2, GAUSS_COS_C2),
        x2, 1.0f);
    /* q = 0: (c, s); 1: (-s, c); 2: (-c, -s); 3: (s, -c), as (cos, sin). */
    float cos_v = (q & 1u) ? s : c;
    float sin_v = (q & 1u) ? c : s;
    *cos_out = bits_float(float_bits(cos_v) ^ (((q + 1u) & 2u) << 30));
    *sin_out = bits_float(float_bits(sin_v) ^ ((q & 2u) << 30));
}

/* Two normals from two uniform words: radius from r_radius, angle from
 * r_angle. */
static void gauss_box_muller(uint32_t r_radius, uint32_t r_angle, float *z_cos, float *z_sin)
{
    /* u in [2^-32, 1]: never 0, so log(u) is finite. AVX2 has no unsigned
     * int -> float conversion, hence the shift to 31 bits. */
    float u = fmaf((float)as_int32(r_radius >> 1), GAUSS_U_SCALE, GAUSS_U_OFFSET);
    float radius = sqrtf(-2.0f * gauss_log(u));
    float s, c;
    gauss_sincos_turn(r_angle, &s, &c);
    *z_cos = radius * c;
    *z_sin = radius * s;
}

/* Draws 4*block .. 4*block+3 into out4[0..4). */
static void gauss_block(float out4[4], uint64_t seed, uint32_t token, uint32_t sub_block,
                        uint64_t block)
{
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t ctr = {{(uint32_t)block, (uint32_t)(block >> 32), token, sub_block}};
    philox4x32_ctr_t r = philox4x32(ctr, key);
    gauss_box_muller(r.v[0], r.v[1], &out4[0], &out4[1]);
    gauss_box_muller(r.v[2], r.v[3], &out4[2], &out4[3]);
}

void kern_gauss_fill_scalar(float *out, size_t n, uint64_t seed, uint32_t token, uint32_t sub_block,
                            uint64_t first)
{
    // out: (n,), draws first .. first+n-1
    size_t done = 0;
    while (done < n) {
        uint64_t i = first + done;
        uint64_t block = i / 4;
        size_t skip = (size_t)(i % 4);
        float four[4];
        gauss_block(four, seed, token, sub_block, block);
        size_t take = 4 - skip < n - done ? 4 - skip : n - done;
        memcpy(out + done, four + skip, take * sizeof *out);
        done += take;
    }
}

void kern_gauss_panel_scalar(float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed,
                             uint32_t token, uint32_t sub_block, uint64_t first,
                             uint64_t row_stride, double scale)
{
    // panel: (kc, nr); column c < rows holds draws first + c row_stride .. + kc - 1
    for (size_t c = 0; c < nr; c++)
        for (size_t g = 0; g < kc / 4; g++) {
            float four[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            if (c < rows)
                gauss_block(four, seed, token, sub_block, (first + c * row_stride) / 4 + g);
            for (size_t j = 0; j < 4; j++)
                panel[(4 * g + j) * nr + c] = c < rows ? (float)(scale * four[j]) : 0.0f;
        }
}

void kern_uniform_panel_scalar(float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed,
                               uint32_t stream, uint32_t word, uint64_t first, uint64_t row_stride,
                               double bound, double factor)
{
    // panel: (kc, nr); column c < rows holds uniforms first + c row_stride .. + kc - 1
    const philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    for (size_t c = 0; c < nr; c++)
        for (size_t g = 0; g < kc / 4; g++) {
            const uint64_t block = (first + c * row_stride) / 4 + g;
            const philox4x32_ctr_t ctr = {{stream, word, (uint32_t)block, (uint32_t)(block >> 32)}};
            const philox4x32_ctr_t r = philox4x32(ctr, key);
            for (size_t j = 0; j < 4; j++) {
                const double u = ((double)r.v[j] + 0.5) * 0x1p-32;
                float v = (float)((2.0 * u - 1.0) * bound);
                if (factor != 1.0)
                    v = (float)(factor * v);
                panel[(4 * g + j) * nr + c] = c < rows ? v : 0.0f;
            }
        }
}
