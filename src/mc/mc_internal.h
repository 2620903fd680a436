/* What the Monte Carlo's parts share: the job, and each method's token. */
#ifndef VARPROF_MC_INTERNAL_H
#define VARPROF_MC_INTERNAL_H

#include "kernels/kern_table.h"
#include "mc/mc_step.h"
#include "mc/mc_tape.h"
#include "varprof/mc.h"

/* Per-token results, per coordinate, token t's sub-block k at
 * [t * (K + 1) + k]: a token writes its own contiguous run, so the sampling
 * threads never share a cache line but at the ends of their ranges. */
typedef struct {
    double *xx; /* |x_k|^2 / d */
    double *oo; /* |o_k|^2 / d, k >= 1 */
    double *cc; /* |c_k|^2 / d */
    /* the backward half (cfg->grad), NULL without it */
    double *gg; /* |dL/dx_k|^2 / d */
    double *ff; /* |dL/df_k|^2 / d, k >= 1, the mean over the sub-block's branches */
    double *hh; /* |h_k|^2 / d, k >= 1, the branches' input */
} mc_samples;

typedef struct {
    const vp_config *cfg;
    const vp_mc_options *options;
    mc_params params;
    size_t sub_blocks;      /* K */
    const kern_table *kern; /* the full method's loops, for the ISA in use */
    mc_samples samples;
} mc_job;

static inline void mc_store(const mc_job *job, size_t k, size_t token, const mc_state *s, double oo)
{
    const size_t at = token * (job->sub_blocks + 1) + k;
    job->samples.xx[at] = s->xx / job->params.d;
    job->samples.cc[at] = s->cc / job->params.d;
    job->samples.oo[at] = oo / job->params.d;
}

/* Sub-block k's column of samples, one per token, into column[0..trials). */
static inline void mc_gather(const mc_job *job, const double *samples, size_t k, double *column)
{
    const size_t stride = job->sub_blocks + 1, n = job->options->trials;
    for (size_t t = 0; t < n; t++)
        column[t] = samples[t * stride + k];
}

/* What a Monte Carlo profile says of itself before its rows
 * (profile_set_header): the engine, the norm, cfg, the fields, the
 * sampling. vp_mc_header publishes it, for a writer to head a run with. */
void mc_set_header(vp_profile *profile, const vp_config *cfg, const vp_mc_options *options);

/* The reduced method, with a per-thread workspace (NULL when memory runs out). */
typedef struct mc_reduced_workspace mc_reduced_workspace;
mc_reduced_workspace *mc_reduced_workspace_alloc(void);
void mc_reduced_workspace_free(mc_reduced_workspace *workspace);
void mc_reduced_token(const mc_job *job, size_t token, mc_reduced_workspace *workspace);

/* The full method: memory is its workspace, mc_full_workspace_bytes of it,
 * 64-byte aligned; with grad, the backward's tape too (0: past size_t). */
size_t mc_full_workspace_bytes(size_t width, size_t sub_blocks, size_t branches, int grad);
void mc_full_token(const mc_job *job, size_t token, void *memory);

/* The backward sweep of one token whose forward the tape holds, top the
 * stream's sums after sub-block K: fills the token's gg, ff and hh
 * (varprof-maths(7), MONTE CARLO OF THE BACKWARD HALF). */
void mc_backward_token(const mc_job *job, size_t token, const mc_tape *tape, const mc_state *top);

/* Turns the samples into the profile's rows: estimates, 95 % bounds,
 * standard errors and percentiles; sets overflow_at where a figure is not
 * finite. VP_ENOMEM when the percentiles' scratch cannot be allocated. */
vp_status mc_fill_rows(const mc_job *job, vp_profile *profile);

/* The backward half's figures in the rows mc_fill_rows left: grad_var,
 * weight_grad, their standard errors and bounds, and grad_size's bounds.
 * VP_EOVERFLOW (and err) when the forward stopped early, so that the
 * backward had no top to start from. A backward figure beyond double makes
 * it and every one below it HUGE_VAL, and overflowed VP_OVERFLOW_GRAD_VAR. */
vp_status mc_fill_grad_rows(const mc_job *job, vp_profile *profile, vp_error *err);

/* The bytes a run would allocate at the most: VP_EOVERFLOW (and err) when
 * that does not fit in size_t. */
vp_status mc_memory_needed(const vp_config *cfg, const vp_mc_options *options, size_t *bytes,
                           vp_error *err);

#endif
