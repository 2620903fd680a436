/* The vector operations the kernel bodies (nn_body.h, gauss_body.h) are
 * written in, for AVX2 + FMA: 8 floats a vector (vf), 4 doubles (vd), 8
 * 32-bit integers (vi), and a lane mask (vm) as a compare leaves it. In the
 * manner of ggml's simd-mappings.h: each operation is one instruction or a
 * fixed sequence of them, so that a body rounds as the hand-written code it
 * replaced did. Include only in a file compiled with -mavx2 -mfma, called
 * only when vp_isa_supported(VP_ISA_AVX2). */
#ifndef VARPROF_SIMD_AVX2_H
#define VARPROF_SIMD_AVX2_H

#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define SIMD_W 8          /* floats per vector */
#define SIMD_REGISTERS 16 /* vector registers */
/* vectors a loop of long dependent chains (erf's) keeps side by side: 16
   registers hold one with its constants (two or four spill, and were
   slower at 8 lanes) */
#define SIMD_CHAINS 1

typedef __m256 vf;
typedef __m256d vd;
typedef __m256i vi;
typedef __m256 vm; /* all bits set in the lanes selected */

/* ---- floats: loads, stores, arithmetic ---- */

static inline vf vf_zero(void)
{
    return _mm256_setzero_ps();
}
static inline vf vf_set1(float x)
{
    return _mm256_set1_ps(x);
}
static inline vf vf_load(const float *p)
{
    return _mm256_loadu_ps(p);
}
static inline void vf_store(float *p, vf v)
{
    _mm256_storeu_ps(p, v);
}
static inline vf vf_add(vf a, vf b)
{
    return _mm256_add_ps(a, b);
}
static inline vf vf_sub(vf a, vf b)
{
    return _mm256_sub_ps(a, b);
}
static inline vf vf_mul(vf a, vf b)
{
    return _mm256_mul_ps(a, b);
}
static inline vf vf_div(vf a, vf b)
{
    return _mm256_div_ps(a, b);
}
static inline vf vf_min(vf a, vf b)
{
    return _mm256_min_ps(a, b);
}
static inline vf vf_max(vf a, vf b)
{
    return _mm256_max_ps(a, b);
}
static inline vf vf_sqrt(vf a)
{
    return _mm256_sqrt_ps(a);
}
/* a b + c and c - a b, each rounded once */
static inline vf vf_fmadd(vf a, vf b, vf c)
{
    return _mm256_fmadd_ps(a, b, c);
}
static inline vf vf_fnmadd(vf a, vf b, vf c)
{
    return _mm256_fnmadd_ps(a, b, c);
}
/* a b - c, rounded once */
static inline vf vf_fmsub(vf a, vf b, vf c)
{
    return _mm256_fmsub_ps(a, b, c);
}
static inline vf vf_xor(vf a, vf b)
{
    return _mm256_xor_ps(a, b);
}

/* to the nearest integer, ties to even */
static inline vf vf_round(vf a)
{
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

static inline vf vf_abs(vf a)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a);
}

/* |a| (a's sign clear) with the sign of s */
static inline vf vf_or_sign(vf a, vf s)
{
    return _mm256_or_ps(a, _mm256_and_ps(_mm256_set1_ps(-0.0f), s));
}

/* p 2^n for integral n in [-150, 128], as 2^n1 2^n2 with both factors
   normal: exact while the result is normal, one rounding into the
   subnormals (AVX2 has no scalef). */
static inline vf vf_scale2(vf p, vf n)
{
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1);
    __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

/* ---- lane masks ---- */

static inline vm vf_lt(vf a, vf b)
{
    return _mm256_cmp_ps(a, b, _CMP_LT_OQ);
}
static inline int vm_all(vm m)
{
    return _mm256_movemask_ps(m) == 0xff;
}
/* a where m is set, b elsewhere */
static inline vf vf_select(vm m, vf a, vf b)
{
    return _mm256_blendv_ps(b, a, m);
}

/* ---- the first r floats (a row's tail): nothing beyond them is read or
   written ---- */

/* Lanes below min(r, 8) set, for maskload and maskstore. */
static inline __m256i simd_lanes_below(size_t r)
{
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), index);
}

/* Lanes below r (0 <= r <= 8) set, as a mask for the loads and stores
   below: a tile's columns. */
static inline vm vm_first(size_t r)
{
    return _mm256_castsi256_ps(simd_lanes_below(r));
}
static inline vf vf_load_mask(const float *p, vm m)
{
    return _mm256_maskload_ps(p, _mm256_castps_si256(m));
}
static inline void vf_store_mask(float *p, vm m, vf v)
{
    _mm256_maskstore_ps(p, _mm256_castps_si256(m), v);
}

/* The first min(r, 8) floats at p, zeros after them. */
/* r[i] lane j and r[j] lane i swapped, for all i, j < 8: an 8 x 8 block
   transposed in registers (pairs, quads, then the 128-bit halves), 24
   shuffles where a float at a time is 64 loads and 64 stores */
static inline void vf_transpose(vf r[8])
{
    __m256 t[8], s[8];
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 2; i++) { /* s[4i + c]: column c of each half, rows 4i..4i+3 */
        s[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        s[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        s[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        s[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 16
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x20);
        r[4 + c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x31);
    }
}

static inline vf vf_load_first(const float *p, size_t r)
{
    return r >= SIMD_W ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, simd_lanes_below(r));
}

static inline void vf_store_first(float *p, vf v, size_t r)
{
    if (r >= SIMD_W)
        _mm256_storeu_ps(p, v);
    else
        _mm256_maskstore_ps(p, simd_lanes_below(r), v);
}

/* acc, with lane l < r (r < 8) the max of it and p[l]: the lanes beyond
   meet -inf. */
static inline vf vf_max_first(vf acc, const float *p, size_t r)
{
    __m256i lanes = simd_lanes_below(r);
    __m256 v = _mm256_maskload_ps(p, lanes);
    return _mm256_max_ps(
        acc, _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), v, _mm256_castsi256_ps(lanes)));
}

/* v with the lanes from r (r < 8) on zero */
static inline vf vf_keep_first(vf v, size_t r)
{
    return _mm256_and_ps(v, _mm256_castsi256_ps(simd_lanes_below(r)));
}

/* ---- reductions ---- */

static inline float vf_hsum(vf v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float vf_hmax(vf v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

/* ---- doubles: a vf widens into two vd, its low and its high half ---- */

static inline vd vd_zero(void)
{
    return _mm256_setzero_pd();
}
static inline vd vd_set1(double x)
{
    return _mm256_set1_pd(x);
}
static inline vd vd_add(vd a, vd b)
{
    return _mm256_add_pd(a, b);
}
static inline vd vd_sub(vd a, vd b)
{
    return _mm256_sub_pd(a, b);
}
static inline vd vd_fmadd(vd a, vd b, vd c)
{
    return _mm256_fmadd_pd(a, b, c);
}
/* SIMD_W / 2 doubles from or to memory, any alignment */
static inline vd vd_load(const double *p)
{
    return _mm256_loadu_pd(p);
}
static inline void vd_store(double *p, vd v)
{
    _mm256_storeu_pd(p, v);
}
static inline vd vd_mul(vd a, vd b)
{
    return _mm256_mul_pd(a, b);
}
/* correctly rounded, as the scalar / and sqrt: the same bits lane by lane */
static inline vd vd_div(vd a, vd b)
{
    return _mm256_div_pd(a, b);
}
static inline vd vd_sqrt(vd a)
{
    return _mm256_sqrt_pd(a);
}
static inline vd vf_widen_lo(vf v)
{
    return _mm256_cvtps_pd(_mm256_castps256_ps128(v));
}
static inline vd vf_widen_hi(vf v)
{
    return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
}
/* the low and the high half of the lanes, read as unsigned, to double
   (exactly: the sign bit flipped, converted as signed, 2^31 added back) */
static inline vd vi_unsigned_lo_to_vd(vi a)
{
    const __m128i flipped = _mm_xor_si128(_mm256_castsi256_si128(a), _mm_set1_epi32(INT32_MIN));
    return _mm256_add_pd(_mm256_cvtepi32_pd(flipped), _mm256_set1_pd(2147483648.0));
}
static inline vd vi_unsigned_hi_to_vd(vi a)
{
    const __m128i flipped =
        _mm_xor_si128(_mm256_extracti128_si256(a, 1), _mm_set1_epi32(INT32_MIN));
    return _mm256_add_pd(_mm256_cvtepi32_pd(flipped), _mm256_set1_pd(2147483648.0));
}
/* each double rounded to float, as a C cast does: lo's in the low lanes */
static inline vf vd_narrow(vd lo, vd hi)
{
    return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}

static inline double vd_hsum(vd v)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}

/* ---- 32-bit integers ---- */

static inline vi vi_set1(uint32_t x)
{
    return _mm256_set1_epi32((int)x);
}
static inline vi vi_load(const uint32_t *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}
static inline vi vi_add(vi a, vi b)
{
    return _mm256_add_epi32(a, b);
}
static inline vi vi_sub(vi a, vi b)
{
    return _mm256_sub_epi32(a, b);
}
static inline vi vi_and(vi a, vi b)
{
    return _mm256_and_si256(a, b);
}
static inline vi vi_srli(vi a, int n)
{
    return _mm256_srli_epi32(a, n);
}
static inline vi vi_slli(vi a, int n)
{
    return _mm256_slli_epi32(a, n);
}
/* a ^ b ^ c */
static inline vi vi_xor3(vi a, vi b, vi c)
{
    return _mm256_xor_si256(_mm256_xor_si256(a, b), c);
}
/* the value, converted; the bits, reinterpreted */
static inline vf vi_to_vf(vi a)
{
    return _mm256_cvtepi32_ps(a);
}
static inline vf vi_as_vf(vi a)
{
    return _mm256_castsi256_ps(a);
}
static inline vi vf_as_vi(vf a)
{
    return _mm256_castps_si256(a);
}
/* the lanes whose bit 0 is set */
static inline vm vi_odd(vi a)
{
    const __m256i one = _mm256_set1_epi32(1);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(a, one), one));
}

/* 32x32 -> 64 products of every lane with m: the high halves returned, the
 * low halves in *lo. mul_epu32 multiplies the even lanes only; the odd ones
 * are shifted down for a second multiply. */
static inline vi vi_mulhilo(vi a, vi m, vi *lo)
{
    __m256i even = _mm256_mul_epu32(a, m);
    __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

/* block + l (l < 8, 64 bits) in lane l: its low words in *lo, high in *hi */
static inline void vi_counters(vi *lo, vi *hi, uint64_t block)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    *lo = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)block), iota);
    /* A lane whose low word wrapped (lo < iota, unsigned) carries into the
     * high word: the no-carry mask is all ones, so hi - ~mask adds 1. */
    __m256i no_carry = _mm256_cmpeq_epi32(_mm256_max_epu32(*lo, iota), *lo);
    __m256i carry = _mm256_xor_si256(no_carry, _mm256_set1_epi32(-1));
    *hi = _mm256_sub_epi32(_mm256_set1_epi32((int)(uint32_t)(block >> 32)), carry);
}

/* dst[4 l + j] = lane l of zj, l < 8: four vectors transposed into 32
   floats, within each 128-bit half, then the halves. */
static inline void vf_store_transposed4(float *dst, vf z0, vf z1, vf z2, vf z3)
{
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

#endif
