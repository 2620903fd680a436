/* The forward pass: a real network whose measurements must match what its
 * initialisation promises, whatever the thread count. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "varprof/varprof.h"
#include "varprof/forward.h"

static vp_profile *run(vp_placement placement, size_t layers, int mlp_only, size_t width,
                       size_t threads, vp_init init, vp_norm norm)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.mlp_only = mlp_only;
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.width = width;
    o.heads = width >= 64 ? width / 32 : 1;
    o.ffn_mult = 2;
    o.batch = 4;
    o.tokens = 64;
    o.threads = threads;
    o.init = init;
    o.norm = norm;
    vp_profile *p = NULL;
    vp_error err;
    if (vp_forward_profile(&cfg, &o, &p, &err) != VP_OK) {
        print_error("vp_forward_profile: %s\n", err.message);
        fail();
    }
    return p;
}

/* The rows split across threads differently; every number stays the same. */
static void threads_change_nothing(void **state)
{
    (void)state;
    const vp_placement placements[] = {VP_PRE_NORM, VP_POST_LN, VP_SANDWICH, VP_PARALLEL};
    for (size_t i = 0; i < 4; i++) {
        vp_profile *one = run(placements[i], 3, 0, 96, 1, VP_INIT_TORCH, VP_NORM_LAYERNORM);
        vp_profile *two = run(placements[i], 3, 0, 96, 2, VP_INIT_TORCH, VP_NORM_LAYERNORM);
        vp_profile *five = run(placements[i], 3, 0, 96, 5, VP_INIT_TORCH, VP_NORM_LAYERNORM);
        assert_memory_equal(one->rows, two->rows, one->n_rows * sizeof(vp_row));
        assert_memory_equal(one->rows, five->rows, one->n_rows * sizeof(vp_row));
        vp_profile_free(one);
        vp_profile_free(two);
        vp_profile_free(five);
    }
}

/* --init gain: each MLP's last projection is scaled so that its gain is the
 * configured one; at d = 1024 the measured gains land within 5 %, and the
 * stream follows the closed form within 5 % at every depth. */
static void gain_init_keeps_its_promise(void **state)
{
    (void)state;
    const vp_placement placements[] = {VP_PRE_NORM, VP_POST_LN, VP_OUTPUT_NORM};
    for (size_t i = 0; i < 3; i++) {
        vp_profile *fw = run(placements[i], 16, 1, 1024, 2, VP_INIT_GAIN, VP_NORM_LAYERNORM);
        vp_config cfg = fw->config;
        vp_profile *cf;
        assert_int_equal(vp_closed_profile(&cfg, &cf, NULL), VP_OK);
        assert_int_equal(fw->n_rows, 17);
        for (size_t k = 1; k < fw->n_rows; k++) {
            const vp_row *f = &fw->rows[k], *c = &cf->rows[k];
            if (fabs(f->measured_gain - 1.0) > 0.05) {
                print_error("%s, sub-block %zu: measured gain %.4f, want 1 within 5 %%\n",
                            vp_placement_name(placements[i]), k, f->measured_gain);
                fail();
            }
            if (fabs(f->stream_var - c->stream_var) > 0.05 * c->stream_var) {
                print_error("%s, sub-block %zu: stream variance %.5g, closed form %.5g\n",
                            vp_placement_name(placements[i]), k, f->stream_var, c->stream_var);
                fail();
            }
            /* Post-LN: LayerNorm leaves variance var / (var + eps) of 1, and a token's
               variance here is near 2, so within eps */
            if (placements[i] == VP_POST_LN && fabs(f->stream_var - 1.0) > 1e-5) {
                print_error("post-ln, sub-block %zu: stream variance %.9f, want 1 within eps\n",
                            k, f->stream_var);
                fail();
            }
        }
        vp_profile_free(fw);
        vp_profile_free(cf);
    }
}

/* The measurements mean what they say, on a network small enough to check by
 * hand: the embedding share starts at 1 and, where the stream is never
 * normalised, is exactly sqrt(v_0 / v_k); the stream norm is the root of
 * v_k times the batch's coordinates. */
static void measurements_hold_together(void **state)
{
    (void)state;
    for (int norm = 0; norm < 2; norm++) {
        vp_profile *p = run(VP_PRE_NORM, 4, 0, 64, 1, VP_INIT_TORCH,
                            norm ? VP_NORM_RMSNORM : VP_NORM_LAYERNORM);
        const double n = 4.0 * 64.0 * 64.0;
        assert_true(p->rows[0].embedding_share == 1.0);
        for (size_t k = 0; k < p->n_rows; k++) {
            const vp_row *r = &p->rows[k];
            assert_true(fabs(r->stream_norm - sqrt(r->stream_var * n)) <= 1e-9 * r->stream_norm);
            double want = sqrt(p->rows[0].stream_var / r->stream_var);
            /* c is the embedding itself, summed in float: 1e-6 */
            assert_true(fabs(r->embedding_share - want) <= 1e-6 * want);
            if (k > 0) {
                assert_true(r->update_cosine >= -1.0 && r->update_cosine <= 1.0);
                assert_true(r->measured_gain > 0.0);
            }
        }
        vp_profile_free(p);
    }
}

static void program_runs_every_engine(void **state)
{
    (void)state;
    program_run r = run_varprof((const char *const[]){
        "--placement", "pre-norm,post-ln", "--engine", "all", "--width", "64", "--layers", "4",
        "--trials", "500", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "the forward pass measured"));
    assert_non_null(strstr(r.out, "pre-norm: parts from its prediction by at most"));
    assert_non_null(strstr(r.out, "post-ln: parts from its prediction by at most"));
    program_run_free(&r);
    r = run_varprof((const char *const[]){"--engine", "forward", "--width", "32", "--heads", "4",
                                          "--layers", "2", "--format", "csv", "--qk-norm",
                                          "--norm", "rmsnorm", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\nforward,pre-norm,rmsnorm,2,4,1,mlp,"));
    program_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_change_nothing),
        cmocka_unit_test(gain_init_keeps_its_promise),
        cmocka_unit_test(measurements_hold_together),
        cmocka_unit_test(program_runs_every_engine),
    };
    return cmocka_run_group_tests_name("the forward pass", tests, NULL, NULL);
}
