/* What the Gaussian generator's variants share: the constants of the float
 * log and sin/cos they all evaluate the same way (the entry points,
 * kern_gauss_fill_ISA, are declared in kern_variants.h).
 * gauss_scalar.c spells out the algorithm; the SIMD files repeat it on vectors,
 * operation for operation, so that every variant rounds identically. */
#ifndef VARPROF_GAUSS_INTERNAL_H
#define VARPROF_GAUSS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Philox4x32 round multipliers and key increments (Random123's values). */
#define GAUSS_PHILOX_M0 0xD2511F53u
#define GAUSS_PHILOX_M1 0xCD9E8D57u
#define GAUSS_PHILOX_W0 0x9E3779B9u
#define GAUSS_PHILOX_W1 0xBB67AE85u
#define GAUSS_PHILOX_ROUNDS 10

/* Radius uniform u = (r >> 1) * 2^-31 + 2^-32, in (0, 1]: never 0. */
#define GAUSS_U_SCALE 0x1p-31f
#define GAUSS_U_OFFSET 0x1p-32f

/* log(u) = e*ln2 + log(m), m = u / 2^e in [sqrt(1/2), sqrt(2)). The bit
 * pattern of sqrt(1/2) sets where the mantissa range starts. */
#define GAUSS_SQRT_HALF_BITS 0x3f3504f3u
#define GAUSS_ONE_BITS 0x3f800000u
/* ln 2 split: LN2_HI has 17 significant bits, so e * LN2_HI is exact for
 * |e| <= 64 (here e >= -32). */
#define GAUSS_LN2_HI 6.9313812256e-01f /* 0x3f317180 */
#define GAUSS_LN2_LO 9.0580006145e-06f /* 0x3717f7d1 */
/* log(1+f) = f - f^2/2 + s*(f^2/2 + R(z)), s = f/(2+f), z = s^2, with
 * R(z) = sum 2 z^k / (2k+1), k = 1..4: the series of 2 atanh(s) - 2s. On
 * |s| <= 0.172 the first omitted term is below 1e-9 of log(m). */
#define GAUSS_LOG_C1 0.66666666666666666667f
#define GAUSS_LOG_C2 0.4f
#define GAUSS_LOG_C3 0.28571428571428571429f
#define GAUSS_LOG_C4 0.22222222222222222222f

/* sin(pi/4 x) and cos(pi/4 x) on x in [-1, 1]: Taylor series in x with the
 * powers of pi/4 folded in; the first omitted terms are below 3e-9. The
 * angle reaches x exactly, from integer bits (see gauss_scalar.c), so there
 * is no floating-point range reduction to lose accuracy in. */
#define GAUSS_SIN_S1 0.78539816339744830962f
#define GAUSS_SIN_S3 (-0.08074551218828077f)
#define GAUSS_SIN_S5 0.00249039457019272f
#define GAUSS_SIN_S7 (-3.657620418217724e-05f)
#define GAUSS_SIN_S9 3.13361689037812e-07f
#define GAUSS_COS_C2 (-0.30842513753404244f)
#define GAUSS_COS_C4 0.0158543442438155f
#define GAUSS_COS_C6 (-0.00032599188692738996f)
#define GAUSS_COS_C8 3.590860448591509e-06f
#define GAUSS_COS_C10 (-2.461136950494199e-08f)

/* Angle residual x = (int32)(r << 2) * 2^-31 in [-1, 1]. */
#define GAUSS_ANGLE_SCALE 0x1p-31f

#endif
