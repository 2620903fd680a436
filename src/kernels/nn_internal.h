/* What the forward pass's SIMD kernels share: the constants of the float exp
 * and erf they evaluate on vectors, and those two functions over arrays, for
 * the tests that measure their accuracy. The scalar reference (nn_scalar.c)
 * uses libm's expf and erff instead; the SIMD variants are tested against it.
 *
 * Measured against exp() and erf() in double (tests/unit/test_nn_kernels.c,
 * which holds them to 2 ulps): exp at most 0.98 float ulp for normal results
 * (x in [-87.3, 88.7]) and 0.73 of the subnormal spacing below them; erf at
 * most 1.02 ulp on every 67th float up to 6 and on every float near its
 * branch points 1 and 4. */
#ifndef VARPROF_NN_INTERNAL_H
#define VARPROF_NN_INTERNAL_H

#include <math.h>
#include <stddef.h>

/* ---- exp(x), Cephes' expf ----
 * x = n ln2 + r, n = round(x log2(e)), |r| <= ln2 / 2; ln 2 in two parts so
 * that r is exact to float precision. exp(r) = 1 + r + r^2 P(r), P of degree
 * 5 (S. Moshier, Cephes Math Library); 2^n applied as 2^(n/2) 2^(n - n/2) so
 * that results down to the subnormals need no special case. */
#define NN_EXP_LOG2E 1.44269504088896341f
#define NN_EXP_LN2_HI 0.693359375f /* 0x3f318000: few bits, exact n * LN2_HI */
#define NN_EXP_LN2_LO (-2.12194440e-4f)
#define NN_EXP_P5 1.9875691500e-4f
#define NN_EXP_P4 1.3981999507e-3f
#define NN_EXP_P3 8.3334519073e-3f
#define NN_EXP_P2 4.1665795894e-2f
#define NN_EXP_P1 1.6666665459e-1f
#define NN_EXP_P0 5.0000001201e-1f
/* Inputs are clamped to [MIN, MAX]: exp(-104) < 2^-150 rounds to 0 and
 * exp(88.8) > FLT_MAX is inf, as exp of anything beyond them. */
#define NN_EXP_MIN (-104.0f)
#define NN_EXP_MAX 88.8f

/* ---- erf(x) ----
 * |x| < 1: erf(x) = x + x (P(x^2) - 1), P of degree 6: a Chebyshev fit
 * (mpmath's chebyfit) of erf(x)/x in s = x^2 on [0, 1]; fit error 1.3e-9.
 * P - 1 lies in [-0.16, 0.13], so its rounding errors are small against x
 * and the final FMA rounds once: x P(x^2) as a product would round P near
 * 1.1 to an ulp of 2^-23, 2.4 ulps of erf below 0.5.
 * 1 <= |x| < 4: erf(|x|) = 1 - exp(Q(u) - x^2), u = |x| - 2.5, with Q of
 * degree 8 fitted to log(erfc(|x|)) + x^2 on [1, 4] (fit error 1.7e-8 in the
 * log, a relative error of erfc). Q stays in [-2, -0.8] with no cancellation
 * in its Horner sum, and Q - x^2 is one FMA, so the exponent is exact to a
 * float rounding; erfc <= 0.16 there, so its error shrinks by that factor in
 * 1 - erfc. |x| >= 4: erfc(4) = 1.5e-8 is below half an ulp of 1, so the
 * same formula at |x| clamped to 4 gives exactly 1. */
#define NN_ERF_SMALL_BOUND 1.0f
#define NN_ERF_S6 7.875875063e-05f
#define NN_ERF_S5 (-8.016864287e-04f)
#define NN_ERF_S4 5.189087423e-03f
#define NN_ERF_S3 (-2.685421201e-02f)
#define NN_ERF_S2 1.128359472e-01f
#define NN_ERF_S1 (-3.761262667e-01f)
#define NN_ERF_S0 1.283791658e-01f /* the fit's constant term minus 1 */
#define NN_ERF_ONE_BOUND 4.0f
#define NN_ERF_MID 2.5f
#define NN_ERF_Q8 1.637151415e-06f
#define NN_ERF_Q7 (-1.331501440e-05f)
#define NN_ERF_Q6 7.729137615e-05f
#define NN_ERF_Q5 (-4.201225235e-04f)
#define NN_ERF_Q4 2.165303549e-03f
#define NN_ERF_Q3 (-1.085854164e-02f)
#define NN_ERF_Q2 5.610629639e-02f
#define NN_ERF_Q1 (-3.526806742e-01f)
#define NN_ERF_Q0 (-1.556815273e+00f)

/* GELU's 1/sqrt(2), rounded to float once: u = x * NN_SQRT1_2 in every
 * variant, as PyTorch's x * M_SQRT1_2. */
#define NN_SQRT1_2 0.70710678118654752440f

/* GPT-2's tanh GELU, 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3)
 * (PyTorch's gelu(approximate='tanh'), kBeta and kKappa), is evaluated as
 * x / (1 + exp(-2u)), the same function: 1 + tanh(u) = 2 / (1 + exp(-2u)).
 * That form has no cancellation where 1 + tanh(u) is small (x < -3), so
 * it is accurate to a few ulps of the result everywhere, where 0.5 x (1 +
 * tanhf(u)) loses up to an ulp of 1 in 1 + tanh. 2 sqrt(2/pi) rounded to
 * float once. */
#define NN_GELU_TANH_2BETA 1.59576912160573071176f
#define NN_GELU_TANH_KAPPA 0.044715f
/* The tanh GELU's derivative's second term, x u' s (1 - s) (s the sigmoid
 * of 2u), is below 1e-30 for |x| > 10; x is clamped to this bound there so
 * that x^2 cannot overflow into inf * 0. */
#define NN_GELU_TANH_CLAMP 1.0e4f

/* Gemma-2's soft cap over n attention scores (or logits) in place: z =
 * softcap tanh(z / softcap), PyTorch's order of operations; tanh_out (NULL:
 * not wanted) gets each tanh, for the backward's 1 - tanh^2. libm's tanhf
 * on every instruction set: the cap is rare (Gemma-2 alone), and one
 * function gives every variant the same bits from the same scores. */
static inline void kern_softcap(float *z, float *tanh_out, size_t n, float softcap)
{
    for (size_t i = 0; i < n; i++) {
        const float t = tanhf(z[i] / softcap);
        if (tanh_out)
            tanh_out[i] = t;
        z[i] = softcap * t;
    }
}

/* The first key query t sees through a sliding window of `window` keys
 * (kern_list.h's attention): t + 1 - window once t reaches the window, else
 * 0; window 0, every key from 0. */
static inline size_t kern_window_first(size_t t, size_t window)
{
    return window && t + 1 > window ? t + 1 - window : 0;
}

/* out[i] = exp(x[i]) and erf(x[i]), i < n, with the vector code the kernels
 * use (out may be x). Exist only on x86-64; call only when
 * vp_isa_supported() says so. For the accuracy tests. */
void kern_exp_avx2(float *out, const float *x, size_t n);
void kern_erf_avx2(float *out, const float *x, size_t n);
void kern_exp_avx512(float *out, const float *x, size_t n);
void kern_erf_avx512(float *out, const float *x, size_t n);

#endif
