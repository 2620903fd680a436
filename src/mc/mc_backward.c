/* The full method's backward sweep: dL/dx_k for k = K .. 0 of one token,
 * through the same maps its forward drew (varprof-maths(7), MONTE CARLO OF
 * THE BACKWARD HALF).
 *
 * Each branch is a linear map f = A h with iid N(0, s^2 / d) entries
 * (s = g, or beta^2 g for DeepNorm). The forward drew f given h; given both,
 * the rest of A is independent of them:
 *     A = f h^T / |h|^2 + A' (I - h h^T / |h|^2),  A' a fresh copy of A,
 * so A^T delta = h <f, delta> / |h|^2 + (I - P_h) A'^T delta, and
 * A'^T delta ~ N(0, s^2 |delta|^2 / d I) is one fresh Gaussian vector: drawn
 * exactly, never forming A. The norms' Jacobians are applied as they are.
 *
 * Draws (vp_gauss_fill): the loss's r at (token, sub-block 0, d .. 2d - 1),
 * after the embedding's; branch b's A'^T direction in sub-block k at
 * (token, k, (n + b) d ..), after the forward's n noises.
 *
 * Plain loops in double, summed in index order: compiled once, outside the
 * per-ISA kernels, so every ISA and thread count gives the same bits. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mc/mc_internal.h"
#include "varprof/gauss.h"

/* A norm's statistics over a vector: its output is (v - mean) inv (mean 0
 * for RMSNorm), inv = 1 / sqrt(var + eps) or 1 / sqrt(ms + eps). */
typedef struct {
    double mean, inv;
} norm_stats;

/* From the sums mc_state keeps, as the forward's plan computes them. */
static norm_stats stats_of(const mc_params *p, double vv, double v1)
{
    const double ms = vv / p->d;
    if (p->norm == VP_NORM_LAYERNORM) {
        const double mean = v1 / p->d;
        return (norm_stats){mean, 1.0 / sqrt(mc_max0(ms - mean * mean) + p->eps)};
    }
    return (norm_stats){0.0, 1.0 / sqrt(ms + p->eps)};
}

static void normalise(double *y, const double *v, size_t d, norm_stats st)
{
    for (size_t i = 0; i < d; i++)
        y[i] = (v[i] - st.mean) * st.inv;
}

/* out = J^T delta of a norm whose output is y and whose 1/sigma is inv:
 * (delta - mean(delta) - y <y, delta> / d) inv for LayerNorm, without the
 * mean for RMSNorm. Exact with eps too: y is the output, eps and all.
 * out may be delta. */
static void norm_backward(const mc_params *p, double *out, const double *delta, const double *y,
                          size_t d, double inv)
{
    double s1 = 0.0, sy = 0.0;
    for (size_t i = 0; i < d; i++) {
        s1 += delta[i];
        sy += y[i] * delta[i];
    }
    const double mean = p->norm == VP_NORM_LAYERNORM ? s1 / p->d : 0.0;
    const double along = sy / p->d;
    for (size_t i = 0; i < d; i++)
        out[i] = (delta[i] - mean - y[i] * along) * inv;
}

static double square_sum(const double *v, size_t d)
{
    double sum = 0.0;
    for (size_t i = 0; i < d; i++)
        sum += v[i] * v[i];
    return sum;
}

/* delta_h += A^T delta_f for the branch whose output was f = f_scale xi:
 * h <f, delta_f> / |h|^2 + s rms(delta_f) (zeta - h <h, zeta> / |h|^2). */
static void add_transpose(double *delta_h, const double *delta_f, const double *h, double hh,
                          const float *xi, double f_scale, const float *zeta, double s, size_t d)
{
    double f_dot = 0.0, h_dot = 0.0;
    for (size_t i = 0; i < d; i++) {
        f_dot += (double)xi[i] * delta_f[i];
        h_dot += h[i] * (double)zeta[i];
    }
    const double fresh = s * sqrt(square_sum(delta_f, d) / (double)d);
    /* |h| = 0 (a zero stream without a norm): f is 0, A' is all of A */
    const double along_h = hh > 0.0 ? (f_scale * f_dot - fresh * h_dot) / hh : 0.0;
    for (size_t i = 0; i < d; i++)
        delta_h[i] += h[i] * along_h + fresh * (double)zeta[i];
}

/* delta_f = gamma J^T delta_y of the output norm over f = f_scale xi, whose
 * output is built in y. */
static void output_norm_backward(const mc_params *p, const mc_tape_step *step, double f_scale,
                                 const float *xi, const double *delta_y, double *delta_f, double *y,
                                 size_t d)
{
    /* the forward's plan: var(f) = f_scale^2 var(xi) (LayerNorm), ms likewise */
    const mc_noise *n = &step->noise;
    double mean = 0.0, var;
    if (p->norm == VP_NORM_LAYERNORM) {
        mean = n->s1 / p->d;
        var = f_scale * f_scale * mc_max0(n->ss / p->d - mean * mean);
    } else {
        var = f_scale * f_scale * n->ss / p->d;
    }
    const double inv = 1.0 / sqrt(var + p->eps);
    for (size_t i = 0; i < d; i++)
        y[i] = f_scale * ((double)xi[i] - mean) * inv;
    norm_backward(p, delta_f, delta_y, y, d, inv);
    for (size_t i = 0; i < d; i++)
        delta_f[i] *= p->gamma;
}

/* One sub-block backward: delta (dL/dx_k in, dL/dx_{k-1} out). */
static void sub_block_backward(const mc_job *job, size_t token, size_t k, const mc_tape *tape)
{
    const mc_params *p = &job->params;
    const vp_placement_traits *traits = p->traits;
    const size_t d = tape->d, branches = tape->branches;
    const mc_tape_step *step = &tape->steps[k - 1];
    const double *x_before = tape->x + (k - 1) * d, *x_after = tape->x + k * d;
    /* through the stream's norm: its output is x_k itself */
    if (step->plan.normalise)
        norm_backward(p, tape->delta_y, tape->delta, x_after, d, step->plan.scale);
    else
        memcpy(tape->delta_y, tape->delta, d * sizeof *tape->delta);
    /* the branches' input h */
    norm_stats in = {0.0, 1.0};
    if (traits->norm_in) {
        in = stats_of(p, step->before.xx, step->before.x1);
        normalise(tape->h, x_before, d, in);
    } else {
        memcpy(tape->h, x_before, d * sizeof *tape->h);
    }
    const double hh = square_sum(tape->h, d);
    const double f_scale = p->branch_scale * step->gain * mc_input_rms(p, &step->before);
    const double s = p->branch_scale * step->gain;
    double ff = 0.0;
    memset(tape->delta_h, 0, d * sizeof *tape->delta_h);
    for (size_t b = 0; b < branches; b++) {
        const float *xi = tape->xi + ((k - 1) * branches + b) * d;
        const double *delta_f = tape->delta_y;
        if (traits->norm_out) {
            output_norm_backward(p, step, f_scale, xi, tape->delta_y, tape->delta_f, tape->y, d);
            delta_f = tape->delta_f;
        }
        ff += square_sum(delta_f, d);
        vp_gauss_fill(tape->zeta, d, job->options->seed, (uint32_t)token, (uint32_t)k,
                      (uint64_t)(branches + b) * d);
        add_transpose(tape->delta_h, delta_f, tape->h, hh, xi, f_scale, tape->zeta, s, d);
    }
    if (traits->norm_in)
        norm_backward(p, tape->delta_h, tape->delta_h, tape->h, d, in.inv);
    for (size_t i = 0; i < d; i++)
        tape->delta[i] = p->alpha * tape->delta_y[i] + tape->delta_h[i];
    const size_t at = token * (job->sub_blocks + 1) + k;
    job->samples.ff[at] = ff / ((double)branches * p->d);
    job->samples.hh[at] = hh / p->d;
    job->samples.gg[at - 1] = square_sum(tape->delta, d) / p->d;
}

void mc_backward_token(const mc_job *job, size_t token, const mc_tape *tape, const mc_state *top)
{
    const mc_params *p = &job->params;
    const size_t d = tape->d, k_total = job->sub_blocks;
    /* the random loss L = <r, y>: dL/dy = r, isotropic, mean square 1 */
    vp_gauss_fill(tape->zeta, d, job->options->seed, (uint32_t)token, 0, d);
    for (size_t i = 0; i < d; i++)
        tape->delta[i] = tape->zeta[i];
    if (vp_config_has_final_norm(job->cfg)) {
        const norm_stats st = stats_of(p, top->xx, top->x1);
        normalise(tape->y, tape->x + k_total * d, d, st);
        norm_backward(p, tape->delta, tape->delta, tape->y, d, st.inv);
    }
    job->samples.gg[token * (k_total + 1) + k_total] = square_sum(tape->delta, d) / p->d;
    for (size_t k = k_total; k >= 1; k--)
        sub_block_backward(job, token, k, tape);
}
