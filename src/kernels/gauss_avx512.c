/* The Gaussian generator with AVX-512: Philox4x32-10 on 2 x 16 counters at once,
 * then Box-Muller on vectors, the same operations in the same order as
 * gauss_scalar.c (the specification). Compiled with -mavx512f -mavx512dq
 * -mavx512vl -mavx512bw -mfma; called only when
 * vp_isa_supported(VP_ISA_AVX512). */
#if defined(__x86_64__)

#include <immintrin.h>
#include <string.h>

#include "kernels/gauss_internal.h"
#include "kernels/kern_variants.h"

#define BLOCKS 16            /* Philox blocks per vector pass, one per lane */
#define DRAWS (4 * BLOCKS)   /* normals per set of counters */
#define PASS (2 * DRAWS)     /* normals per pass: two sets, interleaved */

typedef struct {
    __m512i key0[GAUSS_PHILOX_ROUNDS]; /* the round keys, broadcast */
    __m512i key1[GAUSS_PHILOX_ROUNDS];
    __m512i token;
    __m512i sub_block;
} philox16_setup;

#define ODD_LANES ((__mmask16)0xAAAA)
#define EVEN_LANES ((__mmask16)0x5555)
#define XOR3 0x96 /* ternary-logic table of a ^ b ^ c */

/* 32x32 -> 64 products of every lane with m: the high halves returned, the
 * low halves in *lo. mul_epu32 multiplies the even lanes only; the odd ones
 * are shifted down for a second multiply. A masked shuffle then moves the
 * wanted half of each product into its lane, one instruction per result. */
static inline __m512i mulhilo16(__m512i a, __m512i m, __m512i *lo)
{
    __m512i even = _mm512_mul_epu32(a, m);  /* 64-bit products of lanes 0, 2, .. */
    __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);  /* of lanes 1, 3, .. */
    /* lo: odd lanes take the low word of odd's product (element 0 of each pair) */
    *lo = _mm512_mask_shuffle_epi32(even, ODD_LANES, odd, _MM_PERM_CCAA);
    /* hi: even lanes take the high word of even's product (element 1) */
    return _mm512_mask_shuffle_epi32(odd, EVEN_LANES, even, _MM_PERM_DDBB);
}

static void philox16(__m512i c[4], const philox16_setup *setup)
{
    const __m512i m0 = _mm512_set1_epi32((int)GAUSS_PHILOX_M0);
    const __m512i m1 = _mm512_set1_epi32((int)GAUSS_PHILOX_M1);
    for (int r = 0; r < GAUSS_PHILOX_ROUNDS; r++) {
        __m512i lo0, lo1;
        __m512i hi0 = mulhilo16(c[0], m0, &lo0);
        __m512i hi1 = mulhilo16(c[2], m1, &lo1);
        c[0] = _mm512_ternarylogic_epi32(hi1, c[1], setup->key0[r], XOR3);
        c[1] = lo1;
        c[2] = _mm512_ternarylogic_epi32(hi0, c[3], setup->key1[r], XOR3);
        c[3] = lo0;
    }
}

/* Two sets of 16 counters through the rounds side by side: one set's
 * multiply latency hides behind the other's. */
static void philox16x2(__m512i a[4], __m512i b[4], const philox16_setup *setup)
{
    const __m512i m0 = _mm512_set1_epi32((int)GAUSS_PHILOX_M0);
    const __m512i m1 = _mm512_set1_epi32((int)GAUSS_PHILOX_M1);
    for (int r = 0; r < GAUSS_PHILOX_ROUNDS; r++) {
        __m512i alo0, alo1, blo0, blo1;
        __m512i ahi0 = mulhilo16(a[0], m0, &alo0);
        __m512i ahi1 = mulhilo16(a[2], m1, &alo1);
        __m512i bhi0 = mulhilo16(b[0], m0, &blo0);
        __m512i bhi1 = mulhilo16(b[2], m1, &blo1);
        a[0] = _mm512_ternarylogic_epi32(ahi1, a[1], setup->key0[r], XOR3);
        a[1] = alo1;
        a[2] = _mm512_ternarylogic_epi32(ahi0, a[3], setup->key1[r], XOR3);
        a[3] = alo0;
        b[0] = _mm512_ternarylogic_epi32(bhi1, b[1], setup->key0[r], XOR3);
        b[1] = blo1;
        b[2] = _mm512_ternarylogic_epi32(bhi0, b[3], setup->key1[r], XOR3);
        b[3] = blo0;
    }
}

static inline __m512 gauss_log16(__m512 u)
{
    __m512i ix = _mm512_add_epi32(_mm512_castps_si512(u),
                                  _mm512_set1_epi32((int)(GAUSS_ONE_BITS - GAUSS_SQRT_HALF_BITS)));
    __m512 e = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(ix, 23), _mm512_set1_epi32(127)));
    __m512 m = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_and_si512(ix, _mm512_set1_epi32(0x007fffff)),
                                                    _mm512_set1_epi32((int)GAUSS_SQRT_HALF_BITS)));
    __m512 f = _mm512_sub_ps(m, _mm512_set1_ps(1.0f));
    __m512 s = _mm512_div_ps(f, _mm512_add_ps(_mm512_set1_ps(2.0f), f));
    __m512 z = _mm512_mul_ps(s, s);
    __m512 r = _mm512_fmadd_ps(_mm512_set1_ps(GAUSS_LOG_C4), z, _mm512_set1_ps(GAUSS_LOG_C3));
    r = _mm512_fmadd_ps(r, z, _mm512_set1_ps(GAUSS_LOG_C2));
    r = _mm512_fmadd_ps(r, z, _mm512_set1_ps(GAUSS_LOG_C1));
    r = _mm512_mul_ps(r, z);
    __m512 hfsq = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), f), f);
    __m512 lo = _mm512_fmadd_ps(s, _mm512_add_ps(hfsq, r),
                                _mm512_fmsub_ps(e, _mm512_set1_ps(GAUSS_LN2_LO), hfsq));
    return _mm512_fmadd_ps(e, _mm512_set1_ps(GAUSS_LN2_HI), _mm512_add_ps(lo, f));
}

static inline void gauss_sincos_turn16(__m512i t, __m512 *sin_out, __m512 *cos_out)
{
    __m512i q = _mm512_srli_epi32(_mm512_add_epi32(t, _mm512_set1_epi32(0x20000000)), 30);
    __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_slli_epi32(t, 2)),
                             _mm512_set1_ps(GAUSS_ANGLE_SCALE));
    __m512 x2 = _mm512_mul_ps(x, x);
    __m512 ps = _mm512_fmadd_ps(_mm512_set1_ps(GAUSS_SIN_S9), x2, _mm512_set1_ps(GAUSS_SIN_S7));
    ps = _mm512_fmadd_ps(ps, x2, _mm512_set1_ps(GAUSS_SIN_S5));
    ps = _mm512_fmadd_ps(ps, x2, _mm512_set1_ps(GAUSS_SIN_S3));
    ps = _mm512_fmadd_ps(ps, x2, _mm512_set1_ps(GAUSS_SIN_S1));
    __m512 s = _mm512_mul_ps(ps, x);
    __m512 c = _mm512_fmadd_ps(_mm512_set1_ps(GAUSS_COS_C10), x2, _mm512_set1_ps(GAUSS_COS_C8));
    c = _mm512_fmadd_ps(c, x2, _mm512_set1_ps(GAUSS_COS_C6));
    c = _mm512_fmadd_ps(c, x2, _mm512_set1_ps(GAUSS_COS_C4));
    c = _mm512_fmadd_ps(c, x2, _mm512_set1_ps(GAUSS_COS_C2));
    c = _mm512_fmadd_ps(c, x2, _mm512_set1_ps(1.0f));
    const __m512i one = _mm512_set1_epi32(1), two = _mm512_set1_epi32(2);
    __mmask16 swap = _mm512_test_epi32_mask(q, one);
    __m512 cos_v = _mm512_mask_blend_ps(swap, c, s);
    __m512 sin_v = _mm512_mask_blend_ps(swap, s, c);
    __m512i cos_sign = _mm512_slli_epi32(_mm512_and_si512(_mm512_add_epi32(q, one), two), 30);
    __m512i sin_sign = _mm512_slli_epi32(_mm512_and_si512(q, two), 30);
    *cos_out = _mm512_xor_ps(cos_v, _mm512_castsi512_ps(cos_sign));
    *sin_out = _mm512_xor_ps(sin_v, _mm512_castsi512_ps(sin_sign));
}

static inline void gauss_box_muller16(__m512i r_radius, __m512i r_angle, __m512 *z_cos,
                                      __m512 *z_sin)
{
    __m512 u = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(r_radius, 1)),
                               _mm512_set1_ps(GAUSS_U_SCALE), _mm512_set1_ps(GAUSS_U_OFFSET));
    __m512 radius = _mm512_sqrt_ps(_mm512_mul_ps(_mm512_set1_ps(-2.0f), gauss_log16(u)));
    __m512 s, c;
    gauss_sincos_turn16(r_angle, &s, &c);
    *z_cos = _mm512_mul_ps(radius, c);
    *z_sin = _mm512_mul_ps(radius, s);
}

/* Counters {block + lane (64-bit), token, sub_block} for blocks
 * block .. block + BLOCKS - 1. */
static void philox16_counters(__m512i c[4], const philox16_setup *setup, uint64_t block)
{
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i lo = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)block), iota);
    /* A lane whose low word wrapped (lo < iota, unsigned) carries into the
     * high word. */
    __mmask16 carry = _mm512_cmplt_epu32_mask(lo, iota);
    __m512i hi = _mm512_set1_epi32((int)(uint32_t)(block >> 32));
    c[0] = lo;
    c[1] = _mm512_mask_add_epi32(hi, carry, hi, _mm512_set1_epi32(1));
    c[2] = setup->token;
    c[3] = setup->sub_block;
}

/* The normals of one set of Philox outputs, in draw order into dst[0..DRAWS). */
static void gauss_normals16(float *dst, const __m512i c[4])
{
    // z0..z3: (BLOCKS,), draw 4*k + j of the pass in lane k of zj
    __m512 z0, z1, z2, z3;
    gauss_box_muller16(c[0], c[1], &z0, &z1);
    gauss_box_muller16(c[2], c[3], &z2, &z3);
    /* Transpose to draw order: 4x4 within each 128-bit quarter, so that
     * quarter L of bj holds block 4L + j, then the quarters. */
    __m512 t0 = _mm512_unpacklo_ps(z0, z1), t1 = _mm512_unpackhi_ps(z0, z1);
    __m512 t2 = _mm512_unpacklo_ps(z2, z3), t3 = _mm512_unpackhi_ps(z2, z3);
    __m512 b0 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    __m512 b1 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
    __m512 b2 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    __m512 b3 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    __m512 v0 = _mm512_shuffle_f32x4(b0, b1, 0x44); /* b0.q0 b0.q1 b1.q0 b1.q1 */
    __m512 v1 = _mm512_shuffle_f32x4(b0, b1, 0xEE); /* b0.q2 b0.q3 b1.q2 b1.q3 */
    __m512 v2 = _mm512_shuffle_f32x4(b2, b3, 0x44);
    __m512 v3 = _mm512_shuffle_f32x4(b2, b3, 0xEE);
    _mm512_storeu_ps(dst + 0, _mm512_shuffle_f32x4(v0, v2, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_storeu_ps(dst + 16, _mm512_shuffle_f32x4(v0, v2, _MM_SHUFFLE(3, 1, 3, 1)));
    _mm512_storeu_ps(dst + 32, _mm512_shuffle_f32x4(v1, v3, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_storeu_ps(dst + 48, _mm512_shuffle_f32x4(v1, v3, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* Draws 4*block .. 4*block + DRAWS - 1 into dst[0..DRAWS): for short tails. */
static void gauss_pass16(float *dst, const philox16_setup *setup, uint64_t block)
{
    __m512i c[4];
    philox16_counters(c, setup, block);
    philox16(c, setup);
    gauss_normals16(dst, c);
}

/* Draws 4*block .. 4*block + 2*DRAWS - 1 into dst[0..2*DRAWS). */
static void gauss_pass16x2(float *dst, const philox16_setup *setup, uint64_t block)
{
    __m512i a[4], b[4];
    philox16_counters(a, setup, block);
    philox16_counters(b, setup, block + BLOCKS);
    philox16x2(a, b, setup);
    gauss_normals16(dst, a);
    gauss_normals16(dst + DRAWS, b);
}

void kern_gauss_fill_avx512(float *out, size_t n, uint64_t seed, uint32_t token,
                            uint32_t sub_block, uint64_t first)
{
    // out: (n,), draws first .. first+n-1
    philox16_setup setup;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < GAUSS_PHILOX_ROUNDS; r++) {
        setup.key0[r] = _mm512_set1_epi32((int)k0);
        setup.key1[r] = _mm512_set1_epi32((int)k1);
        k0 += GAUSS_PHILOX_W0;
        k1 += GAUSS_PHILOX_W1;
    }
    setup.token = _mm512_set1_epi32((int)token);
    setup.sub_block = _mm512_set1_epi32((int)sub_block);

    uint64_t block = first / 4;
    size_t skip = (size_t)(first % 4);
    size_t done = 0;
    while (done < n) {
        if (skip == 0 && n - done >= PASS) {
            gauss_pass16x2(out + done, &setup, block);
            done += PASS;
            block += PASS / 4;
        } else {
            /* A ragged start or end: a pass into a buffer, then the part
             * wanted, so every draw comes from the same vector code. One set
             * of counters when that covers the rest: half the work. */
            float pass[PASS];
            size_t size = n - done <= DRAWS - skip ? DRAWS : PASS;
            if (size == DRAWS)
                gauss_pass16(pass, &setup, block);
            else
                gauss_pass16x2(pass, &setup, block);
            size_t take = size - skip < n - done ? size - skip : n - done;
            memcpy(out + done, pass + skip, take * sizeof *out);
            done += take;
            skip = 0;
            block += size / 4;
        }
    }
}

#else
/* Not x86-64: nothing to compile, but ISO C wants a declaration. */
typedef int kern_gauss_avx512_unavailable;
#endif
