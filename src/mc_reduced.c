/* The reduced method: only the components of the noise along the directions
 * the recursion uses (1 and x for LayerNorm, x for RMSNorm), plus the squared
 * norm of the rest, a chi-square with the remaining degrees of freedom. The
 * noise is isotropic, so this is the full method's distribution exactly, at a
 * cost that does not grow with d. */
#include <Random123/philox.h>
#include <Random123/gsl_microrng.h>
#include <gsl/gsl_randist.h>
#include <math.h>

#include "mc_internal.h"

/* A gsl_rng drawing from the Philox stream of a (token, sub-block) counter. */
GSL_MICRORNG(varprof_philox, philox4x32);

gsl_rng *mc_reduced_rng_alloc(void)
{
    return gsl_rng_alloc(gsl_rng_varprof_philox);
}

static void start_stream(gsl_rng *rng, unsigned long long seed, size_t token, size_t k)
{
    /* the last counter word is the micro-generator's own */
    philox4x32_ctr_t ctr = {{(uint32_t)token, (uint32_t)k, 0x5eed0001u, 0}};
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    varprof_philox_reset(rng, ctr, key);
}

static double chi_square(gsl_rng *rng, double dof)
{
    return dof > 0.0 ? gsl_ran_chisq(rng, dof) : 0.0;
}

static void sample_noise(const mc_params *p, const mc_state *s, gsl_rng *rng, mc_noise *n)
{
    const double d = p->d;
    if (p->norm == VP_NORM_LAYERNORM) {
        /* basis: 1/sqrt(d), and x's part orthogonal to 1 */
        double z1 = gsl_ran_gaussian(rng, 1.0), z2 = gsl_ran_gaussian(rng, 1.0);
        double perp = sqrt(fmax(s->xx - s->x1 * s->x1 / d, 0.0));
        n->s1 = sqrt(d) * z1;
        n->sx = s->x1 / sqrt(d) * z1 + perp * z2;
        n->ss = z1 * z1 + z2 * z2 + chi_square(rng, d - 2.0);
    } else {
        /* RMSNorm never reads <1, .>: the direction of x is enough */
        double z1 = gsl_ran_gaussian(rng, 1.0);
        n->s1 = 0.0;
        n->sx = sqrt(s->xx) * z1;
        n->ss = z1 * z1 + chi_square(rng, d - 1.0);
    }
}

void mc_reduced_token(const mc_job *job, size_t token, gsl_rng *rng)
{
    const mc_params *p = &job->params;
    const double d = p->d, v0 = job->cfg->embedding_var;
    const unsigned long long seed = job->options->seed;
    start_stream(rng, seed, token, 0);
    double z = gsl_ran_gaussian(rng, 1.0);
    mc_state s;
    s.x1 = sqrt(v0 * d) * z;
    s.xx = v0 * (z * z + chi_square(rng, d - 1.0));
    s.cc = s.xx;
    s.c1 = s.x1;
    mc_store(job, 0, token, &s, 0.0);
    for (size_t k = 1; k <= job->sub_blocks; k++) {
        start_stream(rng, seed, token, k);
        mc_noise n;
        sample_noise(p, &s, rng, &n);
        mc_plan plan;
        mc_make_plan(p, vp_config_gain(job->cfg, k), &s, &n, &plan);
        mc_apply_plan(p, &plan, &n, &s);
        mc_store(job, k, token, &s, plan.oo);
    }
}
