/* The full method: every token's d coordinates, drawn and updated. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mc/mc_internal.h"
#include "varprof/gauss.h"

typedef struct {
    double *x, *c;
    float *xi, *xi2;
} workspace;

static size_t round_up(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}

static size_t forward_bytes(size_t width)
{
    return 2 * round_up(width * sizeof(double)) + 2 * round_up(width * sizeof(float));
}

size_t mc_full_workspace_bytes(size_t width, size_t sub_blocks, size_t branches, int grad)
{
    if (!grad)
        return forward_bytes(width);
    const size_t tape = mc_tape_bytes(width, sub_blocks, branches);
    return tape == 0 || tape > SIZE_MAX - forward_bytes(width) ? 0 : forward_bytes(width) + tape;
}

static workspace carve(void *memory, size_t d)
{
    char *p = memory;
    workspace w;
    w.x = (double *)p; // cppcheck-suppress invalidPointerCast ; posix_memalign'd, untyped
    p += round_up(d * sizeof(double));
    w.c = (double *)p; // cppcheck-suppress invalidPointerCast ; posix_memalign'd, untyped
    p += round_up(d * sizeof(double));
    w.xi = (float *)p; // cppcheck-suppress invalidPointerCast ; posix_memalign'd, untyped
    p += round_up(d * sizeof(float));
    w.xi2 = (float *)p; // cppcheck-suppress invalidPointerCast ; posix_memalign'd, untyped
    return w;
}

/* Whether the plan reads the noise's sums: the output norms read its mean
 * and size, the stream norms the size of what they divide. Without either
 * (pre-norm, none, parallel) g r xi is added whatever it is, and its |o|^2 is
 * summed as it is added. */
static int plan_reads_noise(const vp_placement_traits *traits)
{
    return traits->norm_out || traits->norm_stream;
}

static void start(const mc_job *job, size_t token, workspace *w, mc_state *s)
{
    const size_t d = job->options->width;
    const double scale = sqrt(job->cfg->embedding_var);
    vp_gauss_fill(w->xi, d, job->options->seed, (uint32_t)token, 0, 0);
    for (size_t i = 0; i < d; i++)
        w->x[i] = w->c[i] = 0.0;
    double sums[2];
    /* x = 0 + scale xi: the branch loop with alpha 0 */
    job->kern->mc_add_branch(w->x, sums, w->xi, d, 0.0, scale, 0.0);
    for (size_t i = 0; i < d; i++)
        w->c[i] = w->x[i];
    s->xx = s->cc = sums[0];
    s->x1 = s->c1 = sums[1];
}

/* The tape's copy of branch b's noise in sub-block k (mc_tape.h). */
static float *tape_noise(const mc_tape *tape, size_t k, size_t branch)
{
    return tape->xi + ((k - 1) * tape->branches + branch) * tape->d;
}

void mc_full_token(const mc_job *job, size_t token, void *memory)
{
    const mc_params *p = &job->params;
    const size_t d = job->options->width;
    const unsigned long long seed = job->options->seed;
    const size_t branches = vp_config_branches(job->cfg);
    const int grad = job->cfg->grad;
    workspace w = carve(memory, d);
    /* the backward's tape follows the forward's vectors; the forward's draws
       and sums are the same with it or without */
    mc_tape tape = {0};
    if (grad)
        tape = mc_tape_carve((char *)memory + forward_bytes(d), d, job->sub_blocks, branches);
    mc_state s;
    start(job, token, &w, &s);
    mc_store(job, 0, token, &s, 0.0);
    if (grad)
        memcpy(tape.x, w.x, d * sizeof *w.x);
    for (size_t k = 1; k <= job->sub_blocks; k++) {
        vp_gauss_fill(w.xi, d, seed, (uint32_t)token, (uint32_t)k, 0);
        if (grad)
            memcpy(tape_noise(&tape, k, 0), w.xi, d * sizeof *w.xi);
        for (size_t branch = 1; branch < branches; branch++) {
            /* a block's branches' noises, literally: draws d .. 2d-1 are the second */
            vp_gauss_fill(w.xi2, d, seed, (uint32_t)token, (uint32_t)k, branch * d);
            if (grad)
                memcpy(tape_noise(&tape, k, branch), w.xi2, d * sizeof *w.xi2);
            for (size_t i = 0; i < d; i++)
                w.xi[i] += w.xi2[i];
        }
        const mc_state before = s;
        mc_noise n = {0, 0, 0};
        if (plan_reads_noise(p->traits)) {
            double sums[3];
            job->kern->mc_noise_sums(sums, w.x, w.xi, d);
            n = (mc_noise){sums[0], sums[1], sums[2]};
        }
        mc_plan plan;
        mc_make_plan(p, vp_config_gain(job->cfg, k), &s, &n, &plan);
        double oo;
        if (plan.normalise) {
            double sums[4];
            oo = job->kern->mc_add_and_normalise(w.x, w.c, sums, w.xi, d, plan.alpha, plan.a,
                                                 plan.b, plan.shift, plan.scale, plan.c_shift);
            s = (mc_state){sums[0], sums[1], sums[2], sums[3]};
        } else {
            double sums[2];
            oo = job->kern->mc_add_branch(w.x, sums, w.xi, d, plan.alpha, plan.a, plan.b);
            s.xx = sums[0];
            s.x1 = sums[1];
        }
        mc_store(job, k, token, &s, oo);
        if (grad) {
            tape.steps[k - 1] = (mc_tape_step){before, n, plan, vp_config_gain(job->cfg, k)};
            memcpy(tape.x + k * d, w.x, d * sizeof *w.x);
        }
    }
    if (grad)
        mc_backward_token(job, token, &tape, &s);
}
