/* vp_closed_share_excess against the one-gain sums of varprof-maths(7),
 * Finite width, written out here, and vp_compare's share_excess: filled
 * where a normalising placement's share differs most, and only there. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/varprof.h"

/* Relative, where the sums are a few terms of doubles. */
#define TOLERANCE 1e-13

static void assert_close(const char *what, double got, double want)
{
    if (!(fabs(got - want) <= TOLERANCE * fabs(want))) {
        print_error("%s: got %.17g, want %.17g (relative tolerance %g)\n", what, got, want,
                    TOLERANCE);
        fail();
    }
}

static vp_profile *closed_of(vp_placement placement, size_t layers, double gain)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.gain = gain;
    vp_profile *closed = NULL;
    assert_int_equal(vp_closed_profile(&cfg, &closed, NULL), VP_OK);
    return closed;
}

/* At one gain u the sums are k u^2 (2 + u^2) / (d (1 + u^2)^2) and, for
 * LayerNorm, (k - 1) u^2 / (2 d (1 + u^2)). */
static void one_gain_sums(void **state)
{
    (void)state;
    const double gains[] = {0.5, 1.0, 2.0};
    for (size_t i = 0; i < 3; i++) {
        vp_profile *closed = closed_of(VP_PRE_NORM, 4, gains[i]);
        const double u = gains[i], u2 = u * u, d = 64.0;
        for (size_t k = 1; k < closed->n_rows; k++) {
            vp_share_excess ln, rms;
            assert_int_equal(vp_closed_share_excess(&ln, closed, k, 64, VP_NORM_LAYERNORM), VP_OK);
            assert_int_equal(vp_closed_share_excess(&rms, closed, k, 64, VP_NORM_RMSNORM), VP_OK);
            const double jensen = (double)k * u2 * (2.0 + u2) / (d * (1.0 + u2) * (1.0 + u2));
            assert_close("Jensen, LayerNorm", ln.jensen, jensen);
            assert_close("Jensen, RMSNorm", rms.jensen, jensen);
            if (k > 1)
                assert_close("centring", ln.centring,
                             (double)(k - 1) * u2 / (2.0 * d * (1.0 + u2)));
            else
                assert_true(ln.centring == 0.0);
            assert_true(rms.centring == 0.0);
            assert_true(ln.gain == u);
        }
        vp_profile_free(closed);
    }
}

/* DeepNorm's branch is drawn to beta^2 g and added to alpha x: its effective
 * gain is beta^2 g / alpha, from the placement table's traits. */
static void deepnorm_gain_is_beta_squared_over_alpha(void **state)
{
    (void)state;
    const size_t layers = 6;
    vp_profile *closed = closed_of(VP_DEEPNORM, layers, 1.0);
    const double alpha = vp_deepnet_alpha(layers), beta = vp_deepnet_beta(layers);
    const double u = beta * beta / alpha, u2 = u * u;
    vp_share_excess e;
    assert_int_equal(vp_closed_share_excess(&e, closed, 3, 128, VP_NORM_LAYERNORM), VP_OK);
    assert_close("DeepNorm's effective gain", e.gain, u);
    assert_close("Jensen", e.jensen, 3.0 * u2 * (2.0 + u2) / (128.0 * (1.0 + u2) * (1.0 + u2)));
    vp_profile_free(closed);
}

/* Gains that differ: the sum of each sub-block's term, and no one gain. */
static void gains_that_differ_sum_term_by_term(void **state)
{
    (void)state;
    vp_profile *closed = closed_of(VP_PRE_NORM, 2, 1.0);
    closed->rows[2].gain = 3.0;
    vp_share_excess e;
    assert_int_equal(vp_closed_share_excess(&e, closed, 2, 32, VP_NORM_LAYERNORM), VP_OK);
    assert_true(isnan(e.gain));
    assert_close("Jensen", e.jensen, 3.0 / (32.0 * 4.0) + 9.0 * 11.0 / (32.0 * 100.0));
    assert_close("centring", e.centring, 9.0 / (2.0 * 32.0 * 10.0));
    vp_profile_free(closed);
}

static void what_it_refuses(void **state)
{
    (void)state;
    vp_profile *closed = closed_of(VP_PRE_NORM, 2, 1.0);
    vp_share_excess e = {-1.0, -2.0, -3.0};
    assert_int_equal(vp_closed_share_excess(&e, closed, 0, 32, VP_NORM_LAYERNORM), VP_EINVAL);
    assert_int_equal(vp_closed_share_excess(&e, closed, closed->n_rows, 32, VP_NORM_LAYERNORM),
                     VP_EINVAL);
    assert_int_equal(vp_closed_share_excess(&e, closed, 1, 0, VP_NORM_LAYERNORM), VP_EINVAL);
    assert_int_equal(vp_closed_share_excess(&e, NULL, 1, 32, VP_NORM_LAYERNORM), VP_EINVAL);
    assert_int_equal(vp_closed_share_excess(NULL, closed, 1, 32, VP_NORM_LAYERNORM), VP_EINVAL);
    assert_true(e.jensen == -1.0 && e.centring == -2.0 && e.gain == -3.0);
    vp_profile_free(closed);
}

/* A "sampled" profile that is the closed one with small standard errors,
 * at width 64 with LayerNorm. */
static vp_profile *sampled_copy(const vp_profile *closed)
{
    vp_profile *s = vp_profile_alloc(closed->sub_blocks);
    assert_non_null(s);
    memcpy(s, closed, sizeof *s + closed->n_rows * sizeof(vp_row));
    s->engine = VP_ENGINE_MC;
    s->norm = VP_NORM_LAYERNORM;
    s->fields |= VP_HAS_BOUNDS;
    s->sampling.width = 64;
    for (size_t k = 0; k < s->n_rows; k++) {
        vp_row *r = &s->rows[k];
        r->stream_var_se = 1e-6 * r->stream_var;
        r->update_ratio_se = 1e-6 * r->update_ratio + 1e-300;
        r->embedding_share_se = 1e-6 * r->embedding_share;
    }
    return s;
}

static vp_comparison compare_raised(vp_placement placement, int share, size_t k)
{
    vp_profile *closed = closed_of(placement, 3, 1.0);
    vp_profile *sampled = sampled_copy(closed);
    if (share)
        sampled->rows[k].embedding_share *= 1.1;
    else
        sampled->rows[k].stream_var *= 1.1;
    vp_comparison cmp;
    assert_int_equal(vp_compare(closed, sampled, 3.0, 0.0, &cmp), VP_OK);
    vp_share_excess want = {0};
    if (cmp.has_share_excess) /* the comparison's is the closed form's at its worst row */
        assert_int_equal(vp_closed_share_excess(&want, closed, k, 64, VP_NORM_LAYERNORM), VP_OK);
    assert_true(cmp.share_excess.jensen == want.jensen);
    assert_true(cmp.share_excess.centring == want.centring);
    vp_profile_free(sampled);
    vp_profile_free(closed);
    return cmp;
}

static void the_comparison_holds_the_excess_where_it_explains(void **state)
{
    (void)state;
    vp_comparison cmp = compare_raised(VP_POST_LN, 1, 4);
    assert_int_equal(cmp.worst_k, 4);
    assert_int_equal(cmp.worst_quantity, VP_Q_EMBEDDING_SHARE);
    assert_int_equal(cmp.has_share_excess, 1);
    assert_true(cmp.share_excess.jensen > 0.0);
    assert_int_equal(compare_raised(VP_DEEPNORM, 1, 2).has_share_excess, 1);
    /* no norm on the stream, or not the share: nothing to explain */
    assert_int_equal(compare_raised(VP_PRE_NORM, 1, 4).has_share_excess, 0);
    assert_int_equal(compare_raised(VP_POST_LN, 0, 4).has_share_excess, 0);
    /* the embedding's share is 1 in both, so a raised one there is the worst
       at sub-block 0, where no branch has a gain */
    assert_int_equal(compare_raised(VP_POST_LN, 1, 0).has_share_excess, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_gain_sums),
        cmocka_unit_test(deepnorm_gain_is_beta_squared_over_alpha),
        cmocka_unit_test(gains_that_differ_sum_term_by_term),
        cmocka_unit_test(what_it_refuses),
        cmocka_unit_test(the_comparison_holds_the_excess_where_it_explains),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
