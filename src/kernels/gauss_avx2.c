/* The Gaussian generator with AVX2 + FMA: Philox4x32-10 on 8 counters at once,
 * then Box-Muller on vectors, the same operations in the same order as
 * gauss_scalar.c (the specification). Compiled with -mavx2 -mfma; called only
 * when vp_isa_supported(VP_ISA_AVX2). */
#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#include "kernels/gauss_internal.h"
#include "kernels/kern_variants.h"

#define BLOCKS 8             /* Philox blocks per vector pass, one per lane */
#define DRAWS (4 * BLOCKS)   /* normals per vector pass */

typedef struct {
    __m256i key0[GAUSS_PHILOX_ROUNDS]; /* the round keys, broadcast */
    __m256i key1[GAUSS_PHILOX_ROUNDS];
    __m256i token;
    __m256i sub_block;
} philox8_setup;

/* 32x32 -> 64 products of every lane with m: the high halves returned, the
 * low halves in *lo. mul_epu32 multiplies the even lanes only; the odd ones
 * are shifted down for a second multiply. */
static inline __m256i mulhilo8(__m256i a, __m256i m, __m256i *lo)
{
    __m256i even = _mm256_mul_epu32(a, m);
    __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

static void philox8(__m256i c[4], const philox8_setup *setup)
{
    const __m256i m0 = _mm256_set1_epi32((int)GAUSS_PHILOX_M0);
    const __m256i m1 = _mm256_set1_epi32((int)GAUSS_PHILOX_M1);
    for (int r = 0; r < GAUSS_PHILOX_ROUNDS; r++) {
        __m256i lo0, lo1;
        __m256i hi0 = mulhilo8(c[0], m0, &lo0);
        __m256i hi1 = mulhilo8(c[2], m1, &lo1);
        c[0] = _mm256_xor_si256(_mm256_xor_si256(hi1, c[1]), setup->key0[r]);
        c[1] = lo1;
        c[2] = _mm256_xor_si256(_mm256_xor_si256(hi0, c[3]), setup->key1[r]);
        c[3] = lo0;
    }
}

static inline __m256 gauss_log8(__m256 u)
{
    __m256i ix = _mm256_add_epi32(_mm256_castps_si256(u),
                                  _mm256_set1_epi32((int)(GAUSS_ONE_BITS - GAUSS_SQRT_HALF_BITS)));
    __m256 e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(ix, 23), _mm256_set1_epi32(127)));
    __m256 m = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_and_si256(ix, _mm256_set1_epi32(0x007fffff)),
                                                    _mm256_set1_epi32((int)GAUSS_SQRT_HALF_BITS)));
    __m256 f = _mm256_sub_ps(m, _mm256_set1_ps(1.0f));
    __m256 s = _mm256_div_ps(f, _mm256_add_ps(_mm256_set1_ps(2.0f), f));
    __m256 z = _mm256_mul_ps(s, s);
    __m256 r = _mm256_fmadd_ps(_mm256_set1_ps(GAUSS_LOG_C4), z, _mm256_set1_ps(GAUSS_LOG_C3));
    r = _mm256_fmadd_ps(r, z, _mm256_set1_ps(GAUSS_LOG_C2));
    r = _mm256_fmadd_ps(r, z, _mm256_set1_ps(GAUSS_LOG_C1));
    r = _mm256_mul_ps(r, z);
    __m256 hfsq = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), f), f);
    __m256 lo = _mm256_fmadd_ps(s, _mm256_add_ps(hfsq, r),
                                _mm256_fmsub_ps(e, _mm256_set1_ps(GAUSS_LN2_LO), hfsq));
    return _mm256_fmadd_ps(e, _mm256_set1_ps(GAUSS_LN2_HI), _mm256_add_ps(lo, f));
}

static inline void gauss_sincos_turn8(__m256i t, __m256 *sin_out, __m256 *cos_out)
{
    __m256i q = _mm256_srli_epi32(_mm256_add_epi32(t, _mm256_set1_epi32(0x20000000)), 30);
    __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_slli_epi32(t, 2)),
                             _mm256_set1_ps(GAUSS_ANGLE_SCALE));
    __m256 x2 = _mm256_mul_ps(x, x);
    __m256 ps = _mm256_fmadd_ps(_mm256_set1_ps(GAUSS_SIN_S9), x2, _mm256_set1_ps(GAUSS_SIN_S7));
    ps = _mm256_fmadd_ps(ps, x2, _mm256_set1_ps(GAUSS_SIN_S5));
    ps = _mm256_fmadd_ps(ps, x2, _mm256_set1_ps(GAUSS_SIN_S3));
    ps = _mm256_fmadd_ps(ps, x2, _mm256_set1_ps(GAUSS_SIN_S1));
    __m256 s = _mm256_mul_ps(ps, x);
    __m256 c = _mm256_fmadd_ps(_mm256_set1_ps(GAUSS_COS_C10), x2, _mm256_set1_ps(GAUSS_COS_C8));
    c = _mm256_fmadd_ps(c, x2, _mm256_set1_ps(GAUSS_COS_C6));
    c = _mm256_fmadd_ps(c, x2, _mm256_set1_ps(GAUSS_COS_C4));
    c = _mm256_fmadd_ps(c, x2, _mm256_set1_ps(GAUSS_COS_C2));
    c = _mm256_fmadd_ps(c, x2, _mm256_set1_ps(1.0f));
    const __m256i one = _mm256_set1_epi32(1), two = _mm256_set1_epi32(2);
    __m256 swap = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(q, one), one));
    __m256 cos_v = _mm256_blendv_ps(c, s, swap);
    __m256 sin_v = _mm256_blendv_ps(s, c, swap);
    __m256i cos_sign = _mm256_slli_epi32(_mm256_and_si256(_mm256_add_epi32(q, one), two), 30);
    __m256i sin_sign = _mm256_slli_epi32(_mm256_and_si256(q, two), 30);
    *cos_out = _mm256_xor_ps(cos_v, _mm256_castsi256_ps(cos_sign));
    *sin_out = _mm256_xor_ps(sin_v, _mm256_castsi256_ps(sin_sign));
}

static inline void gauss_box_muller8(__m256i r_radius, __m256i r_angle, __m256 *z_cos,
                                     __m256 *z_sin)
{
    __m256 u = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(r_radius, 1)),
                               _mm256_set1_ps(GAUSS_U_SCALE), _mm256_set1_ps(GAUSS_U_OFFSET));
    __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), gauss_log8(u)));
    __m256 s, c;
    gauss_sincos_turn8(r_angle, &s, &c);
    *z_cos = _mm256_mul_ps(radius, c);
    *z_sin = _mm256_mul_ps(radius, s);
}

/* Draws 4*block .. 4*block + DRAWS - 1 into dst[0..DRAWS). */
static void gauss_pass8(float *dst, const philox8_setup *setup, uint64_t block)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i lo = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)block), iota);
    /* A lane whose low word wrapped (lo < iota, unsigned) carries into the
     * high word: the no-carry mask is all ones, so hi - ~mask adds 1. */
    __m256i no_carry = _mm256_cmpeq_epi32(_mm256_max_epu32(lo, iota), lo);
    __m256i carry = _mm256_xor_si256(no_carry, _mm256_set1_epi32(-1));
    __m256i hi = _mm256_sub_epi32(_mm256_set1_epi32((int)(uint32_t)(block >> 32)), carry);
    __m256i c[4] = {lo, hi, setup->token, setup->sub_block};
    philox8(c, setup);

    // z0..z3: (BLOCKS,), draw 4*k + j of the pass in lane k of zj
    __m256 z0, z1, z2, z3;
    gauss_box_muller8(c[0], c[1], &z0, &z1);
    gauss_box_muller8(c[2], c[3], &z2, &z3);
    /* Transpose to draw order: within each 128-bit half, then the halves. */
    __m256 t0 = _mm256_unpacklo_ps(z0, z1), t1 = _mm256_unpackhi_ps(z0, z1);
    __m256 t2 = _mm256_unpacklo_ps(z2, z3), t3 = _mm256_unpackhi_ps(z2, z3);
    __m256 b0 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    __m256 b1 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
    __m256 b2 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    __m256 b3 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
    _mm256_storeu_ps(dst + 0, _mm256_permute2f128_ps(b0, b1, 0x20));
    _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(b2, b3, 0x20));
    _mm256_storeu_ps(dst + 16, _mm256_permute2f128_ps(b0, b1, 0x31));
    _mm256_storeu_ps(dst + 24, _mm256_permute2f128_ps(b2, b3, 0x31));
}

void kern_gauss_fill_avx2(float *out, size_t n, uint64_t seed, uint32_t token,
                          uint32_t sub_block, uint64_t first)
{
    // out: (n,), draws first .. first+n-1
    philox8_setup setup;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < GAUSS_PHILOX_ROUNDS; r++) {
        setup.key0[r] = _mm256_set1_epi32((int)k0);
        setup.key1[r] = _mm256_set1_epi32((int)k1);
        k0 += GAUSS_PHILOX_W0;
        k1 += GAUSS_PHILOX_W1;
    }
    setup.token = _mm256_set1_epi32((int)token);
    setup.sub_block = _mm256_set1_epi32((int)sub_block);

    uint64_t block = first / 4;
    size_t skip = (size_t)(first % 4);
    size_t done = 0;
    while (done < n) {
        if (skip == 0 && n - done >= DRAWS) {
            gauss_pass8(out + done, &setup, block);
            done += DRAWS;
        } else {
            /* A ragged start or end: a whole pass into a buffer, then the
             * part wanted, so every draw comes from the same vector code. */
            float pass[DRAWS];
            gauss_pass8(pass, &setup, block);
            size_t take = DRAWS - skip < n - done ? DRAWS - skip : n - done;
            memcpy(out + done, pass + skip, take * sizeof *out);
            done += take;
            skip = 0;
        }
        block += BLOCKS;
    }
}

#else
/* Not x86-64: nothing to compile, but ISO C wants a declaration. */
typedef int kern_gauss_avx2_unavailable;
#endif
