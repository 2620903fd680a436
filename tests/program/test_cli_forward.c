/* The forward pass through the program: --engine all and forward on the
 * command line, the Monte Carlo sampled at a weights file's width and norm,
 * and --init torch with DeepNorm's beta scaling what torchscale scales,
 * against the network built in the library (the measurements themselves are
 * tests/unit/test_forward.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "forward/network.h"
#include "run_program.h"
#include "test_filter.h"
#include "varprof/forward.h"
#include "varprof/varprof.h"

static void program_runs_every_engine(void **state)
{
    (void)state;
    program_run r = run_varprof((const char *const[]){"--placement", "pre-norm,post-ln", "--engine",
                                                      "all", "--width", "64", "--layers", "4",
                                                      "--trials", "500", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(
        strstr(r.out, "the forward pass against the closed form at its measured gains"));
    assert_non_null(strstr(r.out, "pre-norm: parts from its prediction by at most"));
    assert_non_null(strstr(r.out, "post-ln: parts from its prediction by at most"));
    program_run_free(&r);
    r = run_varprof((const char *const[]){"--engine", "forward", "--width", "32", "--heads", "4",
                                          "--layers", "2", "--format", "csv", "--qk-norm", "--norm",
                                          "rmsnorm", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\nforward,pre-norm,rmsnorm,2,4,1,mlp,"));
    program_run_free(&r);
}

/* With --weights, --engine all samples the Monte Carlo at the file's width
 * and norm (64, RMSNorm: its norms have no biases), not the defaults 512
 * and LayerNorm, so that the two sampled engines describe one network. */
static void weights_set_the_monte_carlos_width(void **state)
{
    (void)state;
    char weights[1024], tokens[1024];
    snprintf(weights, sizeof weights, "%s", test_data_path("attn_pre_norm.safetensors"));
    snprintf(tokens, sizeof tokens, "%s", test_data_path("attn_tokens.csv"));
    program_run r = run_varprof((const char *const[]){"--engine", "all", "--weights", weights,
                                                      "--token-ids", tokens, "--placement",
                                                      "pre-norm", "--trials", "64", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "pre-norm: Monte Carlo (reduced method, width 64, "));
    program_run_free(&r);
    r = run_varprof((const char *const[]){"--engine", "all", "--weights", weights, "--token-ids",
                                          tokens, "--placement", "pre-norm", "--trials", "64",
                                          "--format", "csv", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\nmc,pre-norm,rmsnorm,4,8,"));
    assert_non_null(strstr(r.out, "\nforward,pre-norm,rmsnorm,4,8,"));
    program_run_free(&r);
}

/* DeepNet (torchscale) divides every parameter of v, o, fc1 and fc2, weights
 * and biases, by (8N)^(1/4): times beta. So with --init torch and deepnorm,
 * beta 0.5 against beta 1 from one seed must give those parameters halved
 * (exactly: a power of 2) and every other one the same. */
static void compare_linear(const fw_linear *scaled, const fw_linear *plain, size_t packed,
                           float factor, const char *name)
{
    for (size_t i = 0; i < packed; i++)
        if (scaled->packed[i] != factor * plain->packed[i]) {
            print_error("%s: packed weight %zu is %.9g, want %g x %.9g\n", name, i,
                        scaled->packed[i], factor, plain->packed[i]);
            fail();
        }
    for (size_t j = 0; j < plain->out; j++)
        if (scaled->bias[j] != factor * plain->bias[j]) {
            print_error("%s: bias %zu is %.9g, want %g x %.9g\n", name, j, scaled->bias[j], factor,
                        plain->bias[j]);
            fail();
        }
}

static void torch_init_applies_deepnorms_beta(void **state)
{
    (void)state;
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.init = VP_INIT_TORCH;
    o.width = 16;
    o.heads = 2;
    o.ffn_mult = 2;
    o.vocab = 16;
    o.stored_weights = 1; /* compared below */
    const kern_table *kern = kern_current();
    fw_model *models[2];
    const double betas[2] = {0.5, 1.0};
    vp_config cfg;
    for (int i = 0; i < 2; i++) {
        vp_config_init(&cfg, VP_DEEPNORM, 2);
        cfg.beta = betas[i];
        models[i] = fw_model_alloc(&cfg, &o, kern);
        assert_non_null(models[i]);
        assert_int_equal(fw_model_init(models[i], &cfg, &o, NULL), VP_OK);
    }
    const fw_model *half = models[0], *one = models[1];
    assert_memory_equal(half->embed, one->embed, one->vocab * one->d * sizeof(float));
    const size_t square = kern->matmul_packed_floats(one->d, one->d);
    for (size_t l = 0; l < one->layers; l++) {
        const fw_layer *a = &half->layers_[l], *b = &one->layers_[l];
        compare_linear(&a->q, &b->q, square, 1.0f, "q");
        compare_linear(&a->k, &b->k, square, 1.0f, "k");
        compare_linear(&a->v, &b->v, square, 0.5f, "v");
        compare_linear(&a->o, &b->o, square, 0.5f, "o");
        compare_linear(&a->fc1, &b->fc1, kern->matmul_packed_floats(one->d, one->hidden), 0.5f,
                       "fc1");
        compare_linear(&a->fc2, &b->fc2, kern->matmul_packed_floats(one->hidden, one->d), 0.5f,
                       "fc2");
    }
    fw_model_free(models[0]);
    fw_model_free(models[1]);
    /* beta 0 zeroes every branch, so each measured gain is exactly 0; beta 1
     * does not (the torch init ignored beta before); the gain init too, where
     * beta 0 once made 0/0 weights */
    const char *betas_text[2] = {"0", "1"};
    for (int i = 0; i < 4; i++) {
        program_run r = run_varprof((const char *const[]){"--engine",    "forward",
                                                          "--placement", "deepnorm",
                                                          "--init",      i < 2 ? "torch" : "gain",
                                                          "--beta",      betas_text[i % 2],
                                                          "--layers",    "2",
                                                          "--width",     "32",
                                                          "--heads",     "4",
                                                          "--vocab",     "64",
                                                          "--batch",     "2",
                                                          "--tokens",    "8",
                                                          "--format",    "json",
                                                          NULL});
        assert_int_equal(r.status, 0);
        assert_string_equal(r.err, "");
        size_t zeros = 0;
        for (const char *at = r.out; (at = strstr(at, "\"measured_gain\":0,")); at++)
            zeros++;
        assert_int_equal(zeros, i % 2 == 0 ? 4 : 0);
        program_run_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(program_runs_every_engine),
        cmocka_unit_test(weights_set_the_monte_carlos_width),
        cmocka_unit_test(torch_init_applies_deepnorms_beta),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("the forward pass", tests, NULL, NULL);
}
