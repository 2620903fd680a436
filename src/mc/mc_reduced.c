/* The reduced method: only the components of the noise along the directions
 * the recursion uses (1 and x for LayerNorm, x for RMSNorm), plus the squared
 * norm of the rest, a chi-square with the remaining degrees of freedom. The
 * noise is isotropic, so this is the full method's distribution exactly, at a
 * cost that does not grow with d.
 *
 * Draws, all keyed by the seed: four normals per (token, sub-block) from the
 * SIMD generator (its sub-block field set to REDUCED_NORMALS, the index
 * 4k .. 4k+3), one uniform per (token, sub-block) from Philox, and, for the
 * rare chi-square the fast path rejects, GSL's sampler on a Philox stream of
 * its own (token, sub-block). */
#include <Random123/philox.h>
#include <Random123/gsl_microrng.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>

#include "mc/mc_internal.h"
#include "varprof/gauss.h"

/* A gsl_rng drawing from the Philox stream of a (token, sub-block) counter. */
GSL_MICRORNG(varprof_philox, philox4x32);

/* Counter words no full-method stream uses (sub-blocks stop at 2 million). */
#define REDUCED_NORMALS 0xFFFFFFFFu
#define REDUCED_UNIFORMS 0xFFFFFFFEu
#define REDUCED_UNIFORM_WORD 0x52454455u /* "REDU" */
#define REDUCED_FALLBACK_WORD 0x5eed0001u
#define NORMALS_PER_SUB_BLOCK 4
#define CHUNK 256 /* sub-blocks of normals per generator call */

/* Marsaglia and Tsang's constants for one number of degrees of freedom: the
 * run uses two (d - 1 for the embedding, d - 2 or d - 1 for the noise), so
 * they are worked out once, not at every draw. */
typedef struct {
    double dof, dd, c;
    int fast; /* shape >= 1: the one-try sampler applies */
} chisq_plan;

static chisq_plan plan_chisq(double dof)
{
    chisq_plan plan = {.dof = dof};
    if (0.5 * dof >= 1.0) {
        plan.dd = 0.5 * dof - 1.0 / 3.0;
        plan.c = 1.0 / sqrt(9.0 * plan.dd);
        plan.fast = 1;
    }
    return plan;
}

struct mc_reduced_workspace {
    gsl_rng *fallback;
    float normals[NORMALS_PER_SUB_BLOCK * CHUNK];
    size_t token, first_k, n_k; /* what normals holds; n_k = 0: nothing yet */
    philox4x32_ctr_t uniforms;  /* the block of four uniforms for sub-blocks 4b .. 4b+3 */
    size_t uniform_token, uniform_block;
    int have_uniforms;
};

mc_reduced_workspace *mc_reduced_workspace_alloc(void)
{
    mc_reduced_workspace *w = calloc(1, sizeof *w);
    if (w && !(w->fallback = gsl_rng_alloc(gsl_rng_varprof_philox))) {
        free(w);
        return NULL;
    }
    return w;
}

void mc_reduced_workspace_free(mc_reduced_workspace *w)
{
    if (w)
        gsl_rng_free(w->fallback);
    free(w);
}

static inline const float *normals_for(mc_reduced_workspace *w, const mc_job *job, size_t token,
                                       size_t k)
{
    if (token != w->token || k < w->first_k || k >= w->first_k + w->n_k) {
        size_t n_k = job->sub_blocks + 1 - k < CHUNK ? job->sub_blocks + 1 - k : CHUNK;
        vp_gauss_fill(w->normals, NORMALS_PER_SUB_BLOCK * n_k, job->options->seed, (uint32_t)token,
                      REDUCED_NORMALS, (uint64_t)NORMALS_PER_SUB_BLOCK * k);
        w->token = token;
        w->first_k = k;
        w->n_k = n_k;
    }
    return &w->normals[NORMALS_PER_SUB_BLOCK * (k - w->first_k)];
}

static philox4x32_key_t seed_key(unsigned long long seed)
{
    return (philox4x32_key_t){{(uint32_t)seed, (uint32_t)(seed >> 32)}};
}

/* A uniform in (0, 1) for (token, k). */
static inline double uniform_for(mc_reduced_workspace *w, unsigned long long seed, size_t token,
                                 size_t k)
{
    const size_t block = k / 4;
    if (!w->have_uniforms || block != w->uniform_block || token != w->uniform_token) {
        philox4x32_ctr_t ctr = {
            {(uint32_t)token, REDUCED_UNIFORMS, (uint32_t)block, REDUCED_UNIFORM_WORD}};
        w->uniforms = philox4x32(ctr, seed_key(seed));
        w->uniform_token = token;
        w->uniform_block = block;
        w->have_uniforms = 1;
    }
    return ((double)w->uniforms.v[k % 4] + 0.5) * 0x1p-32;
}

static double fallback_chisq(mc_reduced_workspace *w, unsigned long long seed, size_t token,
                             size_t k, double dof)
{
    /* the last counter word is the micro-generator's own */
    philox4x32_ctr_t ctr = {{(uint32_t)token, (uint32_t)k, REDUCED_FALLBACK_WORD, 0}};
    varprof_philox_reset(w->fallback, ctr, seed_key(seed));
    return gsl_ran_chisq(w->fallback, dof);
}

/* A chi-square with dof degrees of freedom: Marsaglia and Tsang's gamma
 * sampler, one try from the given normal and uniform; where that try is
 * rejected (about 1 % of draws at the smallest widths, far fewer at large
 * ones), or the shape is below 1, an independent exact draw from GSL. Either
 * branch yields the exact distribution: an accepted try is exact, and the
 * other branch is exact and independent of it. */
static inline double chi_square(mc_reduced_workspace *w, const mc_job *job, size_t token, size_t k,
                                const chisq_plan *plan, double normal, double u)
{
    if (plan->dof <= 0.0)
        return 0.0;
    if (plan->fast) {
        const double dd = plan->dd, c = plan->c;
        double v = 1.0 + c * normal;
        if (v > 0.0) {
            v = v * v * v;
            const double x2 = normal * normal;
            if (u < 1.0 - 0.0331 * x2 * x2 || log(u) < 0.5 * x2 + dd * (1.0 - v + log(v)))
                return 2.0 * dd * v;
        }
    }
    return fallback_chisq(w, job->options->seed, token, k, plan->dof);
}

static inline void sample_noise(const mc_job *job, mc_reduced_workspace *w, size_t token, size_t k,
                                const chisq_plan *rest, const mc_state *s, mc_noise *n)
{
    const mc_params *p = &job->params;
    const double d = p->d, sqrt_d = sqrt(d);
    const float *z = normals_for(w, job, token, k);
    const double u = uniform_for(w, job->options->seed, token, k);
    if (p->norm == VP_NORM_LAYERNORM) {
        /* basis: 1/sqrt(d), and x's part orthogonal to 1 */
        const double z1 = z[0], z2 = z[1];
        const double perp = sqrt(mc_max0(s->xx - s->x1 * s->x1 / d));
        n->s1 = sqrt_d * z1;
        n->sx = s->x1 / sqrt_d * z1 + perp * z2;
        n->ss = z1 * z1 + z2 * z2 + chi_square(w, job, token, k, rest, z[2], u);
    } else {
        /* RMSNorm never reads <1, .>: the direction of x is enough */
        const double z1 = z[0];
        n->s1 = 0.0;
        n->sx = sqrt(s->xx) * z1;
        n->ss = z1 * z1 + chi_square(w, job, token, k, rest, z[2], u);
    }
}

void mc_reduced_token(const mc_job *job, size_t token, mc_reduced_workspace *w)
{
    const mc_params *p = &job->params;
    const double d = p->d, v0 = job->cfg->embedding_var;
    /* x_0 = sqrt(v0) w, w ~ N(0, I): its component along 1, and the rest */
    const chisq_plan embedding = plan_chisq(d - 1.0);
    const chisq_plan rest = plan_chisq(p->norm == VP_NORM_LAYERNORM ? d - 2.0 : d - 1.0);
    const float *z = normals_for(w, job, token, 0);
    const double u = uniform_for(w, job->options->seed, token, 0);
    const double z0 = z[0];
    mc_state s;
    s.x1 = sqrt(v0 * d) * z0;
    s.xx = v0 * (z0 * z0 + chi_square(w, job, token, 0, &embedding, z[2], u));
    s.cc = s.xx;
    s.c1 = s.x1;
    mc_store(job, 0, token, &s, 0.0);
    for (size_t k = 1; k <= job->sub_blocks; k++) {
        mc_noise n;
        sample_noise(job, w, token, k, &rest, &s, &n);
        mc_plan plan;
        mc_make_plan(p, vp_config_gain(job->cfg, k), &s, &n, &plan);
        mc_apply_plan(p, &plan, &n, &s);
        mc_store(job, k, token, &s, plan.oo);
    }
}
