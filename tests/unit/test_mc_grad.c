/* The Monte Carlo's backward half held to independent references: a literal
 * sampler of the same model (every branch's matrix drawn in full by GSL, the
 * gradient carried down by reverse mode, itself checked by finite
 * differences), the closed form at the sampled width d (its expectation,
 * vp_closed_grad), Post-LN's bulk factor integrated here on its own; and
 * itself under any thread count and instruction set. */
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/isa.h"
#include "varprof/varprof.h"

/* Agreement: within this many standard errors (the bound). */
#define N_SE 4.0

static vp_profile *sample_grad(vp_placement placement, size_t layers, double gain, vp_norm norm,
                               size_t width, size_t trials, unsigned long long seed, size_t threads)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.gain = gain;
    cfg.grad = 1;
    vp_mc_options o;
    vp_mc_options_init(&o);
    o.norm = norm;
    o.width = width;
    o.trials = trials;
    o.method = VP_MC_FULL;
    o.seed = seed;
    o.threads = threads;
    vp_profile *p = NULL;
    vp_error err;
    if (vp_mc_profile(&cfg, &o, &p, &err) != VP_OK) {
        print_error("vp_mc_profile: %s\n", err.message);
        fail();
    }
    assert_true(p->fields & VP_HAS_GRAD);
    return p;
}

static int check(const char *what, const vp_profile *p, size_t k, double want, double got,
                 double se, int report_only)
{
    if (fabs(got - want) <= N_SE * se)
        return 1;
    print_error("%s, %s, %s, d = %zu, gain %g, sub-block %zu: sampled %.6g, reference %.6g, "
                "%.1f standard errors of %.3g\n",
                what, vp_placement_name(p->config.placement), vp_norm_name(p->norm),
                p->sampling.width, p->config.gain, k, got, want, (got - want) / se, se);
    if (!report_only)
        fail();
    return 0;
}

/* ---- the literal sampler: the same model, every matrix drawn in full ---- */

typedef struct {
    vp_norm norm;
    size_t d;
    double eps;
} lit_norm;

/* y = N(x), keeping 1/sigma; LayerNorm's biased variance, as PyTorch */
static double lit_norm_forward(const lit_norm *n, double *y, const double *x)
{
    double mean = 0.0, var = 0.0;
    for (size_t i = 0; i < n->d; i++)
        mean += x[i];
    mean = n->norm == VP_NORM_LAYERNORM ? mean / (double)n->d : 0.0;
    for (size_t i = 0; i < n->d; i++)
        var += (x[i] - mean) * (x[i] - mean);
    const double rstd = 1.0 / sqrt(var / (double)n->d + n->eps);
    for (size_t i = 0; i < n->d; i++)
        y[i] = (x[i] - mean) * rstd;
    return rstd;
}

/* reverse mode through y = (x - mean) rstd, the mean and the variance taken
 * apart as llm.c's layernorm_backward does: dx = rstd (dy - mean(dy) -
 * y mean(dy y)), the mean term only where the norm centres */
static void lit_norm_backward(const lit_norm *n, double *dx, const double *dy, const double *y,
                              double rstd)
{
    double dy_mean = 0.0, dy_y_mean = 0.0;
    for (size_t i = 0; i < n->d; i++) {
        dy_mean += dy[i];
        dy_y_mean += dy[i] * y[i];
    }
    dy_mean = n->norm == VP_NORM_LAYERNORM ? dy_mean / (double)n->d : 0.0;
    dy_y_mean /= (double)n->d;
    for (size_t i = 0; i < n->d; i++)
        dx[i] = rstd * (dy[i] - dy_mean - y[i] * dy_y_mean);
}

#define LIT_MAX_D 64
#define LIT_MAX_K 16

/* One token of the model, every quantity kept for reverse mode. */
typedef struct {
    size_t d, k_total, branches;
    const vp_placement_traits *t;
    double alpha, gamma, s; /* s: the matrices' entries are N(0, s^2 / d) */
    int final_norm;
    lit_norm norm;
    double x[LIT_MAX_K + 1][LIT_MAX_D]; /* the stream after each sub-block */
    double h[LIT_MAX_K + 1][LIT_MAX_D]; /* the branches' input */
    double rstd_in[LIT_MAX_K + 1];
    double a[LIT_MAX_K + 1][2][LIT_MAX_D * LIT_MAX_D]; /* A_b, row-major [out][in] */
    double f[LIT_MAX_K + 1][2][LIT_MAX_D];             /* A_b h */
    double fn[LIT_MAX_K + 1][2][LIT_MAX_D];            /* N(f), under an output norm */
    double rstd_out[LIT_MAX_K + 1][2];
    double rstd_stream[LIT_MAX_K + 1];
    double top[LIT_MAX_D], rstd_top; /* the final norm's output */
    double r[LIT_MAX_D];             /* dL/d(head input) */
} lit_token;

static void lit_setup(lit_token *tk, const vp_config *cfg, vp_norm norm, size_t d)
{
    tk->d = d;
    tk->k_total = vp_config_sub_blocks(cfg);
    tk->branches = vp_config_branches(cfg);
    tk->t = vp_placement_traits_of(cfg->placement);
    tk->alpha = tk->t->residual_alpha ? cfg->alpha : 1.0;
    tk->gamma = cfg->gamma;
    tk->s = (tk->t->branch_beta ? cfg->beta * cfg->beta : 1.0) * cfg->gain;
    tk->final_norm = vp_config_has_final_norm(cfg);
    tk->norm = (lit_norm){norm, d, VP_MC_DEFAULT_EPS};
}

/* x[0] must be set; runs the forward from it with the matrices as drawn */
static double lit_forward(lit_token *tk)
{
    const size_t d = tk->d;
    for (size_t k = 1; k <= tk->k_total; k++) {
        const double *x = tk->x[k - 1];
        if (tk->t->norm_in)
            tk->rstd_in[k] = lit_norm_forward(&tk->norm, tk->h[k], x);
        else
            memcpy(tk->h[k], x, d * sizeof *x);
        double y[LIT_MAX_D];
        for (size_t i = 0; i < d; i++)
            y[i] = tk->alpha * x[i];
        for (size_t b = 0; b < tk->branches; b++) {
            for (size_t i = 0; i < d; i++) {
                double sum = 0.0;
                for (size_t j = 0; j < d; j++)
                    sum += tk->a[k][b][i * d + j] * tk->h[k][j];
                tk->f[k][b][i] = sum;
            }
            const double *out = tk->f[k][b];
            double scale = 1.0;
            if (tk->t->norm_out) {
                tk->rstd_out[k][b] = lit_norm_forward(&tk->norm, tk->fn[k][b], tk->f[k][b]);
                out = tk->fn[k][b];
                scale = tk->gamma;
            }
            for (size_t i = 0; i < d; i++)
                y[i] += scale * out[i];
        }
        if (tk->t->norm_stream)
            tk->rstd_stream[k] = lit_norm_forward(&tk->norm, tk->x[k], y);
        else
            memcpy(tk->x[k], y, d * sizeof *y);
    }
    const double *head = tk->x[tk->k_total];
    if (tk->final_norm) {
        tk->rstd_top = lit_norm_forward(&tk->norm, tk->top, head);
        head = tk->top;
    }
    double loss = 0.0;
    for (size_t i = 0; i < d; i++)
        loss += tk->r[i] * head[i];
    return loss;
}

/* Per-token figures: |dL/dx_k|^2 / d, and for k >= 1 the mean over branches
 * of |dL/df|^2 / d and |h|^2 / d. grad0 (optional) gets dL/dx_0. */
static void lit_backward(const lit_token *tk, double *gg, double *ff, double *hh, double *grad0)
{
    const size_t d = tk->d;
    double delta[LIT_MAX_D];
    memcpy(delta, tk->r, d * sizeof *delta);
    if (tk->final_norm)
        lit_norm_backward(&tk->norm, delta, delta, tk->top, tk->rstd_top);
    for (size_t k = tk->k_total;; k--) {
        double sq = 0.0;
        for (size_t i = 0; i < d; i++)
            sq += delta[i] * delta[i];
        gg[k] = sq / (double)d;
        if (k == 0)
            break;
        double dy[LIT_MAX_D], dh[LIT_MAX_D] = {0}, dx[LIT_MAX_D];
        if (tk->t->norm_stream)
            lit_norm_backward(&tk->norm, dy, delta, tk->x[k], tk->rstd_stream[k]);
        else
            memcpy(dy, delta, d * sizeof *dy);
        double f_sq = 0.0, h_sq = 0.0;
        for (size_t b = 0; b < tk->branches; b++) {
            double df[LIT_MAX_D];
            if (tk->t->norm_out) {
                double dn[LIT_MAX_D];
                for (size_t i = 0; i < d; i++)
                    dn[i] = tk->gamma * dy[i];
                lit_norm_backward(&tk->norm, df, dn, tk->fn[k][b], tk->rstd_out[k][b]);
            } else {
                memcpy(df, dy, d * sizeof *df);
            }
            for (size_t i = 0; i < d; i++) {
                f_sq += df[i] * df[i];
                for (size_t j = 0; j < d; j++)
                    dh[j] += tk->a[k][b][i * d + j] * df[i]; /* A^T df */
            }
        }
        for (size_t i = 0; i < d; i++)
            h_sq += tk->h[k][i] * tk->h[k][i];
        ff[k] = f_sq / ((double)tk->branches * (double)d);
        hh[k] = h_sq / (double)d;
        if (tk->t->norm_in)
            lit_norm_backward(&tk->norm, dx, dh, tk->h[k], tk->rstd_in[k]);
        else
            memcpy(dx, dh, d * sizeof *dx);
        for (size_t i = 0; i < d; i++)
            delta[i] = tk->alpha * dy[i] + dx[i];
    }
    if (grad0)
        memcpy(grad0, delta, d * sizeof *delta);
}

static void lit_draw(lit_token *tk, gsl_rng *rng, double v0)
{
    const size_t d = tk->d;
    for (size_t i = 0; i < d; i++) {
        tk->x[0][i] = sqrt(v0) * gsl_ran_gaussian_ziggurat(rng, 1.0);
        tk->r[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    }
    const double sd = tk->s / sqrt((double)d);
    for (size_t k = 1; k <= tk->k_total; k++)
        for (size_t b = 0; b < tk->branches; b++)
            for (size_t e = 0; e < d * d; e++)
                tk->a[k][b][e] = gsl_ran_gaussian_ziggurat(rng, sd);
}

/* The reverse mode of the literal sampler is the derivative: central
 * differences of L = <r, y> in x_0, in double, agree to 1e-6 relative to the
 * gradient's norm (the differences' own error is about h^2 = 1e-10). */
static void literal_sampler_is_the_derivative(void **state)
{
    (void)state;
    static lit_token tk;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++)
        for (int nm = 0; nm < 2; nm++) {
            vp_config cfg;
            vp_config_init(&cfg, (vp_placement)pl, 2);
            cfg.gain = 0.8;
            const size_t d = 7;
            lit_setup(&tk, &cfg, nm ? VP_NORM_RMSNORM : VP_NORM_LAYERNORM, d);
            lit_draw(&tk, rng, 1.0);
            double gg[LIT_MAX_K + 1], ff[LIT_MAX_K + 1], hh[LIT_MAX_K + 1], grad0[LIT_MAX_D];
            lit_forward(&tk);
            lit_backward(&tk, gg, ff, hh, grad0);
            const double step = 1e-5;
            double worst = 0.0, norm = sqrt(gg[0] * (double)d);
            for (size_t i = 0; i < d; i++) {
                const double x = tk.x[0][i];
                tk.x[0][i] = x + step;
                const double up = lit_forward(&tk);
                tk.x[0][i] = x - step;
                const double down = lit_forward(&tk);
                tk.x[0][i] = x;
                worst = fmax(worst, fabs((up - down) / (2.0 * step) - grad0[i]));
            }
            if (!(worst <= 1e-6 * norm)) {
                print_error("%s, %s: reverse mode against central differences: %.3g off, "
                            "|grad| %.3g\n",
                            vp_placement_name((vp_placement)pl), nm ? "rmsnorm" : "layernorm",
                            worst, norm);
                fail();
            }
        }
    gsl_rng_free(rng);
}

typedef struct {
    double gg[LIT_MAX_K + 1], gg_se[LIT_MAX_K + 1];
    double wg[LIT_MAX_K + 1], wg_se[LIT_MAX_K + 1];
} lit_profile;

static void mean_se(const double *x, size_t n, double *mean, double *se)
{
    double sum = 0.0, sq = 0.0;
    for (size_t t = 0; t < n; t++)
        sum += x[t];
    *mean = sum / (double)n;
    for (size_t t = 0; t < n; t++)
        sq += (x[t] - *mean) * (x[t] - *mean);
    *se = sqrt(sq / (double)(n - 1) / (double)n);
}

/* The literal sampler's G_k and weight_grad_k (sqrt(mean ff mean hh)) over n
 * tokens, with standard errors: by the delta method for the product, on
 * columns kept per token. */
static void lit_profile_of(const vp_config *cfg, vp_norm norm, size_t d, size_t n,
                           unsigned long seed, lit_profile *out)
{
    static lit_token tk;
    lit_setup(&tk, cfg, norm, d);
    const size_t k_total = tk.k_total;
    double *cols = malloc(3 * (k_total + 1) * n * sizeof *cols);
    assert_non_null(cols);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    for (size_t t = 0; t < n; t++) {
        double gg[LIT_MAX_K + 1], ff[LIT_MAX_K + 1] = {0}, hh[LIT_MAX_K + 1] = {0};
        lit_draw(&tk, rng, cfg->embedding_var);
        lit_forward(&tk);
        lit_backward(&tk, gg, ff, hh, NULL);
        for (size_t k = 0; k <= k_total; k++) {
            cols[(0 * (k_total + 1) + k) * n + t] = gg[k];
            cols[(1 * (k_total + 1) + k) * n + t] = ff[k];
            cols[(2 * (k_total + 1) + k) * n + t] = hh[k];
        }
    }
    for (size_t k = 0; k <= k_total; k++) {
        const double *g = &cols[(0 * (k_total + 1) + k) * n];
        const double *f = &cols[(1 * (k_total + 1) + k) * n];
        const double *h = &cols[(2 * (k_total + 1) + k) * n];
        mean_se(g, n, &out->gg[k], &out->gg_se[k]);
        double mf, mh, se_unused;
        mean_se(f, n, &mf, &se_unused);
        mean_se(h, n, &mh, &se_unused);
        out->wg[k] = sqrt(mf * mh);
        double sq = 0.0;
        for (size_t t = 0; k > 0 && t < n; t++) {
            const double infl = 0.5 * out->wg[k] * ((f[t] - mf) / mf + (h[t] - mh) / mh);
            sq += infl * infl;
        }
        out->wg_se[k] = sqrt(sq / (double)(n - 1) / (double)n);
    }
    gsl_rng_free(rng);
    free(cols);
}

static const vp_norm norms[] = {VP_NORM_LAYERNORM, VP_NORM_RMSNORM};

/* The exact conditional draw samples the same distribution as the whole
 * matrices: for every placement and both norms, at d = 32 where the finite
 * width shows, G_k and weight_grad_k within 4 joint standard errors of the
 * literal sampler's (3 layers, gain 1, 3000 tokens each). */
static void agrees_with_the_literal_sampler(void **state)
{
    (void)state;
    const size_t d = 32, n = 3000;
    static lit_profile lit;
    for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++)
        for (int nm = 0; nm < 2; nm++) {
            vp_profile *mc = sample_grad((vp_placement)pl, 3, 1.0, norms[nm], d, n, 21 + pl, 2);
            lit_profile_of(&mc->config, norms[nm], d, n, 31 + (unsigned long)pl, &lit);
            for (size_t k = 0; k < mc->n_rows; k++) {
                const vp_row *r = &mc->rows[k];
                check("grad_var against the literal sampler", mc, k, lit.gg[k], r->grad_var,
                      hypot(r->grad_var_se, lit.gg_se[k]), 0);
                if (k > 0)
                    check("weight_grad against the literal sampler", mc, k, lit.wg[k],
                          r->weight_grad, hypot(r->weight_grad_se, lit.wg_se[k]), 0);
            }
            vp_profile_free(mc);
        }
}

static void sample_is_the_same_for_any_thread_count(void **state)
{
    (void)state;
    vp_profile *one = sample_grad(VP_PARALLEL, 3, 1.0, VP_NORM_LAYERNORM, 40, 301, 9, 1);
    vp_profile *three = sample_grad(VP_PARALLEL, 3, 1.0, VP_NORM_LAYERNORM, 40, 301, 9, 3);
    assert_memory_equal(one->rows, three->rows, one->n_rows * sizeof(vp_row));
    vp_profile_free(one);
    vp_profile_free(three);
}

/* Post-LN with RMSNorm, one sub-block in the bulk (0 < k - 1, k < K):
 * x_{k-1} has |x|^2 = d (eps aside), y = x + g xi, and dL/dx_k is
 * orthogonal to x_k (the next sub-block is scale-invariant in it), so
 * backward dL/dx_{k-1} = (I - P_x)(I + A'^T) dL/dx_k / sigma, sigma^2 =
 * |y|^2 / d, and with z, c the parts of xi along x and across it
 * (|y|^2 = (sqrt d + g z)^2 + g^2 c, c ~ chi-square(d - 1)):
 *     F = G_{k-1} / G_k = (1 + g^2 (1 - 1/d)) E[d / |y|^2]
 *                         - g^2 d / (d - 1) E[c / |y|^4].
 * Integrated here: the trapezoid over z (spectrally exact for a Gaussian),
 * GSL's adaptive quadrature over c. */
typedef struct {
    double d, g, a; /* a = (sqrt d + g z)^2 */
    int term;       /* 0: d / |y|^2, 1: c / |y|^4 */
} bulk_integrand;

static double over_c(double c, void *params)
{
    const bulk_integrand *b = params;
    const double yy = b->a + b->g * b->g * c;
    const double value = b->term == 0 ? b->d / yy : c / (yy * yy);
    return value * gsl_ran_chisq_pdf(c, b->d - 1.0);
}

static double post_ln_bulk_factor(double d, double g)
{
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(200);
    double term[2] = {0.0, 0.0};
    const double dz = 0.02;
    for (double z = -10.0; z <= 10.0 + 1e-9; z += dz) {
        bulk_integrand b = {d, g, (sqrt(d) + g * z) * (sqrt(d) + g * z), 0};
        gsl_function fn = {over_c, &b};
        for (b.term = 0; b.term < 2; b.term++) {
            double value, error;
            assert_int_equal(gsl_integration_qag(&fn, 0.0, d + 40.0 * sqrt(2.0 * d), 0.0, 1e-10,
                                                 200, GSL_INTEG_GAUSS41, ws, &value, &error),
                             0);
            term[b.term] += value * exp(-0.5 * z * z) / sqrt(2.0 * M_PI) * dz;
        }
    }
    gsl_integration_workspace_free(ws);
    return (1.0 + g * g * (1.0 - 1.0 / d)) * term[0] - g * g * d / (d - 1.0) * term[1];
}

/* The "product" at finite width, measured: Post-LN's gradient is flat in
 * the infinite-width closed form, and the (1 - p/d)-per-norm factor would
 * make it decay toward the embedding; sampled at d = 32 it grows instead,
 * by F per sub-block (above; 1 + g^2 (2 + g^2) / (d (1 + g^2)^2) to first
 * order, 1.0248 at g = 1). Over the K - 2 = 14 bulk sub-blocks of 8 layers:
 * F^14 = 1.41 against 1 (infinite width) and (1 - 1/32)^14 = 0.64. */
static void post_ln_gradient_grows_at_finite_width(void **state)
{
    (void)state;
    const double d = 32.0, g = 1.0;
    const double factor = post_ln_bulk_factor(d, g);
    print_message("Post-LN bulk factor at d = 32, g = 1: %.6f\n", factor);
    /* the first order in 1/d is within 2/d^2 of it (1.0248 against 1.0234) */
    assert_true(fabs(factor - (1.0 + g * g * (2.0 + g * g) / (d * (1.0 + g * g) * (1.0 + g * g)))) <
                2.0 / (d * d));
    vp_profile *mc = sample_grad(VP_POST_LN, 8, g, VP_NORM_RMSNORM, 32, 20000, 77, 2);
    const size_t k_total = mc->n_rows - 1;
    const vp_row *low = &mc->rows[1], *high = &mc->rows[k_total - 1];
    const double ratio = low->grad_var / high->grad_var;
    /* the two means share their tokens and are positively correlated:
       adding their relative errors in quadrature overstates the error */
    const double se =
        ratio * hypot(low->grad_var_se / low->grad_var, high->grad_var_se / high->grad_var);
    const double steps = (double)(k_total - 2);
    print_message("G_1 / G_{K-1} sampled %.4f +- %.4f, F^%g = %.4f\n", ratio, se, steps,
                  pow(factor, steps));
    check("Post-LN's bulk gradient ratio G_1 / G_{K-1} against F^(K-2)", mc, 1, pow(factor, steps),
          ratio, se, 0);
    /* neither the infinite width's flat 1 nor (1 - p/d)'s decay */
    vp_config cfg = mc->config;
    vp_profile *closed;
    assert_int_equal(vp_closed_profile(&cfg, &closed, NULL), VP_OK);
    assert_true(fabs(closed->rows[1].grad_var / closed->rows[k_total - 1].grad_var - 1.0) < 1e-12);
    assert_true(ratio - 1.0 > N_SE * se);
    assert_true(ratio - pow(1.0 - 1.0 / d, steps) > N_SE * se);
    vp_profile_free(closed);
    vp_profile_free(mc);
}

/* The closed form at width d is the Monte Carlo's own expectation
 * (vp_closed_grad; varprof-maths(7), Finite width): for every placement,
 * both norms, with and without a final norm, G_k and weight_grad_k within
 * 4 standard errors of it (4 layers, gain 1, 3000 tokens). Exact at d = 32
 * but for sandwich and output norm, which are first order in 1/d and held
 * at d = 128, where the second order is below a tenth of a standard error. */
static void agrees_with_the_finite_width_closed_form(void **state)
{
    (void)state;
    const size_t n = 3000;
    double worst = 0.0;
    for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++)
        for (int nm = 0; nm < 2; nm++)
            for (int fn = 0; fn < 2; fn++) {
                const vp_placement_traits *t = vp_placement_traits_of((vp_placement)pl);
                const size_t d = t->norm_out ? 128 : 32;
                vp_config cfg;
                vp_config_init(&cfg, (vp_placement)pl, 4);
                cfg.grad = 1;
                cfg.final_norm = fn ? VP_FINAL_NORM_YES : VP_FINAL_NORM_NO;
                vp_mc_options o;
                vp_mc_options_init(&o);
                o.norm = norms[nm];
                o.width = d;
                o.trials = n;
                o.method = VP_MC_FULL;
                o.seed = 101 + (unsigned long long)(4 * pl + 2 * nm + fn);
                o.threads = 2;
                vp_profile *mc = NULL, *closed = NULL;
                vp_error err;
                assert_int_equal(vp_mc_profile(&cfg, &o, &mc, &err), VP_OK);
                assert_int_equal(vp_closed_profile(&cfg, &closed, &err), VP_OK);
                assert_int_equal(vp_closed_grad(closed, d, norms[nm], &err), VP_OK);
                for (size_t k = 0; k < mc->n_rows; k++) {
                    const vp_row *m = &mc->rows[k], *c = &closed->rows[k];
                    worst = fmax(worst, fabs(m->grad_var - c->grad_var) / m->grad_var_se);
                    check("grad_var against the finite-width closed form", mc, k, c->grad_var,
                          m->grad_var, m->grad_var_se, 0);
                    if (k == 0)
                        continue;
                    worst = fmax(worst, fabs(m->weight_grad - c->weight_grad) / m->weight_grad_se);
                    check("weight_grad against the finite-width closed form", mc, k, c->weight_grad,
                          m->weight_grad, m->weight_grad_se, 0);
                }
                vp_profile_free(closed);
                vp_profile_free(mc);
            }
    print_message("worst: %.2f standard errors\n", worst);
}

/* The rows of a small run, as bytes: what every ISA must give alike. */
static vp_profile *isa_probe(void)
{
    return sample_grad(VP_SANDWICH, 2, 1.0, VP_NORM_RMSNORM, 77, 200, 4, 2);
}

/* Runs this program again with VARPROF_ISA=isa, which prints isa_probe's
 * rows (the ISA is chosen once per process); returns the bytes read. */
static size_t probe_with_isa(const char *isa, unsigned char *out, size_t size)
{
    setenv("VARPROF_ISA", isa, 1);
    setenv("MC_GRAD_PROBE", "1", 1);
    /* popen's shell would be /proc/self/exe there: name this program */
    char self[4096];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(length > 0);
    self[length] = '\0';
    FILE *child = popen(self, "r");
    assert_non_null(child);
    const size_t got = fread(out, 1, size, child);
    assert_int_equal(pclose(child), 0);
    unsetenv("MC_GRAD_PROBE");
    unsetenv("VARPROF_ISA");
    return got;
}

/* Bit for bit on every instruction set this machine has: the backward's
 * loops are compiled once, and the generator's variants equal the scalar. */
static void sample_is_the_same_on_every_isa(void **state)
{
    (void)state;
    vp_profile *here = isa_probe();
    const size_t bytes = here->n_rows * sizeof(vp_row);
    unsigned char *scalar = malloc(bytes + 1), *simd = malloc(bytes + 1);
    assert_non_null(scalar);
    assert_non_null(simd);
    assert_int_equal(probe_with_isa("scalar", scalar, bytes + 1), bytes);
    for (int isa = VP_ISA_AVX2; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        assert_int_equal(probe_with_isa(vp_isa_name((vp_isa)isa), simd, bytes + 1), bytes);
        assert_memory_equal(scalar, simd, bytes);
    }
    free(scalar);
    free(simd);
    vp_profile_free(here);
}

/* The reduced method keeps a few sums per token, not the gradient's d
 * coordinates: --grad with it is refused, naming the full method; so is a
 * tape past 1 GiB per thread, before anything is allocated. */
static void refusals(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 4);
    cfg.grad = 1;
    vp_mc_options o;
    vp_mc_options_init(&o);
    vp_error err;
    assert_int_equal(vp_mc_check(&cfg, &o, &err), VP_EINVAL);
    assert_int_equal(err.fix, VP_FIX_METHOD_FULL); /* the program names --method full */
    o.method = VP_MC_FULL;
    assert_int_equal(vp_mc_check(&cfg, &o, &err), VP_OK);
    /* 2^20 wide: 1001 streams of doubles and 1000 noises of floats, 11.8 GiB */
    cfg.layers = 500;
    o.width = VP_MC_MAX_WIDTH;
    assert_int_equal(vp_mc_check(&cfg, &o, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "width 1048576 x 1000 sub-blocks"));
    assert_int_equal(err.fix, VP_FIX_WIDTH_OR_LAYERS);
    vp_profile *p = NULL;
    assert_int_equal(vp_mc_profile(&cfg, &o, &p, &err), VP_EINVAL);
    assert_null(p);
}

int main(void)
{
    if (getenv("MC_GRAD_PROBE")) {
        vp_profile *p = isa_probe();
        fwrite(p->rows, sizeof(vp_row), p->n_rows, stdout);
        vp_profile_free(p);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sample_is_the_same_on_every_isa),
        cmocka_unit_test(refusals),
        cmocka_unit_test(post_ln_gradient_grows_at_finite_width),
        cmocka_unit_test(literal_sampler_is_the_derivative),
        cmocka_unit_test(agrees_with_the_literal_sampler),
        cmocka_unit_test(agrees_with_the_finite_width_closed_form),
        cmocka_unit_test(sample_is_the_same_for_any_thread_count),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("Monte Carlo, backward half", tests, NULL, NULL);
}
