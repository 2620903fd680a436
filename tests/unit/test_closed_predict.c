/* The closed form fed with measured gains (vp_closed_predict): a closed
 * profile dressed as a measurement must come back as itself, DeepNet's beta^2
 * and a parallel block's sqrt 2 must come out of the measured gains, and a
 * real forward pass must give a prediction of its own shape. The mappings are
 * written out here by placement, independently of the placement table. */
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

/* A round trip through g * beta^2 / beta^2 or g * sqrt 2 / sqrt 2 moves a gain
 * by an ulp or two, and the recursion carries that into v, u and e. */
#define ROUND_TRIP_TOLERANCE 1e-13

static void assert_rel(double got, double want, double tolerance, const char *what, size_t k)
{
    if (got == want)
        return;
    double diff = fabs(got - want) / fabs(want);
    if (!(diff <= tolerance)) {
        fprintf(stderr,
                "%s at sub-block %zu: got %.17g, want %.17g, relative difference %.3g "
                "> %.3g\n",
                what, k, got, want, diff, tolerance);
        fail();
    }
}

static double next_uniform(uint64_t *s)
{
    /* xorshift64*: the test's own gains, reproducible */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ull) >> 11) * 0x1p-53;
}

/* What the network measures where the closed form's gain is g: DeepNet's
 * init puts beta^2 into each branch, and a parallel block adds two branches
 * of gain g each. */
static double measured_of(const vp_config *cfg, double g)
{
    if (cfg->placement == VP_DEEPNORM)
        return g * (cfg->beta * cfg->beta);
    if (cfg->placement == VP_PARALLEL && !cfg->mlp_only)
        return g * sqrt(2.0);
    return g;
}

static int mapping_is_identity(const vp_config *cfg)
{
    return cfg->placement != VP_DEEPNORM && cfg->placement != VP_PARALLEL;
}

/* A closed profile at random gains and v_0. */
static vp_profile *closed_at_random_gains(vp_placement placement, int mlp_only, size_t layers,
                                          uint64_t seed)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.mlp_only = mlp_only;
    const size_t k_total = vp_config_sub_blocks(&cfg);
    double *gains = malloc(k_total * sizeof *gains);
    assert_non_null(gains);
    for (size_t k = 0; k < k_total; k++)
        gains[k] = 2.0 * next_uniform(&seed);
    cfg.gains = gains;
    cfg.n_gains = k_total;
    cfg.gamma = 0.3 + next_uniform(&seed);
    cfg.embedding_var = 0.5 + 2.0 * next_uniform(&seed);
    vp_profile *p = NULL;
    assert_int_equal(vp_closed_profile(&cfg, &p, NULL), VP_OK);
    free(gains);
    return p;
}

/* The same profile, as if a network had measured its gains. */
static vp_profile *as_measured(const vp_profile *closed)
{
    vp_profile *m = vp_profile_alloc(closed->sub_blocks);
    assert_non_null(m);
    memcpy(m, closed, sizeof *m + closed->n_rows * sizeof(vp_row));
    m->engine = VP_ENGINE_FORWARD;
    m->fields |= VP_HAS_MEASURED;
    for (size_t k = 1; k < m->n_rows; k++)
        m->rows[k].measured_gain = measured_of(&m->config, m->rows[k].gain);
    return m;
}

static vp_profile *predict(const vp_profile *measured)
{
    vp_profile *p = NULL;
    vp_error err;
    if (vp_closed_predict(measured, &p, &err) != VP_OK) {
        fprintf(stderr, "vp_closed_predict: %s\n", err.message);
        fail();
    }
    assert_non_null(p);
    return p;
}

static void check_round_trip(const vp_profile *closed, const vp_profile *back)
{
    const char *name = vp_placement_name(closed->config.placement);
    assert_int_equal(back->engine, VP_ENGINE_CLOSED);
    assert_int_equal(back->sub_blocks, closed->sub_blocks);
    assert_int_equal(back->n_rows, closed->n_rows);
    assert_true(back->gains_from_file);
    if (mapping_is_identity(&closed->config)) {
        /* nothing divided: the very same recursion, bit for bit */
        for (size_t k = 0; k < closed->n_rows; k++) {
            assert_true(back->rows[k].stream_var == closed->rows[k].stream_var);
            assert_true(back->rows[k].update_ratio == closed->rows[k].update_ratio);
            assert_true(back->rows[k].log2_share == closed->rows[k].log2_share);
        }
        return;
    }
    for (size_t k = 0; k < closed->n_rows; k++) {
        assert_rel(back->rows[k].stream_var, closed->rows[k].stream_var, ROUND_TRIP_TOLERANCE, name,
                   k);
        assert_rel(back->rows[k].embedding_share, closed->rows[k].embedding_share,
                   ROUND_TRIP_TOLERANCE, name, k);
        if (k > 0) {
            assert_rel(back->rows[k].gain, closed->rows[k].gain, ROUND_TRIP_TOLERANCE, name, k);
            assert_rel(back->rows[k].update_ratio, closed->rows[k].update_ratio,
                       ROUND_TRIP_TOLERANCE, name, k);
        }
    }
}

static void a_closed_profile_fed_back_comes_back(void **state)
{
    (void)state;
    uint64_t seed = 7;
    for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++) {
        for (int mlp_only = 0; mlp_only <= 1; mlp_only++) {
            if (pl == VP_PARALLEL && mlp_only)
                continue; /* refused: a parallel layer of an MLP alone is pre-norm's */
            vp_profile *closed = closed_at_random_gains((vp_placement)pl, mlp_only, 24, seed++);
            vp_profile *measured = as_measured(closed);
            vp_profile *back = predict(measured);
            check_round_trip(closed, back);
            vp_profile_free(back);
            vp_profile_free(measured);
            vp_profile_free(closed);
        }
    }
}

/* One measured gain throughout: the prediction's gains show the mapping. */
static vp_profile *measured_at(vp_placement placement, int mlp_only, double beta, double gain)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, 3);
    cfg.mlp_only = mlp_only;
    cfg.beta = beta;
    vp_profile *closed = NULL;
    assert_int_equal(vp_closed_profile(&cfg, &closed, NULL), VP_OK);
    vp_profile *m = as_measured(closed);
    for (size_t k = 1; k < m->n_rows; k++)
        m->rows[k].measured_gain = gain;
    vp_profile_free(closed);
    return m;
}

static void deepnorm_divides_by_beta_squared_parallel_by_sqrt_2(void **state)
{
    (void)state;
    const struct {
        vp_placement placement;
        int mlp_only;
        double want; /* the closed form's gain at measured gain 1.5, beta 0.25 */
    } cases[] = {
        {VP_DEEPNORM, 0, 1.5 / 0.0625},
        {VP_DEEPNORM, 1, 1.5 / 0.0625},
        {VP_PARALLEL, 0, 1.5 / sqrt(2.0)},
        {VP_PRE_NORM, 0, 1.5},
        {VP_POST_LN, 1, 1.5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vp_profile *m = measured_at(cases[i].placement, cases[i].mlp_only, 0.25, 1.5);
        vp_profile *p = predict(m);
        for (size_t k = 1; k < p->n_rows; k++)
            assert_rel(p->rows[k].gain, cases[i].want, 1e-15, vp_placement_name(cases[i].placement),
                       k);
        vp_profile_free(p);
        vp_profile_free(m);
    }
}

static void a_forward_pass_gets_a_prediction_of_its_own_shape(void **state)
{
    (void)state;
    const vp_placement placements[] = {VP_PRE_NORM, VP_PARALLEL, VP_DEEPNORM};
    for (size_t i = 0; i < sizeof placements / sizeof placements[0]; i++) {
        vp_config cfg;
        vp_config_init(&cfg, placements[i], 2);
        vp_forward_options o;
        vp_forward_options_init(&o);
        o.width = 32;
        o.heads = 4;
        o.vocab = 64;
        o.batch = 2;
        o.tokens = 8;
        vp_profile *forward = NULL, *p = NULL;
        vp_error err;
        assert_int_equal(vp_forward_profile(&cfg, &o, &forward, &err), VP_OK);
        assert_int_equal(vp_closed_predict(forward, &p, &err), VP_OK);
        assert_int_equal(p->sub_blocks, forward->sub_blocks);
        assert_int_equal(p->config.placement, forward->config.placement);
        /* v_0 is the network's own */
        assert_true(p->rows[0].stream_var == forward->rows[0].stream_var);
        for (size_t k = 1; k < forward->n_rows; k++)
            assert_rel(measured_of(&forward->config, p->rows[k].gain),
                       forward->rows[k].measured_gain, 1e-14, vp_placement_name(placements[i]), k);
        vp_profile_free(p);
        vp_profile_free(forward);
    }
}

static void past_an_overflow_the_gains_are_zero(void **state)
{
    (void)state;
    vp_profile *m = measured_at(VP_PRE_NORM, 0, 1.0, 2.0);
    m->overflow_at = 3;
    m->n_rows = 3;
    vp_profile *p = predict(m);
    assert_int_equal(p->sub_blocks, m->sub_blocks);
    assert_true(p->rows[2].gain == 2.0);
    for (size_t k = 3; k < p->n_rows; k++)
        assert_true(p->rows[k].gain == 0.0);
    vp_profile_free(p);
    vp_profile_free(m);
}

static void what_has_nothing_measured_is_refused(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 2);
    vp_profile *closed = NULL, *p = (vp_profile *)&cfg; /* anything but NULL */
    vp_error err;
    assert_int_equal(vp_closed_profile(&cfg, &closed, NULL), VP_OK);
    assert_int_equal(vp_closed_predict(closed, &p, &err), VP_EINVAL);
    assert_null(p);
    assert_int_equal(vp_closed_predict(NULL, &p, &err), VP_EINVAL);
    assert_int_equal(vp_closed_predict(closed, NULL, &err), VP_EINVAL);
    vp_profile *m = as_measured(closed);
    m->overflow_at = 1;
    m->n_rows = 1; /* overflowed at once: no gain measured */
    assert_int_equal(vp_closed_predict(m, &p, &err), VP_EINVAL);
    assert_null(p);
    vp_profile_free(m);
    vp_profile_free(closed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_closed_profile_fed_back_comes_back),
        cmocka_unit_test(deepnorm_divides_by_beta_squared_parallel_by_sqrt_2),
        cmocka_unit_test(a_forward_pass_gets_a_prediction_of_its_own_shape),
        cmocka_unit_test(past_an_overflow_the_gains_are_zero),
        cmocka_unit_test(what_has_nothing_measured_is_refused),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
