/* The full method: every token's d coordinates, drawn and updated. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mc_internal.h"
#include "varprof/gauss.h"

/* Four partial sums per reduction: independent chains the compiler can keep
 * in flight (and vectorise) without reassociating a single sum. */
enum { LANES = 4 };

typedef struct {
    double *x, *c;
    float *xi, *xi2;
} workspace;

static size_t round_up(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}

size_t mc_full_workspace_bytes(size_t width)
{
    return 2 * round_up(width * sizeof(double)) + 2 * round_up(width * sizeof(float));
}

static workspace carve(void *memory, size_t d)
{
    char *p = memory;
    workspace w;
    w.x = (double *)p;
    p += round_up(d * sizeof(double));
    w.c = (double *)p;
    p += round_up(d * sizeof(double));
    w.xi = (float *)p;
    p += round_up(d * sizeof(float));
    w.xi2 = (float *)p;
    return w;
}

static double total(const double acc[LANES])
{
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* <1, xi>, <x, xi>, |xi|^2 */
static void noise_sums(const double *x, const float *xi, size_t d, mc_noise *n)
{
    double s1[LANES] = {0}, sx[LANES] = {0}, ss[LANES] = {0};
    size_t i = 0;
    for (; i + LANES <= d; i += LANES)
        for (int l = 0; l < LANES; l++) {
            double v = xi[i + l];
            s1[l] += v;
            sx[l] += x[i + l] * v;
            ss[l] += v * v;
        }
    for (; i < d; i++) {
        double v = xi[i];
        s1[0] += v;
        sx[0] += x[i] * v;
        ss[0] += v * v;
    }
    n->s1 = total(s1);
    n->sx = total(sx);
    n->ss = total(ss);
}

/* x <- alpha x + a xi + b, summing |o|^2, |x|^2 and <1, x>; returns |o|^2. */
static double add_branch(double *x, const float *xi, size_t d, const mc_plan *plan,
                         mc_state *s)
{
    const double a = plan->a, b = plan->b, alpha = plan->alpha;
    double oo[LANES] = {0}, xx[LANES] = {0}, x1[LANES] = {0};
    size_t i = 0;
    for (; i + LANES <= d; i += LANES)
        for (int l = 0; l < LANES; l++) {
            double o = a * xi[i + l] + b;
            double y = alpha * x[i + l] + o;
            x[i + l] = y;
            oo[l] += o * o;
            xx[l] += y * y;
            x1[l] += y;
        }
    for (; i < d; i++) {
        double o = a * xi[i] + b;
        double y = alpha * x[i] + o;
        x[i] = y;
        oo[0] += o * o;
        xx[0] += y * y;
        x1[0] += y;
    }
    s->xx = total(xx);
    s->x1 = total(x1);
    return total(oo);
}

/* As add_branch, then the norm: x <- (y - shift) scale, c <- (alpha c -
 * c_shift) scale. */
static double add_and_normalise(double *x, double *c, const float *xi, size_t d,
                                const mc_plan *plan, mc_state *s)
{
    const double a = plan->a, b = plan->b, alpha = plan->alpha;
    const double shift = plan->shift, scale = plan->scale, c_shift = plan->c_shift;
    double oo[LANES] = {0}, xx[LANES] = {0}, x1[LANES] = {0}, cc[LANES] = {0}, c1[LANES] = {0};
    size_t i = 0;
    for (; i + LANES <= d; i += LANES)
        for (int l = 0; l < LANES; l++) {
            double o = a * xi[i + l] + b;
            double y = ((alpha * x[i + l] + o) - shift) * scale;
            double e = (alpha * c[i + l] - c_shift) * scale;
            x[i + l] = y;
            c[i + l] = e;
            oo[l] += o * o;
            xx[l] += y * y;
            x1[l] += y;
            cc[l] += e * e;
            c1[l] += e;
        }
    for (; i < d; i++) {
        double o = a * xi[i] + b;
        double y = ((alpha * x[i] + o) - shift) * scale;
        double e = (alpha * c[i] - c_shift) * scale;
        x[i] = y;
        c[i] = e;
        oo[0] += o * o;
        xx[0] += y * y;
        x1[0] += y;
        cc[0] += e * e;
        c1[0] += e;
    }
    s->xx = total(xx);
    s->x1 = total(x1);
    s->cc = total(cc);
    s->c1 = total(c1);
    return total(oo);
}

static void start(const mc_job *job, size_t token, workspace *w, mc_state *s)
{
    const size_t d = job->options->width;
    const double scale = sqrt(job->cfg->embedding_var);
    vp_gauss_fill(w->xi, d, job->options->seed, (uint32_t)token, 0, 0);
    double xx[LANES] = {0}, x1[LANES] = {0};
    for (size_t i = 0; i < d; i++) {
        double v = scale * w->xi[i];
        w->x[i] = v;
        w->c[i] = v;
        xx[i % LANES] += v * v;
        x1[i % LANES] += v;
    }
    s->xx = s->cc = total(xx);
    s->x1 = s->c1 = total(x1);
}

void mc_full_token(const mc_job *job, size_t token, void *memory)
{
    const mc_params *p = &job->params;
    const size_t d = job->options->width;
    const unsigned long long seed = job->options->seed;
    workspace w = carve(memory, d);
    mc_state s;
    start(job, token, &w, &s);
    mc_store(job, 0, token, &s, 0.0);
    for (size_t k = 1; k <= job->sub_blocks; k++) {
        vp_gauss_fill(w.xi, d, seed, (uint32_t)token, (uint32_t)k, 0);
        if (p->placement == VP_PARALLEL) {
            /* the two branches' noises, literally: draws d .. 2d-1 are the second */
            vp_gauss_fill(w.xi2, d, seed, (uint32_t)token, (uint32_t)k, d);
            for (size_t i = 0; i < d; i++)
                w.xi[i] += w.xi2[i];
        }
        mc_noise n;
        noise_sums(w.x, w.xi, d, &n);
        mc_plan plan;
        mc_make_plan(p, vp_config_gain(job->cfg, k), &s, &n, &plan);
        double oo = plan.normalise ? add_and_normalise(w.x, w.c, w.xi, d, &plan, &s)
                                   : add_branch(w.x, w.xi, d, &plan, &s);
        mc_store(job, k, token, &s, oo);
    }
}
