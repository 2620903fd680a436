/* The closed form: the idealised variance argument of varprof-maths(7), PLACEMENTS.
 *
 * Every branch output is taken to be independent of the stream, zero mean,
 * with variance g_k^2 times its input's (gamma^2 where the output is
 * normalised). The recursions are exact under those assumptions.
 */
#ifndef VARPROF_CLOSED_H
#define VARPROF_CLOSED_H

#include "varprof/config.h"
#include "varprof/profile.h"

/* Runs the recursion of cfg's placement for every sub-block and returns a new
 * profile in *out, owned by the caller (vp_profile_free). With cfg->grad it
 * also fills the backward half at infinite width (vp_closed_grad with width
 * 0): the closed form has no norm of its own, and cfg->width without one
 * would not say which directions a norm projects out; a finite-width
 * gradient is vp_closed_grad called on the profile again, with the width
 * and the norm. Fails with
 * VP_EINVAL (and err) when vp_config_check fails, VP_ENOMEM when the rows
 * cannot be allocated. A figure that overflows double is not a failure: the
 * profile stops before that sub-block and says so in overflow_at. */
vp_status vp_closed_profile(const vp_config *cfg, vp_profile **out, vp_error *err);

/* The backward half of the idealisation, varprof-maths(7), GRADIENTS, on a
 * profile whose forward rows (stream_var, gain) are already filled, by any
 * engine: sets grad_var on every row, weight_grad on every branch row (for a
 * parallel sub-block the RMS of its two branches', which are equal here) and
 * VP_HAS_GRAD in fields, overwriting any backward figures already there. It
 * reads profile->config's placement traits, gamma, alpha, beta, branches and
 * final norm (vp_config_has_final_norm) and runs down from the top row
 * (n_rows - 1, the last finite one where the forward overflowed).
 *
 * width 0 or norm VP_NORM_ANY: infinite width, the table of the manual.
 * width d > 0 with VP_NORM_LAYERNORM (p = 2) or VP_NORM_RMSNORM (p = 1): the
 * expectation, at width d, of the model the Monte Carlo samples (Gaussian
 * maps of iid N(0, b^2/d) entries, real norms, eps neglected),
 * varprof-maths(7), GRADIENTS, Finite width. It reads v_0 =
 * rows[0].stream_var and the rows' gains, not the later stream variances:
 * at finite width the gradient depends on the stream's whole distribution,
 * which the model fixes. Exact for Post-LN, DeepNorm and none (noncentral
 * chi-square integrals to 1e-10 relative); for pre-norm and parallel a
 * Laguerre-Galerkin expansion (degree 48, 240 below d = 32, 960 below
 * d = 16) within 1e-7 from d = 16, converging slowly below over long
 * stacks (2e-4 at d = 8, 64 sub-blocks); first order in 1/d for sandwich
 * and output norm. Without a norm anywhere (none
 * without a final norm) the width changes nothing. At finite width Post-LN's
 * gradient grows toward the bottom: G_0/G_K = 1.53 at d = 32, 1.23 at d = 64
 * (8 layers, gain 1, RMSNorm), where the infinite width gives 1.
 *
 * weight_grad is HUGE_VAL (no value in CSV and JSON) where a normalised
 * branch's output is zero (g = 0 under an output norm): the idealisation
 * divides by it. A grad_var beyond double is HUGE_VAL, and so is every
 * backward figure below it; profile->overflowed is then
 * VP_OVERFLOW_GRAD_VAR unless the forward had overflowed already, and the
 * rows (n_rows, overflow_at) are left as they were.
 *
 * Fails with VP_EINVAL (and err, the profile untouched) when profile is
 * NULL or has no rows, norm is out of range, profile->config fails
 * vp_config_check, width is finite but below p + 4 (16 for sandwich and
 * output norm: the first order's) with a norm, or a row has a stream
 * variance that is not finite and > 0 or a gain that is not finite and
 * >= 0; with VP_ENOMEM when the integrals' workspace cannot be allocated,
 * VP_EOVERFLOW when an integral does not converge (both leaving the
 * backward figures partly written, VP_HAS_GRAD unset). */
vp_status vp_closed_grad(vp_profile *profile, size_t width, vp_norm norm, vp_error *err);

/* The closed form at a measured profile's own gains and embedding variance:
 * what the idealisation predicts for the very network that was measured.
 * Each sub-block's measured_gain is mapped to the closed form's per-branch
 * gain as the placement table says (divided by beta^2 under DeepNet's init,
 * by sqrt(n) for n branches summed in one sub-block); v_0 is
 * rows[0].stream_var; the rest of measured->config (placement, layers,
 * gamma, alpha, beta, MLP-only) is used as it is. Sub-blocks past the
 * measured profile's overflow get gain 0. Returns a new profile in *out,
 * owned by the caller (vp_profile_free), its gains_from_file set. Fails with
 * VP_EINVAL (and err) when measured or out is NULL, when measured carries no
 * measured gains (VP_HAS_MEASURED), when it overflowed before sub-block 1, or
 * when its config fails vp_config_check; VP_ENOMEM when memory runs out. */
vp_status vp_closed_predict(const vp_profile *measured, vp_profile **out, vp_error *err);

/* How far a normalising placement's sampled embedding share sits above the
 * closed form at a finite width d, to first order in 1/d (varprof-maths(7),
 * Finite width): each token's norm divides by its own statistics, which
 * raises the mean share (Jensen), and LayerNorm's centring raises it more.
 * u_j is sub-block j's effective gain: its row's gain, times beta^2 where
 * the placement table's branch_beta draws the branch to beta^2 g, divided
 * by alpha where its residual_alpha adds it to alpha x (DeepNorm's
 * beta^2 g / alpha). */
typedef struct {
    double jensen;   /* the sum over sub-blocks 1 <= j <= k of
                        u_j^2 (2 + u_j^2) / (d (1 + u_j^2)^2) */
    double centring; /* LayerNorm's: the sum over 2 <= j <= k of
                        u_j^2 / (2 d (1 + u_j^2)); 0 for RMSNorm */
    double gain;     /* u, when every sub-block to k has the same, else NaN */
} vp_share_excess;

/* The relative excess of the embedding share at sub-block k of closed (a
 * profile whose rows carry their gains, its config the placement, alpha and
 * beta) at width `width` with `norm`, in *out. Fails with VP_EINVAL, *out
 * untouched, when out or closed is NULL, k is 0 or not below
 * closed->n_rows, or width is 0. */
vp_status vp_closed_share_excess(vp_share_excess *out, const vp_profile *closed, size_t k,
                                 size_t width, vp_norm norm);

/* The top of the stack from the constant-gain formulas of the maths table
 * (v_0 = 1), evaluated directly rather than by recursion: the two are
 * independent routes to the same numbers. */
typedef struct {
    size_t sub_blocks;      /* K */
    double stream_var;      /* v_K; HUGE_VAL where it overflows */
    double update_ratio;    /* u_K */
    double embedding_share; /* e_K; 0 where it underflows */
    double log2_share;      /* log2(e_K), always finite */
} vp_closed_top;

/* Uses cfg's placement, layers, gain, gamma, alpha and beta; ignores gains
 * and embedding_var. Fails with VP_EINVAL as vp_config_check does. */
vp_status vp_closed_form_top(const vp_config *cfg, vp_closed_top *out, vp_error *err);

#endif
