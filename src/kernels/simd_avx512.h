/* The vector operations the kernel bodies (nn_body.h, gauss_body.h) are
 * written in, for AVX-512: 16 floats a vector (vf), 8 doubles (vd), 16
 * 32-bit integers (vi), and a lane mask (vm) as a compare leaves it. In the
 * manner of ggml's simd-mappings.h: each operation is one instruction or a
 * fixed sequence of them, so that a body rounds as the hand-written code it
 * replaced did. Include only in a file compiled with -mavx512f -mavx512dq
 * -mavx512vl -mavx512bw -mfma, called only when
 * vp_isa_supported(VP_ISA_AVX512). */
#ifndef VARPROF_SIMD_AVX512_H
#define VARPROF_SIMD_AVX512_H

#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define SIMD_W 16         /* floats per vector */
#define SIMD_REGISTERS 32 /* vector registers */
/* vectors a loop of long dependent chains (erf's) keeps side by side: 32
   registers hold four, and at 16 lanes one alone leaves the core waiting */
#define SIMD_CHAINS 4

typedef __m512 vf;
typedef __m512d vd;
typedef __m512i vi;
typedef __mmask16 vm; /* a bit per lane, set in the lanes selected */

/* ---- floats: loads, stores, arithmetic ---- */

static inline vf vf_zero(void)
{
    return _mm512_setzero_ps();
}
static inline vf vf_set1(float x)
{
    return _mm512_set1_ps(x);
}
static inline vf vf_load(const float *p)
{
    return _mm512_loadu_ps(p);
}
static inline void vf_store(float *p, vf v)
{
    _mm512_storeu_ps(p, v);
}
static inline vf vf_add(vf a, vf b)
{
    return _mm512_add_ps(a, b);
}
static inline vf vf_sub(vf a, vf b)
{
    return _mm512_sub_ps(a, b);
}
static inline vf vf_mul(vf a, vf b)
{
    return _mm512_mul_ps(a, b);
}
static inline vf vf_div(vf a, vf b)
{
    return _mm512_div_ps(a, b);
}
static inline vf vf_min(vf a, vf b)
{
    return _mm512_min_ps(a, b);
}
static inline vf vf_max(vf a, vf b)
{
    return _mm512_max_ps(a, b);
}
static inline vf vf_sqrt(vf a)
{
    return _mm512_sqrt_ps(a);
}
/* a b + c and c - a b, each rounded once */
static inline vf vf_fmadd(vf a, vf b, vf c)
{
    return _mm512_fmadd_ps(a, b, c);
}
static inline vf vf_fnmadd(vf a, vf b, vf c)
{
    return _mm512_fnmadd_ps(a, b, c);
}
/* a b - c, rounded once */
static inline vf vf_fmsub(vf a, vf b, vf c)
{
    return _mm512_fmsub_ps(a, b, c);
}
static inline vf vf_xor(vf a, vf b)
{
    return _mm512_xor_ps(a, b);
}

/* to the nearest integer, ties to even */
static inline vf vf_round(vf a)
{
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

static inline vf vf_abs(vf a)
{
    return _mm512_abs_ps(a);
}

/* |a| (a's sign clear) with the sign of s */
static inline vf vf_or_sign(vf a, vf s)
{
    return _mm512_or_ps(a, _mm512_and_ps(_mm512_set1_ps(-0.0f), s));
}

/* p 2^n for integral n, in one rounding, overflow and subnormals included */
static inline vf vf_scale2(vf p, vf n)
{
    return _mm512_scalef_ps(p, n);
}

/* ---- lane masks ---- */

static inline vm vf_lt(vf a, vf b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ);
}
static inline int vm_all(vm m)
{
    return m == 0xffff;
}
/* a where m is set, b elsewhere */
static inline vf vf_select(vm m, vf a, vf b)
{
    return _mm512_mask_blend_ps(m, b, a);
}

/* ---- the first r floats (a row's tail): nothing beyond them is read or
   written (masked lanes do not fault) ---- */

/* Lanes below min(r, 16) set. */
static inline __mmask16 simd_lanes_below(size_t r)
{
    return r >= SIMD_W ? (__mmask16)0xFFFF : (__mmask16)((1u << r) - 1u);
}

/* Lanes below r (0 <= r <= 16) set, as a mask for the loads and stores
   below: a tile's columns. */
static inline vm vm_first(size_t r)
{
    return simd_lanes_below(r);
}
static inline vf vf_load_mask(const float *p, vm m)
{
    return _mm512_maskz_loadu_ps(m, p);
}
static inline void vf_store_mask(float *p, vm m, vf v)
{
    _mm512_mask_storeu_ps(p, m, v);
}

/* The first min(r, 16) floats at p, zeros after them. */
/* r[i] lane j and r[j] lane i swapped, for all i, j < 16: a 16 x 16 block
   transposed in registers (pairs, then quads within 128-bit lanes, then
   the lanes themselves), 64 shuffles where a float at a time is 256 loads
   and 256 stores */
static inline void vf_transpose(vf r[16])
{
    __m512 t[16], s[16];
#pragma GCC unroll 16
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) { /* s[4i + c]: column c of each lane, rows 4i..4i+3 */
        s[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        s[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        s[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        s[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 16
    for (int c = 0; c < 4; c++) { /* the 128-bit lanes: q of s[4i + c] to lane i of r[4q + c] */
        __m512 u0 = _mm512_shuffle_f32x4(s[c], s[4 + c], 0x88);
        __m512 u1 = _mm512_shuffle_f32x4(s[c], s[4 + c], 0xDD);
        __m512 u2 = _mm512_shuffle_f32x4(s[8 + c], s[12 + c], 0x88);
        __m512 u3 = _mm512_shuffle_f32x4(s[8 + c], s[12 + c], 0xDD);
        r[c] = _mm512_shuffle_f32x4(u0, u2, 0x88);
        r[4 + c] = _mm512_shuffle_f32x4(u1, u3, 0x88);
        r[8 + c] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
        r[12 + c] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
    }
}

static inline vf vf_load_first(const float *p, size_t r)
{
    return r >= SIMD_W ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(simd_lanes_below(r), p);
}

static inline void vf_store_first(float *p, vf v, size_t r)
{
    if (r >= SIMD_W)
        _mm512_storeu_ps(p, v);
    else
        _mm512_mask_storeu_ps(p, simd_lanes_below(r), v);
}

/* acc, with lane l < r (r < 16) the max of it and p[l]: the lanes beyond
   keep acc. */
static inline vf vf_max_first(vf acc, const float *p, size_t r)
{
    __mmask16 lanes = simd_lanes_below(r);
    return _mm512_mask_max_ps(acc, lanes, acc, _mm512_maskz_loadu_ps(lanes, p));
}

/* v with the lanes from r (r < 16) on zero */
static inline vf vf_keep_first(vf v, size_t r)
{
    return _mm512_maskz_mov_ps(simd_lanes_below(r), v);
}

/* ---- reductions ---- */

static inline float vf_hsum(vf v)
{
    return _mm512_reduce_add_ps(v);
}
static inline float vf_hmax(vf v)
{
    return _mm512_reduce_max_ps(v);
}

/* ---- doubles: a vf widens into two vd, its low and its high half ---- */

static inline vd vd_zero(void)
{
    return _mm512_setzero_pd();
}
static inline vd vd_set1(double x)
{
    return _mm512_set1_pd(x);
}
static inline vd vd_add(vd a, vd b)
{
    return _mm512_add_pd(a, b);
}
static inline vd vd_sub(vd a, vd b)
{
    return _mm512_sub_pd(a, b);
}
static inline vd vd_fmadd(vd a, vd b, vd c)
{
    return _mm512_fmadd_pd(a, b, c);
}
/* SIMD_W / 2 doubles from or to memory, any alignment */
static inline vd vd_load(const double *p)
{
    return _mm512_loadu_pd(p);
}
static inline void vd_store(double *p, vd v)
{
    _mm512_storeu_pd(p, v);
}
static inline vd vd_mul(vd a, vd b)
{
    return _mm512_mul_pd(a, b);
}
/* correctly rounded, as the scalar / and sqrt: the same bits lane by lane */
static inline vd vd_div(vd a, vd b)
{
    return _mm512_div_pd(a, b);
}
static inline vd vd_sqrt(vd a)
{
    return _mm512_sqrt_pd(a);
}
static inline vd vf_widen_lo(vf v)
{
    return _mm512_cvtps_pd(_mm512_castps512_ps256(v));
}
static inline vd vf_widen_hi(vf v)
{
    return _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1));
}
/* the low and the high half of the lanes, read as unsigned, to double
   (exactly) */
static inline vd vi_unsigned_lo_to_vd(vi a)
{
    return _mm512_cvtepu32_pd(_mm512_castsi512_si256(a));
}
static inline vd vi_unsigned_hi_to_vd(vi a)
{
    return _mm512_cvtepu32_pd(_mm512_extracti64x4_epi64(a, 1));
}
/* each double rounded to float, as a C cast does: lo's in the low lanes */
static inline vf vd_narrow(vd lo, vd hi)
{
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}
static inline double vd_hsum(vd v)
{
    return _mm512_reduce_add_pd(v);
}

/* ---- 32-bit integers ---- */

static inline vi vi_set1(uint32_t x)
{
    return _mm512_set1_epi32((int)x);
}
static inline vi vi_load(const uint32_t *p)
{
    return _mm512_loadu_si512((const void *)p);
}
static inline vi vi_add(vi a, vi b)
{
    return _mm512_add_epi32(a, b);
}
static inline vi vi_sub(vi a, vi b)
{
    return _mm512_sub_epi32(a, b);
}
static inline vi vi_and(vi a, vi b)
{
    return _mm512_and_si512(a, b);
}
static inline vi vi_srli(vi a, int n)
{
    return _mm512_srli_epi32(a, (unsigned)n);
}
static inline vi vi_slli(vi a, int n)
{
    return _mm512_slli_epi32(a, (unsigned)n);
}
/* a ^ b ^ c, one ternary-logic instruction (0x96: its truth table) */
static inline vi vi_xor3(vi a, vi b, vi c)
{
    return _mm512_ternarylogic_epi32(a, b, c, 0x96);
}
/* the value, converted; the bits, reinterpreted */
static inline vf vi_to_vf(vi a)
{
    return _mm512_cvtepi32_ps(a);
}
static inline vf vi_as_vf(vi a)
{
    return _mm512_castsi512_ps(a);
}
static inline vi vf_as_vi(vf a)
{
    return _mm512_castps_si512(a);
}
/* the lanes whose bit 0 is set */
static inline vm vi_odd(vi a)
{
    return _mm512_test_epi32_mask(a, _mm512_set1_epi32(1));
}

/* 32x32 -> 64 products of every lane with m: the high halves returned, the
 * low halves in *lo. mul_epu32 multiplies the even lanes only; the odd ones
 * are shifted down for a second multiply. A masked shuffle then moves the
 * wanted half of each product into its lane, one instruction per result. */
static inline vi vi_mulhilo(vi a, vi m, vi *lo)
{
    __m512i even = _mm512_mul_epu32(a, m);                       /* lanes 0, 2, .. */
    __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m); /* lanes 1, 3, .. */
    /* lo: odd lanes take the low word of odd's product (element 0 of each pair) */
    *lo = _mm512_mask_shuffle_epi32(even, (__mmask16)0xAAAA, odd, _MM_PERM_CCAA);
    /* hi: even lanes take the high word of even's product (element 1) */
    return _mm512_mask_shuffle_epi32(odd, (__mmask16)0x5555, even, _MM_PERM_DDBB);
}

/* block + l (l < 16, 64 bits) in lane l: its low words in *lo, high in *hi */
static inline void vi_counters(vi *lo, vi *hi, uint64_t block)
{
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    *lo = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)block), iota);
    /* A lane whose low word wrapped (lo < iota, unsigned) carries into the
     * high word. */
    __mmask16 carry = _mm512_cmplt_epu32_mask(*lo, iota);
    __m512i h = _mm512_set1_epi32((int)(uint32_t)(block >> 32));
    *hi = _mm512_mask_add_epi32(h, carry, h, _mm512_set1_epi32(1));
}

/* dst[4 l + j] = lane l of zj, l < 16: four vectors transposed into 64
   floats, 4x4 within each 128-bit quarter (quarter L of bj then holds
   lanes 4L + j), then the quarters. */
static inline void vf_store_transposed4(float *dst, vf z0, vf z1, vf z2, vf z3)
{
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

#endif
