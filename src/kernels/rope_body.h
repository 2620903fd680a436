/* Rotary position embedding (kern_table.h's rope), written once: the scalar
 * loop is the specification and does the pairs a vector leaves over; after a
 * mapping header (simd_avx2.h, simd_avx512.h) the same operations run
 * SIMD_W pairs at a time first. Each result is two correctly rounded float
 * products and their rounded sum or difference, none fused (the kernels are
 * compiled -ffp-contract=off): every variant gives the scalar one's bits.
 * Included once per set with KERN_ISA set (kern_variants.h). */
#include "kernels/kern_variants.h"

/* One head's hd coordinates at one position: the pairs (i, i + half). */
static inline void KERN_FN(rope_head)(float *restrict x, const float *restrict cos_t,
                                      const float *restrict sin_t, size_t half, float sign)
{
    float *restrict lo = x, *restrict hi = x + half;
    size_t i = 0;
#ifdef SIMD_W
    const vf sign_v = vf_set1(sign);
    for (; i + SIMD_W <= half; i += SIMD_W) {
        const vf c = vf_load(cos_t + i), s = vf_mul(vf_load(sin_t + i), sign_v);
        const vf a = vf_load(lo + i), b = vf_load(hi + i);
        vf_store(lo + i, vf_sub(vf_mul(a, c), vf_mul(b, s)));
        vf_store(hi + i, vf_add(vf_mul(b, c), vf_mul(a, s)));
    }
#endif
    for (; i < half; i++) {
        const float c = cos_t[i], s = sin_t[i] * sign;
        const float a = lo[i], b = hi[i];
        lo[i] = a * c - b * s;
        hi[i] = b * c + a * s;
    }
}

void KERN_FN(kern_rope)(float *x, size_t ld, const float *cos_t, const float *sin_t, size_t n,
                        size_t H, size_t hd, int inverse)
{
    // x: (n, H * hd) with row stride ld; cos_t, sin_t: (n, hd / 2)
    const size_t half = hd / 2;
    /* sin_t negated is the inverse rotation: exact, so the bits stay the scalar's */
    const float sign = inverse ? -1.0f : 1.0f;
    for (size_t r = 0; r < n; r++)
        for (size_t h = 0; h < H; h++)
            KERN_FN(rope_head)(x + r * ld + h * hd, cos_t + r * half, sin_t + r * half, half, sign);
}

/* The interleaved pairs (2i, 2i + 1): strided, so one scalar loop in every
   set, whose bits are the scalar set's by construction. */
void KERN_FN(kern_rope_interleaved)(float *x, size_t ld, const float *cos_t, const float *sin_t,
                                    size_t n, size_t H, size_t hd, int inverse)
{
    // x: (n, H * hd) with row stride ld; cos_t, sin_t: (n, hd / 2)
    const size_t half = hd / 2;
    const float sign = inverse ? -1.0f : 1.0f;
    for (size_t r = 0; r < n; r++)
        for (size_t h = 0; h < H; h++) {
            float *restrict p = x + r * ld + h * hd;
            const float *restrict c_t = cos_t + r * half, *restrict s_t = sin_t + r * half;
            for (size_t i = 0; i < half; i++) {
                const float c = c_t[i], s = s_t[i] * sign;
                const float a = p[2 * i], b = p[2 * i + 1];
                p[2 * i] = a * c - b * s;
                p[2 * i + 1] = b * c + a * s;
            }
        }
}
