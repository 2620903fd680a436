/* Standard normal draws from a counter-based generator: any draw of any stream
 * computed directly, so a Monte Carlo sample does not depend on how its work
 * is split between threads or calls.
 *
 * A stream is named by (seed, token, sub_block); draw i of it comes from one
 * call of Philox4x32-10 (Random123) with
 *     key     = {seed & 0xffffffff, seed >> 32}
 *     counter = {block & 0xffffffff, block >> 32, token, sub_block},  block = i / 4
 * whose four 32-bit outputs r0..r3 become draws 4*block + 0..3 by Box-Muller
 * in float: (r0, r1) give draws +0 and +1 (radius from r0, angle from r1),
 * (r2, r3) give +2 and +3. The scalar variant is the specification; the AVX2
 * and AVX-512 variants compute the same operations in the same order and are
 * tested to agree with it to 4 float ulps of max(|draw|, 1); in practice they
 * are bit-identical.
 *
 * Every draw is finite with |draw| <= 6.67 (the radius uniform is never below
 * 2^-32, so log(0) cannot happen): the tails beyond 6.66 standard deviations,
 * probability 3e-11, are not represented.
 */
#ifndef VARPROF_GAUSS_H
#define VARPROF_GAUSS_H

#include <stddef.h>
#include <stdint.h>

#include "varprof/isa.h"

/* Fills out[0..n) with standard normal draws first .. first+n-1 of the stream
 * named by (seed, token, sub_block). Draw i depends only on (seed, token,
 * sub_block, i): not on n, first, the thread or the ISA (the SIMD variants
 * equal the scalar reference to within a few float ulps).
 *
 * out: (n,), caller-owned; may be NULL when n is 0. Requires first + n <= 2^64
 * (draw indices do not wrap). Never fails, never allocates, thread-safe; uses
 * the variant vp_isa_current() names (selecting it on the first call). */
void vp_gauss_fill(float *out, size_t n, uint64_t seed, uint32_t token, uint32_t sub_block,
                   uint64_t first);

/* The same through a chosen variant, for tests and benchmarks. An isa this CPU
 * does not support (vp_isa_supported() == 0), or outside the enum, runs the
 * scalar reference instead, so the call never faults on an illegal
 * instruction. */
void vp_gauss_fill_with(vp_isa isa, float *out, size_t n, uint64_t seed, uint32_t token,
                        uint32_t sub_block, uint64_t first);

#endif
