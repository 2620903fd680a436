/* vp_mc_header and vp_forward_header: the header each engine publishes
 * before it runs is the one its profile carries after, and each refuses
 * what it cannot describe, leaving *out untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/varprof.h"

/* What a header holds, held against the profile the engine made. */
static void assert_same_header(const vp_profile *header, const vp_profile *ran)
{
    assert_int_equal(header->engine, ran->engine);
    assert_int_equal(header->norm, ran->norm);
    assert_int_equal(header->fields, ran->fields);
    assert_int_equal(header->sub_blocks, ran->sub_blocks);
    assert_int_equal(header->gains_from_file, ran->gains_from_file);
    assert_int_equal(header->config.placement, ran->config.placement);
    assert_int_equal(header->config.layers, ran->config.layers);
    assert_true(header->config.gain == ran->config.gain);
    assert_int_equal(header->config.grad, ran->config.grad);
    assert_null(header->config.gains);
    const vp_sampling *h = &header->sampling, *r = &ran->sampling;
    assert_int_equal(h->width, r->width);
    assert_int_equal(h->trials, r->trials);
    assert_true(h->seed == r->seed);
    assert_string_equal(h->generator, r->generator);
    assert_int_equal(h->method, r->method);
    assert_true(h->eps == r->eps);
    assert_int_equal(h->heads, r->heads);
    assert_int_equal(h->kv_heads, r->kv_heads);
    assert_int_equal(h->head_dim, r->head_dim);
    assert_int_equal(h->ffn_mult, r->ffn_mult);
    assert_int_equal(h->ffn_width, r->ffn_width);
    assert_int_equal(h->vocab, r->vocab);
    assert_int_equal(h->batch, r->batch);
    assert_int_equal(h->tokens, r->tokens);
    assert_int_equal(h->mlp, r->mlp);
    assert_int_equal(h->bias, r->bias);
    assert_int_equal(h->positions, r->positions);
    assert_int_equal(h->weights_drawn, r->weights_drawn);
    assert_int_equal(h->recomputed, r->recomputed);
    assert_true(h->kept_bytes == r->kept_bytes);
}

static void mc_header_is_the_profiles(void **state)
{
    (void)state;
    for (int grad = 0; grad <= 1; grad++) {
        vp_config cfg;
        vp_config_init(&cfg, VP_PRE_NORM, 2);
        cfg.gain = 0.7;
        cfg.grad = grad;
        vp_mc_options mc;
        vp_mc_options_init(&mc);
        mc.width = 16;
        mc.trials = 64;
        mc.norm = VP_NORM_RMSNORM;
        mc.seed = 7;
        mc.method = grad ? VP_MC_FULL : VP_MC_REDUCED; /* the gradient: full only */
        vp_profile header = {0};
        assert_int_equal(vp_mc_header(&header, &cfg, &mc), VP_OK);
        vp_profile *ran = NULL;
        vp_error err = {0};
        if (vp_mc_profile(&cfg, &mc, &ran, &err) != VP_OK) {
            print_error("vp_mc_profile: %s\n", err.message);
            fail();
        }
        assert_same_header(&header, ran);
        assert_int_equal(header.engine, VP_ENGINE_MC);
        assert_int_equal(header.sub_blocks, 4);
        assert_int_equal(header.sampling.width, 16);
        assert_int_equal(header.sampling.trials, 64);
        assert_int_equal(!!(header.fields & VP_HAS_GRAD), grad);
        vp_profile_free(ran);
    }
}

static void forward_header_is_the_profiles(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_POST_LN, 2);
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.width = 16;
    o.heads = 2;
    o.kv_heads = 1;
    o.vocab = 32;
    o.batch = 1;
    o.tokens = 4;
    o.mlp = VP_MLP_SWIGLU;
    o.bias = VP_BIAS_NONE;
    o.positions = VP_POSITIONS_ROPE;
    vp_profile header = {0};
    assert_int_equal(vp_forward_header(&header, &cfg, &o), VP_OK);
    vp_profile *ran = NULL;
    assert_int_equal(vp_forward_profile(&cfg, &o, &ran, NULL), VP_OK);
    assert_same_header(&header, ran);
    assert_int_equal(header.engine, VP_ENGINE_FORWARD);
    assert_int_equal(header.sampling.kv_heads, 1);
    assert_int_equal(header.sampling.trials, 4);
    assert_true(header.sampling.rope_theta == 10000.0);
    vp_profile_free(ran);
}

/* A header whose bytes are all 0x5a, to see that a refusal writes none. */
static void assert_untouched(const vp_profile *p)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < sizeof *p; i++)
        if (b[i] != 0x5a) {
            print_error("byte %zu of the header written: %#x\n", i, b[i]);
            fail();
        }
}

static void headers_refuse_what_they_cannot_describe(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 2);
    vp_mc_options mc;
    vp_mc_options_init(&mc);
    vp_forward_options o;
    vp_forward_options_init(&o);
    vp_profile header;
    memset(&header, 0x5a, sizeof header);
    assert_int_equal(vp_mc_header(NULL, &cfg, &mc), VP_EINVAL);
    assert_int_equal(vp_mc_header(&header, NULL, &mc), VP_EINVAL);
    assert_int_equal(vp_mc_header(&header, &cfg, NULL), VP_EINVAL);
    assert_int_equal(vp_forward_header(NULL, &cfg, &o), VP_EINVAL);
    assert_int_equal(vp_forward_header(&header, NULL, &o), VP_EINVAL);
    assert_int_equal(vp_forward_header(&header, &cfg, NULL), VP_EINVAL);
    o.width = 0; /* the header divides by it */
    assert_int_equal(vp_forward_header(&header, &cfg, &o), VP_EINVAL);
    assert_untouched(&header);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mc_header_is_the_profiles),
        cmocka_unit_test(forward_header_is_the_profiles),
        cmocka_unit_test(headers_refuse_what_they_cannot_describe),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
