/* The Monte Carlo held to independent references: the closed form where the
 * idealised argument is exact in expectation at any width, an exact
 * finite-width formula where it is not, its own other method, and itself
 * with the same seed. Through the program (any number of threads, every
 * instruction set, the text and JSON, the verdicts) it is
 * tests/program/test_cli_mc.c. */
#include <gsl/gsl_randist.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/varprof.h"

/* Agreement: within this many standard errors, the bound ... */
#define N_SE 4.0
/* ... or within 10 eps relative: the norms' eps shifts a normalised stream's
 * variance by about eps, where its standard error is next to nothing. */
#define EPS_FLOOR (10.0 * VP_MC_DEFAULT_EPS)

static vp_profile *sample(vp_placement placement, size_t layers, double gain, vp_norm norm,
                          size_t width, size_t trials, vp_mc_method method, unsigned long long seed)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.gain = gain;
    vp_mc_options o;
    vp_mc_options_init(&o);
    o.norm = norm;
    o.width = width;
    o.trials = trials;
    o.method = method;
    o.seed = seed;
    o.threads = 2;
    vp_profile *p = NULL;
    vp_error err;
    if (vp_mc_profile(&cfg, &o, &p, &err) != VP_OK) {
        print_error("vp_mc_profile: %s\n", err.message);
        fail();
    }
    return p;
}

static int agrees(double want, double got, double se)
{
    return fabs(got - want) <= N_SE * se || fabs(got - want) <= EPS_FLOOR * fabs(want);
}

static void check(const char *what, const vp_profile *p, size_t k, double want, double got,
                  double se)
{
    if (!agrees(want, got, se)) {
        print_error("%s, %s, %s, d = %zu, gain %g, sub-block %zu: sampled %.8g, reference "
                    "%.8g, %.1f standard errors of %.3g\n",
                    what, vp_placement_name(p->config.placement), vp_norm_name(p->norm),
                    p->sampling.width, p->config.gain, k, got, want, (got - want) / se, se);
        fail();
    }
}

static const vp_norm norms[] = {VP_NORM_LAYERNORM, VP_NORM_RMSNORM};
static const size_t widths[] = {64, 1024};
static const double gains[] = {0.5, 1.0, 2.0};

/* Where no norm divides the stream by its own statistics, every estimate is
 * a ratio of means whose expectation the closed form gives at any width. */
static void agrees_with_closed_form(void **state)
{
    (void)state;
    const vp_placement exact[] = {VP_PRE_NORM, VP_SANDWICH, VP_OUTPUT_NORM, VP_PARALLEL,
                                  VP_NO_NORM,  VP_POST_LN,  VP_DEEPNORM};
    for (size_t pl = 0; pl < sizeof exact / sizeof *exact; pl++)
        for (size_t n = 0; n < 2; n++)
            for (size_t w = 0; w < 2; w++)
                for (size_t g = 0; g < 3; g++) {
                    vp_profile *mc = sample(exact[pl], 32, gains[g], norms[n], widths[w], 4096,
                                            VP_MC_REDUCED, 11 + pl + 10 * g);
                    vp_config cfg = mc->config;
                    vp_profile *cf;
                    assert_int_equal(vp_closed_profile(&cfg, &cf, NULL), VP_OK);
                    /* Post-LN's and DeepNorm's shares are not exact at finite
                     * width (see finite_width_share); their variances and
                     * update ratios are */
                    const int share_exact = exact[pl] != VP_POST_LN && exact[pl] != VP_DEEPNORM;
                    assert_int_equal(mc->n_rows, cf->n_rows);
                    for (size_t k = 0; k < mc->n_rows; k++) {
                        const vp_row *s = &mc->rows[k], *c = &cf->rows[k];
                        check("stream variance", mc, k, c->stream_var, s->stream_var,
                              s->stream_var_se);
                        if (k > 0)
                            check("update ratio", mc, k, c->update_ratio, s->update_ratio,
                                  s->update_ratio_se);
                        if (share_exact)
                            check("embedding share", mc, k, c->embedding_share, s->embedding_share,
                                  s->embedding_share_se);
                    }
                    vp_profile_free(mc);
                    vp_profile_free(cf);
                }
}

/* E[1/X] for X noncentral chi-square with k degrees of freedom and
 * non-centrality lambda: the Poisson mixture of central ones, whose E[1/X]
 * is 1/(k + 2i - 2). */
static double mean_inverse_noncentral_chisq(double k, double lambda)
{
    const double mean = lambda / 2.0;
    const unsigned last = (unsigned)(mean + 40.0 * sqrt(mean) + 60.0);
    double sum = 0.0;
    for (unsigned i = 0; i <= last; i++)
        sum += gsl_ran_poisson_pdf(i, mean) / (k + 2.0 * i - 2.0);
    return sum;
}

/* With RMSNorm, Post-LN's share is exact at width d: each sub-block
 * multiplies a token's |c|^2 / d by F = d / |u sqrt(d) + g xi|^2 (u a unit
 * vector), the F are independent and alike, so e_k^2 = E[F]^k, with
 * E[F] = (d / g^2) E[1/X], X ~ noncentral chi-square(d, d / g^2). DeepNorm
 * likewise, with alpha u and b = beta^2 g. Above the closed form by about
 * k g^2 (2 + g^2) / (d (1 + g^2)^2) relative: Jensen at every norm. */
static void finite_width_share(void **state)
{
    (void)state;
    const vp_placement normalising[] = {VP_POST_LN, VP_DEEPNORM};
    for (size_t pl = 0; pl < 2; pl++)
        for (size_t w = 0; w < 2; w++)
            for (size_t g = 0; g < 3; g++) {
                vp_profile *mc = sample(normalising[pl], 32, gains[g], VP_NORM_RMSNORM, widths[w],
                                        4096, VP_MC_REDUCED, 101 + w + 10 * g);
                const double d = (double)widths[w];
                const double alpha = pl == 0 ? 1.0 : mc->config.alpha;
                const double b = pl == 0 ? gains[g] : mc->config.beta * mc->config.beta * gains[g];
                const double lambda = d * alpha * alpha / (b * b);
                const double step =
                    alpha * alpha * d / (b * b) * mean_inverse_noncentral_chisq(d, lambda);
                for (size_t k = 0; k < mc->n_rows; k++) {
                    const vp_row *s = &mc->rows[k];
                    check("finite-width embedding share", mc, k, pow(step, 0.5 * (double)k),
                          s->embedding_share, s->embedding_share_se);
                }
                vp_profile_free(mc);
            }
}

/* The verdict's "why" line under a closed profile, for a share that differs
 * at sub-block k of a sample at this width and norm. */
static char *why_line(vp_placement placement, size_t layers, double gain, size_t k, size_t width,
                      vp_norm norm)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.gain = gain;
    vp_profile *closed = NULL;
    assert_int_equal(vp_closed_profile(&cfg, &closed, NULL), VP_OK);
    vp_comparison cmp = {.n_se = 3,
                         .family_se = 3.5,
                         .checked = 10,
                         .beyond = 1,
                         .disagree = 1,
                         .rows = closed->n_rows,
                         .first_k = k,
                         .first_disagree = k,
                         .worst_quantity = VP_Q_EMBEDDING_SHARE,
                         .worst_k = k,
                         .worst_closed = 1,
                         .worst_sampled = 1.1,
                         .worst_se_units = 5,
                         .worst_relative = 0.1,
                         .width = width,
                         .norm = norm,
                         .has_share_excess = 1};
    /* what vp_compare fills where a normalising placement's share differs */
    assert_int_equal(vp_closed_share_excess(&cmp.share_excess, closed, k, width, norm), VP_OK);
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    assert_non_null(out);
    assert_int_equal(vp_text_write_verdict(out, closed, &cmp, VP_TEXT_WIDE), VP_OK);
    assert_int_equal(fclose(out), 0);
    vp_profile_free(closed);
    char *why = strstr(text, "\n  why: ");
    assert_non_null(why);
    memmove(text, why + 1, strlen(why + 1) + 1);
    return text;
}

static void expect_in(const char *text, const char *part, int present)
{
    if (!strstr(text, part) != !present) {
        print_error("want \"%s\" %s in:\n%s", part, present ? "" : "absent", text);
        fail();
    }
}

/* The "why" line computes the first-order excess for the run: the width,
 * the sub-block, the gain, the norm (the centring only for LayerNorm, in the
 * ratio (1 + g^2) / (2 (2 + g^2)) to the rest, not a fixed third) and the
 * placement (DeepNorm's effective gain beta^2 g / alpha). */
static void why_line_is_computed_for_the_run(void **state)
{
    (void)state;
    /* Post-LN, gain 1, d 512, k 64: 3k/(4d) = +9.38 %, (k-1)/(4d) = +3.08 %
     * (varprof-maths(7): +12.5 % in all, the sample +12.8 %) */
    char *why = why_line(VP_POST_LN, 32, 1.0, 64, 512, VP_NORM_LAYERNORM);
    expect_in(why, "at width 512 ", 1);
    expect_in(why, "at sub-block 64 ", 1);
    expect_in(why, "= +9.38 % with g = 1,", 1);
    expect_in(why, "centring by about (k - 1) g^2 / (2 d (1 + g^2)) = +3.08 % more", 1);
    expect_in(why, "+12.5 % in all", 1);
    free(why);
    /* RMSNorm does not centre */
    why = why_line(VP_POST_LN, 32, 1.0, 64, 512, VP_NORM_RMSNORM);
    expect_in(why, "= +9.38 % with g = 1\n", 1);
    expect_in(why, "centring", 0);
    free(why);
    /* gain 2, d 100, k 10: 10 x 4 x 6 / (100 x 25) = +9.6 %, and the
     * centring 9 x 4 / (2 x 100 x 5) = +3.6 %: 0.375 of it, not a third */
    why = why_line(VP_POST_LN, 5, 2.0, 10, 100, VP_NORM_LAYERNORM);
    expect_in(why, "= +9.6 % with g = 2,", 1);
    expect_in(why, "= +3.6 % more: +13.2 % in all", 1);
    free(why);
    /* DeepNorm at 8 layers: alpha 2, beta^2 1/8, so gain 16 is an effective
     * gain of 1: k 6, d 16 gives 3 x 6 / (4 x 16) = +28.1 % */
    why = why_line(VP_DEEPNORM, 8, 16.0, 6, 16, VP_NORM_RMSNORM);
    expect_in(why, "= +28.1 % with g = beta^2 g / alpha = 1, DeepNorm's effective gain", 1);
    free(why);
}

static double normal_quantile_density(double p)
{
    /* phi(Phi^-1(p)): the density at the p-quantile of a standard normal */
    static const double z05 = 1.6448536269514722;
    const double z = p == 0.5 ? 0.0 : z05;
    return exp(-0.5 * z * z) / 2.5066282746310002; /* sqrt(2 pi) */
}

/* The two methods sample one distribution: their estimates agree within
 * their joint standard error, and their percentiles within what sampling
 * allows a quantile: sqrt(2 p (1-p) / n) / phi(z_p) spreads of the log stream
 * size, the spread taken as (log p95 - log p05) / 3.29 (a normal's), times 4. */
static void full_and_reduced_agree(void **state)
{
    (void)state;
    const size_t sizes[] = {3, 16, 512}; /* 3: the chi-square's small-shape path */
    const size_t n = 2048;
    for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++)
        for (size_t nm = 0; nm < 2; nm++)
            for (size_t w = 0; w < 3; w++) {
                vp_profile *full =
                    sample((vp_placement)pl, 6, 1.0, norms[nm], sizes[w], n, VP_MC_FULL, 7);
                vp_profile *reduced =
                    sample((vp_placement)pl, 6, 1.0, norms[nm], sizes[w], n, VP_MC_REDUCED, 8);
                assert_int_equal(full->n_rows, reduced->n_rows);
                for (size_t k = 0; k < full->n_rows; k++) {
                    const vp_row *f = &full->rows[k], *r = &reduced->rows[k];
                    check("stream variance, full against reduced", full, k, r->stream_var,
                          f->stream_var, hypot(f->stream_var_se, r->stream_var_se));
                    if (k > 0)
                        check("update ratio, full against reduced", full, k, r->update_ratio,
                              f->update_ratio, hypot(f->update_ratio_se, r->update_ratio_se));
                    check("embedding share, full against reduced", full, k, r->embedding_share,
                          f->embedding_share, hypot(f->embedding_share_se, r->embedding_share_se));
                    /* on a log scale: a product of random factors (none at d = 3)
                       is far from normal, its logarithm much less so */
                    const double spread =
                        (log(r->stream_size_p95) - log(r->stream_size_p05)) / 3.29;
                    const double ps[] = {0.05, 0.5, 0.95};
                    const double fq[] = {f->stream_size_p05, f->stream_size_p50,
                                         f->stream_size_p95};
                    const double rq[] = {r->stream_size_p05, r->stream_size_p50,
                                         r->stream_size_p95};
                    for (int q = 0; q < 3; q++) {
                        double se = sqrt(2.0 * ps[q] * (1.0 - ps[q]) / (double)n) /
                                    normal_quantile_density(ps[q]) * spread;
                        /* back from the log: an error of se in log q is q se in q */
                        check("stream size percentile, full against reduced", full, k, rq[q], fq[q],
                              rq[q] * se);
                    }
                }
                vp_profile_free(full);
                vp_profile_free(reduced);
            }
}

static void same_seed_same_numbers(void **state)
{
    (void)state;
    for (int method = 0; method < 2; method++) {
        vp_profile *a =
            sample(VP_POST_LN, 4, 1.0, VP_NORM_LAYERNORM, 32, 500, (vp_mc_method)method, 3);
        vp_profile *b =
            sample(VP_POST_LN, 4, 1.0, VP_NORM_LAYERNORM, 32, 500, (vp_mc_method)method, 3);
        vp_profile *c =
            sample(VP_POST_LN, 4, 1.0, VP_NORM_LAYERNORM, 32, 500, (vp_mc_method)method, 4);
        assert_memory_equal(a->rows, b->rows, a->n_rows * sizeof(vp_row));
        assert_true(a->rows[8].embedding_share != c->rows[8].embedding_share);
        vp_profile_free(a);
        vp_profile_free(b);
        vp_profile_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agrees_with_closed_form),
        cmocka_unit_test(finite_width_share),
        cmocka_unit_test(why_line_is_computed_for_the_run),
        cmocka_unit_test(full_and_reduced_agree),
        cmocka_unit_test(same_seed_same_numbers),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("Monte Carlo", tests, NULL, NULL);
}
