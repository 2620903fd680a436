/* The Gaussian generator on vectors: written once over the operations of a
 * mapping header (simd_avx2.h, simd_avx512.h: SIMD_W lanes) and included
 * once per instruction set after it, with KERN_ISA set to the set's suffix
 * (kern_variants.h) and GAUSS_SETS to the sets of SIMD_W counters a pass
 * runs through Philox side by side.
 *
 * Philox4x32-10 on one counter a lane, then Box-Muller on vectors: the same
 * operations in the same order as gauss_scalar.c (the specification), so
 * that every variant gives its bits. Contract in include/varprof/gauss.h. */
#include <string.h>

#include "kernels/gauss_internal.h"
#include "kernels/kern_variants.h"

#define BLOCKS SIMD_W             /* Philox blocks per set of counters, one per lane */
#define DRAWS (4 * BLOCKS)        /* normals per set */
#define PASS (GAUSS_SETS * DRAWS) /* normals per pass */

typedef struct {
    vi key0[GAUSS_PHILOX_ROUNDS]; /* the round keys, broadcast */
    vi key1[GAUSS_PHILOX_ROUNDS];
    vi token;
    vi sub_block;
} philox_setup;

/* The ten rounds on `sets` sets of counters, side by side: one set's
   multiply latency hides behind the other's. Inlined with sets constant,
   so that the loops over them unroll and the counters stay in registers. */
static inline __attribute__((always_inline)) void philox(const int sets, vi c[][4],
                                                         const philox_setup *setup)
{
    const vi m0 = vi_set1(GAUSS_PHILOX_M0), m1 = vi_set1(GAUSS_PHILOX_M1);
    for (int r = 0; r < GAUSS_PHILOX_ROUNDS; r++) {
        vi hi0[GAUSS_SETS], lo0[GAUSS_SETS], hi1[GAUSS_SETS], lo1[GAUSS_SETS];
#pragma GCC unroll 4
        for (int s = 0; s < sets; s++) {
            hi0[s] = vi_mulhilo(c[s][0], m0, &lo0[s]);
            hi1[s] = vi_mulhilo(c[s][2], m1, &lo1[s]);
        }
#pragma GCC unroll 4
        for (int s = 0; s < sets; s++) {
            c[s][0] = vi_xor3(hi1[s], c[s][1], setup->key0[r]);
            c[s][1] = lo1[s];
            c[s][2] = vi_xor3(hi0[s], c[s][3], setup->key1[r]);
            c[s][3] = lo0[s];
        }
    }
}

/* log(u) for u in [2^-32, 1], about 1 ulp (gauss_scalar.c's gauss_log). */
static inline vf log_v(vf u)
{
    vi ix = vi_add(vf_as_vi(u), vi_set1(GAUSS_ONE_BITS - GAUSS_SQRT_HALF_BITS));
    vf e = vi_to_vf(vi_sub(vi_srli(ix, 23), vi_set1(127)));
    vf m = vi_as_vf(vi_add(vi_and(ix, vi_set1(0x007fffff)), vi_set1(GAUSS_SQRT_HALF_BITS)));
    vf f = vf_sub(m, vf_set1(1.0f));
    vf s = vf_div(f, vf_add(vf_set1(2.0f), f));
    vf z = vf_mul(s, s);
    vf r = vf_fmadd(vf_set1(GAUSS_LOG_C4), z, vf_set1(GAUSS_LOG_C3));
    r = vf_fmadd(r, z, vf_set1(GAUSS_LOG_C2));
    r = vf_fmadd(r, z, vf_set1(GAUSS_LOG_C1));
    r = vf_mul(r, z);
    vf hfsq = vf_mul(vf_mul(vf_set1(0.5f), f), f);
    vf lo = vf_fmadd(s, vf_add(hfsq, r), vf_fmsub(e, vf_set1(GAUSS_LN2_LO), hfsq));
    return vf_fmadd(e, vf_set1(GAUSS_LN2_HI), vf_add(lo, f));
}

/* sin and cos of 2 pi t / 2^32, about 1 ulp (gauss_scalar.c's
   gauss_sincos_turn). */
static inline void sincos_turn_v(vi t, vf *sin_out, vf *cos_out)
{
    vi q = vi_srli(vi_add(t, vi_set1(0x20000000)), 30);
    vf x = vf_mul(vi_to_vf(vi_slli(t, 2)), vf_set1(GAUSS_ANGLE_SCALE));
    vf x2 = vf_mul(x, x);
    vf ps = vf_fmadd(vf_set1(GAUSS_SIN_S9), x2, vf_set1(GAUSS_SIN_S7));
    ps = vf_fmadd(ps, x2, vf_set1(GAUSS_SIN_S5));
    ps = vf_fmadd(ps, x2, vf_set1(GAUSS_SIN_S3));
    ps = vf_fmadd(ps, x2, vf_set1(GAUSS_SIN_S1));
    vf s = vf_mul(ps, x);
    vf c = vf_fmadd(vf_set1(GAUSS_COS_C10), x2, vf_set1(GAUSS_COS_C8));
    c = vf_fmadd(c, x2, vf_set1(GAUSS_COS_C6));
    c = vf_fmadd(c, x2, vf_set1(GAUSS_COS_C4));
    c = vf_fmadd(c, x2, vf_set1(GAUSS_COS_C2));
    c = vf_fmadd(c, x2, vf_set1(1.0f));
    /* q = 0: (c, s); 1: (-s, c); 2: (-c, -s); 3: (s, -c), as (cos, sin) */
    const vi one = vi_set1(1), two = vi_set1(2);
    vm swap = vi_odd(q);
    vf cos_v = vf_select(swap, s, c);
    vf sin_v = vf_select(swap, c, s);
    vi cos_sign = vi_slli(vi_and(vi_add(q, one), two), 30);
    vi sin_sign = vi_slli(vi_and(q, two), 30);
    *cos_out = vf_xor(cos_v, vi_as_vf(cos_sign));
    *sin_out = vf_xor(sin_v, vi_as_vf(sin_sign));
}

/* Two normals a lane from two uniform words: radius from r_radius, angle
   from r_angle. */
static inline void box_muller_v(vi r_radius, vi r_angle, vf *z_cos, vf *z_sin)
{
    vf u =
        vf_fmadd(vi_to_vf(vi_srli(r_radius, 1)), vf_set1(GAUSS_U_SCALE), vf_set1(GAUSS_U_OFFSET));
    vf radius = vf_sqrt(vf_mul(vf_set1(-2.0f), log_v(u)));
    vf s, c;
    sincos_turn_v(r_angle, &s, &c);
    *z_cos = vf_mul(radius, c);
    *z_sin = vf_mul(radius, s);
}

/* The normals of one set of Philox outputs, in draw order into
   dst[0..DRAWS). */
static inline void normals(float *dst, const vi c[4])
{
    // z0..z3: (BLOCKS,), draw 4*k + j of the set in lane k of zj
    vf z0, z1, z2, z3;
    box_muller_v(c[0], c[1], &z0, &z1);
    box_muller_v(c[2], c[3], &z2, &z3);
    vf_store_transposed4(dst, z0, z1, z2, z3);
}

/* Draws 4 block .. 4 block + sets DRAWS - 1 into dst[0..sets DRAWS). */
static inline __attribute__((always_inline)) void pass(const int sets, float *dst,
                                                       const philox_setup *setup, uint64_t block)
{
    vi c[GAUSS_SETS][4];
#pragma GCC unroll 4
    for (int s = 0; s < sets; s++) {
        vi_counters(&c[s][0], &c[s][1], block + (uint64_t)s * BLOCKS);
        c[s][2] = setup->token;
        c[s][3] = setup->sub_block;
    }
    philox(sets, c, setup);
#pragma GCC unroll 4
    for (int s = 0; s < sets; s++)
        normals(dst + s * DRAWS, c[s]);
}

static void pass_one(float *dst, const philox_setup *setup, uint64_t block)
{
    pass(1, dst, setup, block);
}

static void pass_all(float *dst, const philox_setup *setup, uint64_t block)
{
    pass(GAUSS_SETS, dst, setup, block);
}

static void setup_for(philox_setup *setup, uint64_t seed, uint32_t token, uint32_t sub_block)
{
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < GAUSS_PHILOX_ROUNDS; r++) {
        setup->key0[r] = vi_set1(k0);
        setup->key1[r] = vi_set1(k1);
        k0 += GAUSS_PHILOX_W0;
        k1 += GAUSS_PHILOX_W1;
    }
    setup->token = vi_set1(token);
    setup->sub_block = vi_set1(sub_block);
}

/* v's first `lanes` lanes into dst */
static inline void store_lanes(float *dst, vf v, size_t lanes)
{
    if (lanes == SIMD_W)
        vf_store(dst, v);
    else
        vf_store_mask(dst, vm_first(lanes), v);
}

/* (float)(scale * z) lane by lane, the product in double, into the first
   `lanes` floats of dst */
static inline void store_scaled(float *dst, vf z, vd scale, size_t lanes)
{
    store_lanes(dst, vd_narrow(vd_mul(vf_widen_lo(z), scale), vd_mul(vf_widen_hi(z), scale)),
                lanes);
}

/* The first Philox block of panel columns c0 .. c0 + SIMD_W - 1, column c
   at draw first + c row_stride; columns past the rows start where column 0
   does (their panel columns are zeroed afterwards, zero_past_rows). */
static inline vi panel_starts(uint64_t first, uint64_t row_stride, size_t c0, size_t rows)
{
    uint32_t start[SIMD_W];
    for (size_t l = 0; l < SIMD_W; l++)
        start[l] = (uint32_t)((first + (c0 + l < rows ? c0 + l : 0) * row_stride) / 4);
    return vi_load(start);
}

static void zero_past_rows(float *panel, size_t nr, size_t rows, size_t kc)
{
    for (size_t p = 0; rows < nr && p < kc; p++)
        memset(panel + p * nr + rows, 0, (nr - rows) * sizeof *panel);
}

/* Panel rows 4 g .. 4 g + 3 for the SIMD_W panel columns whose Philox
   blocks start at lo (one lane a panel column, a row of W), for `sets`
   consecutive g side by side: a lane's four draws are four consecutive p,
   so no transpose is needed. */
static inline __attribute__((always_inline)) void panel_groups(const int sets, float *panel,
                                                               size_t nr, size_t lanes, vi lo,
                                                               size_t g, const philox_setup *setup,
                                                               vd scale)
{
    vi c[GAUSS_SETS][4];
#pragma GCC unroll 4
    for (int s = 0; s < sets; s++) {
        c[s][0] = vi_add(lo, vi_set1((uint32_t)(g + (size_t)s)));
        c[s][1] = vi_set1(0); /* the caller's bound: no block reaches 2^32 */
        c[s][2] = setup->token;
        c[s][3] = setup->sub_block;
    }
    philox(sets, c, setup);
#pragma GCC unroll 4
    for (int s = 0; s < sets; s++) {
        vf z[4];
        box_muller_v(c[s][0], c[s][1], &z[0], &z[1]);
        box_muller_v(c[s][2], c[s][3], &z[2], &z[3]);
        float *row = panel + 4 * (g + (size_t)s) * nr;
        for (int j = 0; j < 4; j++)
            store_scaled(row + (size_t)j * nr, z[j], scale, lanes);
    }
}

void KERN_FN(kern_gauss_panel)(float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed,
                               uint32_t token, uint32_t sub_block, uint64_t first,
                               uint64_t row_stride, double scale)
{
    // panel: (kc, nr); column c < rows holds draws first + c row_stride .. + kc - 1
    philox_setup setup;
    setup_for(&setup, seed, token, sub_block);
    const vd s = vd_set1(scale);
    const size_t groups = kc / 4;
    for (size_t c0 = 0; c0 < rows; c0 += SIMD_W) {
        const size_t lanes = nr - c0 < SIMD_W ? nr - c0 : SIMD_W;
        const vi lo = panel_starts(first, row_stride, c0, rows);
        size_t g = 0;
        for (; g + GAUSS_SETS <= groups; g += GAUSS_SETS)
            panel_groups(GAUSS_SETS, panel + c0, nr, lanes, lo, g, &setup, s);
        for (; g < groups; g++)
            panel_groups(1, panel + c0, nr, lanes, lo, g, &setup, s);
    }
    zero_past_rows(panel, nr, rows, kc);
}

/* The uniform draws of one Philox word a lane: ((double)r + 0.5) 2^-32 = u,
   then (float)((2 u - 1) bound), then (float)(factor that) unless factor
   is 1, each step a double operation as the scalar loop's. */
static inline vd uniform_half(vd r, vd bound)
{
    const vd u = vd_mul(vd_add(r, vd_set1(0.5)), vd_set1(0x1p-32));
    return vd_mul(vd_sub(vd_mul(vd_set1(2.0), u), vd_set1(1.0)), bound);
}

static inline vf uniform_v(vi r, vd bound, double factor)
{
    vf v = vd_narrow(uniform_half(vi_unsigned_lo_to_vd(r), bound),
                     uniform_half(vi_unsigned_hi_to_vd(r), bound));
    if (factor != 1.0) {
        const vd f = vd_set1(factor);
        v = vd_narrow(vd_mul(f, vf_widen_lo(v)), vd_mul(f, vf_widen_hi(v)));
    }
    return v;
}

void KERN_FN(kern_uniform_panel)(float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed,
                                 uint32_t stream, uint32_t word, uint64_t first,
                                 uint64_t row_stride, double bound, double factor)
{
    // panel: (kc, nr); column c < rows holds uniforms first + c row_stride .. + kc - 1
    philox_setup setup;
    setup_for(&setup, seed, 0, 0);
    const vd b = vd_set1(bound);
    for (size_t c0 = 0; c0 < rows; c0 += SIMD_W) {
        const size_t lanes = nr - c0 < SIMD_W ? nr - c0 : SIMD_W;
        const vi lo = panel_starts(first, row_stride, c0, rows);
        for (size_t g = 0; g < kc / 4; g++) {
            /* the counter {stream, word, block lo, block hi} */
            vi c[1][4] = {
                {vi_set1(stream), vi_set1(word), vi_add(lo, vi_set1((uint32_t)g)), vi_set1(0)}};
            philox(1, c, &setup);
            float *row = panel + 4 * g * nr + c0;
            for (int j = 0; j < 4; j++)
                store_lanes(row + (size_t)j * nr, uniform_v(c[0][j], b, factor), lanes);
        }
    }
    zero_past_rows(panel, nr, rows, kc);
}

void KERN_FN(kern_gauss_fill)(float *out, size_t n, uint64_t seed, uint32_t token,
                              uint32_t sub_block, uint64_t first)
{
    // out: (n,), draws first .. first+n-1
    philox_setup setup;
    setup_for(&setup, seed, token, sub_block);

    uint64_t block = first / 4;
    size_t skip = (size_t)(first % 4);
    size_t done = 0;
    while (done < n) {
        if (skip == 0 && n - done >= PASS) {
            pass_all(out + done, &setup, block);
            done += PASS;
            block += PASS / 4;
        } else {
            /* A ragged start or end: a pass into a buffer, then the part
             * wanted, so every draw comes from the same vector code. One set
             * of counters when that covers the rest: less work. */
            float buf[PASS];
            size_t size = n - done <= DRAWS - skip ? DRAWS : PASS;
            if (size == DRAWS)
                pass_one(buf, &setup, block);
            else
                pass_all(buf, &setup, block);
            size_t take = size - skip < n - done ? size - skip : n - done;
            memcpy(out + done, buf + skip, take * sizeof *out);
            done += take;
            skip = 0;
            block += size / 4;
        }
    }
}

#undef BLOCKS
#undef DRAWS
#undef PASS
