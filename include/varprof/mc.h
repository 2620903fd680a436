/* Monte Carlo: the idealised argument sampled at finite width
 * (varprof-maths(7), MONTE CARLO).
 *
 * Per token, x_0 ~ N(0, v_0 I_d); each sub-block draws its branch output
 * o_k = g_k rms(h_k) xi, xi ~ N(0, I_d) fresh, applies the placement's norms
 * for real (LayerNorm or RMSNorm with eps) and tracks the embedding's
 * identity-path component c. Each quantity is a ratio of means over tokens
 * with a 95 % confidence interval (delta method); the per-token stream size
 * gives percentiles.
 *
 * Reproducible: draw i of token t in sub-block k depends only on (seed, t, k,
 * i), through Random123's Philox4x32-10, so the result is the same for any
 * number of threads and any split of the work.
 */
#ifndef VARPROF_MC_H
#define VARPROF_MC_H

#include <stddef.h>

#include "varprof/config.h"
#include "varprof/profile.h"
#include "varprof/progress.h"

#define VP_MC_MAX_WIDTH 1048576u
#define VP_MC_MAX_TRIALS 1000000000u
#define VP_MC_MAX_THREADS 1024u
#define VP_MC_DEFAULT_WIDTH 512u
#define VP_MC_DEFAULT_TRIALS 4096u
#define VP_MC_DEFAULT_EPS 1e-5

typedef enum {
    VP_MC_REDUCED, /* the few components the recursion uses, plus a chi-square: cost
                      independent of d, exact in distribution */
    VP_MC_FULL,    /* all d coordinates of every token */
} vp_mc_method;

typedef struct {
    size_t width;  /* d: 1 .. VP_MC_MAX_WIDTH (2 .. with LayerNorm) */
    size_t trials; /* tokens: 2 .. VP_MC_MAX_TRIALS */
    unsigned long long seed;
    size_t threads; /* 1 .. VP_MC_MAX_THREADS */
    vp_norm norm;   /* VP_NORM_LAYERNORM or VP_NORM_RMSNORM */
    double eps;     /* > 0, finite */
    vp_mc_method method;
    const vp_progress *progress; /* optional, not owned: tokens sampled so far */
} vp_mc_options;

/* Defaults: d = 512, 4096 trials, seed 1, one thread, LayerNorm, eps 1e-5,
 * the reduced method, no progress. */
void vp_mc_options_init(vp_mc_options *options);

/* "full", "reduced"; the generator's name for outputs. */
const char *vp_mc_method_name(vp_mc_method method);
extern const char *const vp_mc_generator;

/* Checks cfg (vp_config_check) and options against their ranges, and the
 * memory the run needs against the machine's: VP_EINVAL naming the field,
 * its value and what is allowed, or VP_ENOMEM saying what the run needs and
 * what the machine has. Nothing is allocated. */
vp_status vp_mc_check(const vp_config *cfg, const vp_mc_options *options, vp_error *err);

/* Fills *out with the header vp_mc_profile gives the profile of cfg and
 * options, without sampling: the engine, the norm, a copy of cfg, the
 * VP_HAS_* fields the rows will carry, how they are sampled (width, tokens,
 * seed, generator, method, eps) and sub_blocks; rows and n_rows are left as
 * they are. A writer heads a run with it before the run ends. Fails with
 * VP_EINVAL, *out untouched, when out, cfg or options is NULL; nothing else
 * is checked (vp_mc_check does), so options it would reject are written as
 * they are. */
vp_status vp_mc_header(vp_profile *out, const vp_config *cfg, const vp_mc_options *options);

/* Samples the profile of cfg and returns it in *out, owned by the caller
 * (vp_profile_free), with VP_HAS_BOUNDS and VP_HAS_PERCENTILES. Fails as
 * vp_mc_check does, with VP_ENOMEM when an allocation fails, VP_ETHREAD when
 * a thread cannot start. A figure that overflows double stops the profile
 * there (overflow_at), as in the closed form. */
vp_status vp_mc_profile(const vp_config *cfg, const vp_mc_options *options, vp_profile **out,
                        vp_error *err);

#endif
