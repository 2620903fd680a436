/* The head's logit scale and LayerNorm without bias, held to transformers:
 * the corpus's cohere checkpoint (tests/data/conformance, written and run by
 * transformers' CohereForCausalLM, logit_scale 0.125, CohereLayerNorm with
 * no bias) is read as safetensors, its tensors renamed to varprof's in
 * memory, and run through vp_forward_profile with the options set by hand
 * (not by the checkpoint reader): the stream norms, the loss and every
 * gradient must be transformers' (expected.json), and the loss must miss
 * them without the scale. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "renamed_case.h"
#include "test_filter.h"
#include "varprof/varprof.h"

#define CASE "tests/data/conformance/cohere/"
#define BATCH 2
#define TOKENS 11
#define LAYERS 2
#define LOGIT_SCALE 0.125 /* the case's config.json */
/* the conformance test's bounds */
#define TOLERANCE 1e-5
#define GRAD_TOLERANCE 1e-4

/* Cohere's names, after model., and varprof's ("%zu" a layer) */
static const name_pair names[] = {
    {"embed_tokens.weight", "embed.weight"},
    {"norm.weight", "final_norm.weight"},
    {"layers.%zu.input_layernorm.weight", "layers.%zu.attn_norm.weight"},
    {"layers.%zu.self_attn.q_proj.weight", "layers.%zu.attn.q.weight"},
    {"layers.%zu.self_attn.k_proj.weight", "layers.%zu.attn.k.weight"},
    {"layers.%zu.self_attn.v_proj.weight", "layers.%zu.attn.v.weight"},
    {"layers.%zu.self_attn.o_proj.weight", "layers.%zu.attn.o.weight"},
    {"layers.%zu.mlp.gate_proj.weight", "layers.%zu.mlp.gate.weight"},
    {"layers.%zu.mlp.up_proj.weight", "layers.%zu.mlp.up.weight"},
    {"layers.%zu.mlp.down_proj.weight", "layers.%zu.mlp.down.weight"},
};
#define N_NAMES (sizeof names / sizeof *names)
static const name_map cohere = {"model.", names, N_NAMES, LAYERS};

/* The case's tensors under varprof's names, and Cohere's options by hand:
   parallel branches on one shared LayerNorm without bias, SwiGLU, GQA,
   RoPE with interleaved pairs (theta 500000), a tied head. */
static void cohere_options(vp_safetensors *file, vp_config *cfg, vp_forward_options *o)
{
    renamed_case_read(CASE "model.safetensors", &cohere, file);
    vp_config_init(cfg, VP_PARALLEL, 1);
    cfg->grad = 1;
    vp_forward_options_init(o);
    o->heads = 4;
    o->kv_heads = 2;
    o->mlp = VP_MLP_SWIGLU;
    o->norm_unbiased = 1; /* so that norms without biases read as LayerNorms */
    vp_error err;
    if (vp_forward_infer(file, cfg, o, &err) != VP_OK)
        fail_msg("vp_forward_infer: %s", err.message);
    assert_int_equal(o->norm, VP_NORM_LAYERNORM);
    assert_int_equal(o->bias, VP_BIAS_NONE);
    assert_int_equal(cfg->layers, LAYERS);
    o->eps = 1e-5;
    o->residual = VP_RESIDUAL_PARALLEL_SHARED_NORM;
    o->positions = VP_POSITIONS_ROPE_INTERLEAVED;
    o->rope_theta = 500000.0;
    o->tie_embeddings = 1;
    o->batch = BATCH;
    o->tokens = TOKENS;
    o->loss = VP_LOSS_NEXT;
    o->weights = file;
}

/* The loss, and the gradients into *grads, at the given logit scale. */
static vp_profile *run(double logit_scale, case_gradients *grads)
{
    static unsigned ids[BATCH * TOKENS];
    case_read_tokens(CASE "tokens.csv", ids, BATCH * TOKENS);
    vp_safetensors file;
    vp_config cfg;
    vp_forward_options o;
    cohere_options(&file, &cfg, &o);
    o.token_ids = ids;
    o.logit_scale = logit_scale;
    o.on_param_grad = case_gradients_collect;
    o.param_grad_ctx = grads;
    vp_profile *p = NULL;
    vp_error err;
    if (vp_forward_profile(&cfg, &o, &p, &err) != VP_OK)
        fail_msg("vp_forward_profile: %s", err.message);
    vp_safetensors_free(&file);
    return p;
}

static void scaled_logits_are_transformers(void **state)
{
    (void)state;
    case_gradients grads = {0};
    vp_profile *p = run(LOGIT_SCALE, &grads);
    cJSON *want = case_read_json(CASE "expected.json");
    const cJSON *stream = cJSON_GetObjectItem(want, "stream");
    assert_int_equal(p->n_rows, LAYERS + 1);
    for (int k = 0; k <= LAYERS; k++) {
        char what[64];
        snprintf(what, sizeof what, "sub-block %d's stream norm", k);
        case_near(what, p->rows[k].stream_norm, cJSON_GetArrayItem(stream, k)->valuedouble,
                  TOLERANCE);
    }
    case_near("loss", p->loss, cJSON_GetObjectItem(want, "loss")->valuedouble, TOLERANCE);
    assert_true(p->sampling.logit_scale == LOGIT_SCALE);
    /* every tensor's gradient, the norms' biases among none of them */
    const cJSON *grad = cJSON_GetObjectItem(want, "grad");
    assert_int_equal(grads.count, (size_t)cJSON_GetArraySize(grad));
    double sum = 0.0;
    for (size_t i = 0; i < grads.count; i++) {
        char hf[96];
        if (!name_map_rename(&cohere, grads.name[i], 1, hf, sizeof hf))
            fail_msg("gradient '%s' is of no tensor of the checkpoint", grads.name[i]);
        const cJSON *w = cJSON_GetObjectItem(grad, hf);
        if (!w)
            fail_msg("gradient '%s' (%s) is not in expected.json", grads.name[i], hf);
        case_near(grads.name[i], grads.frobenius[i], w->valuedouble, GRAD_TOLERANCE);
        sum += grads.frobenius[i] * grads.frobenius[i];
    }
    case_near("the global gradient norm", sqrt(sum),
              cJSON_GetObjectItem(want, "grad_global")->valuedouble, TOLERANCE);
    cJSON_Delete(want);
    vp_profile_free(p);
}

/* Without the scale the same network's loss is another: the agreement
   above is the scale's. And 0 reads as 1 (a zeroed options struct). */
static void unscaled_logits_miss(void **state)
{
    (void)state;
    case_gradients one = {0}, zero = {0};
    vp_profile *p = run(1.0, &one);
    vp_profile *q = run(0.0, &zero);
    cJSON *want = case_read_json(CASE "expected.json");
    const double loss = cJSON_GetObjectItem(want, "loss")->valuedouble;
    if (!(case_relative(p->loss, loss) > 1e-2))
        fail_msg("logit scale 1: loss %.17g within 1e-2 of transformers' %.17g at scale %g",
                 p->loss, loss, LOGIT_SCALE);
    assert_true(p->loss == q->loss);
    assert_true(q->sampling.logit_scale == 1.0);
    for (size_t i = 0; i < one.count; i++)
        assert_true(one.frobenius[i] == zero.frobenius[i]);
    cJSON_Delete(want);
    vp_profile_free(p);
    vp_profile_free(q);
}

/* A scale outside floats' range is refused, naming it. */
static void refusals(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 2);
    vp_forward_options o;
    vp_forward_options_init(&o);
    vp_error err;
    o.logit_scale = -1.0;
    assert_int_equal(vp_forward_check(&cfg, &o, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "logit scale is -1"));
    o.logit_scale = 1e31;
    assert_int_equal(vp_forward_check(&cfg, &o, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "logit scale"));
    o.logit_scale = 0.0625;
    assert_int_equal(vp_forward_check(&cfg, &o, &err), VP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scaled_logits_are_transformers),
        cmocka_unit_test(unscaled_logits_miss),
        cmocka_unit_test(refusals),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
