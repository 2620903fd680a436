/* OPT's embedding step and head, held to transformers: its learned positions
 * read two rows on (position_offset), and OPT-350m's narrower embedding
 * mapped to the stream by project_in and back by project_out (embed_dim).
 * The corpus's opt checkpoints (tests/data/conformance, written and run by
 * transformers) are read as safetensors, their tensors renamed to
 * varprof's in memory, and run through vp_forward_profile: the stream norms,
 * the loss and the gradients of the embedding's tensors must be
 * transformers' (expected.json). Post-LN with project_in/out, and pre-norm
 * with the offset alone. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "renamed_case.h"
#include "test_filter.h"
#include "varprof/varprof.h"

#define CORPUS "tests/data/conformance/"
#define BATCH 2
#define TOKENS 11
/* the conformance test's bounds */
#define TOLERANCE 1e-5
#define GRAD_TOLERANCE 1e-4

/* OPT's names, after model.decoder., and varprof's ("%zu" a layer) */
static const name_pair names[] = {
    {"embed_tokens.weight", "embed.weight"},
    {"embed_positions.weight", "pos_embed.weight"},
    {"project_in.weight", "project_in.weight"},
    {"project_out.weight", "project_out.weight"},
    {"final_layer_norm.weight", "final_norm.weight"},
    {"final_layer_norm.bias", "final_norm.bias"},
    {"layers.%zu.self_attn_layer_norm.weight", "layers.%zu.attn_norm.weight"},
    {"layers.%zu.self_attn_layer_norm.bias", "layers.%zu.attn_norm.bias"},
    {"layers.%zu.self_attn.q_proj.weight", "layers.%zu.attn.q.weight"},
    {"layers.%zu.self_attn.q_proj.bias", "layers.%zu.attn.q.bias"},
    {"layers.%zu.self_attn.k_proj.weight", "layers.%zu.attn.k.weight"},
    {"layers.%zu.self_attn.k_proj.bias", "layers.%zu.attn.k.bias"},
    {"layers.%zu.self_attn.v_proj.weight", "layers.%zu.attn.v.weight"},
    {"layers.%zu.self_attn.v_proj.bias", "layers.%zu.attn.v.bias"},
    {"layers.%zu.self_attn.out_proj.weight", "layers.%zu.attn.o.weight"},
    {"layers.%zu.self_attn.out_proj.bias", "layers.%zu.attn.o.bias"},
    {"layers.%zu.final_layer_norm.weight", "layers.%zu.mlp_norm.weight"},
    {"layers.%zu.final_layer_norm.bias", "layers.%zu.mlp_norm.bias"},
    {"layers.%zu.fc1.weight", "layers.%zu.mlp.fc1.weight"},
    {"layers.%zu.fc1.bias", "layers.%zu.mlp.fc1.bias"},
    {"layers.%zu.fc2.weight", "layers.%zu.mlp.fc2.weight"},
    {"layers.%zu.fc2.bias", "layers.%zu.mlp.fc2.bias"},
};
#define N_NAMES (sizeof names / sizeof *names)
static const name_map opt = {"model.decoder.", names, N_NAMES, 2};

/* The case's checkpoint under varprof's names, run forward and back on its
   tokens, against its expected.json. */
static void check_case(const char *name, vp_placement placement, size_t embed_dim)
{
    char path[256];
    snprintf(path, sizeof path, CORPUS "%s/model.safetensors", name);
    vp_safetensors file;
    renamed_case_read(path, &opt, &file);
    vp_error err;
    vp_config cfg;
    vp_config_init(&cfg, placement, 1);
    cfg.grad = 1;
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.heads = 4;
    o.mlp = VP_MLP_RELU;
    if (vp_forward_infer(&file, &cfg, &o, &err) != VP_OK)
        fail_msg("vp_forward_infer: %s", err.message);
    assert_int_equal(o.width, 32);
    assert_int_equal(o.embed_dim, embed_dim);
    unsigned ids[BATCH * TOKENS];
    snprintf(path, sizeof path, CORPUS "%s/tokens.csv", name);
    case_read_tokens(path, ids, BATCH * TOKENS);
    case_gradients grads = {0};
    o.weights = &file;
    o.token_ids = ids;
    o.batch = BATCH;
    o.tokens = TOKENS;
    o.tie_embeddings = 1;
    o.position_offset = 2; /* OPT's */
    o.loss = VP_LOSS_NEXT;
    o.on_param_grad = case_gradients_collect;
    o.param_grad_ctx = &grads;
    vp_profile *p = NULL;
    if (vp_forward_profile(&cfg, &o, &p, &err) != VP_OK)
        fail_msg("vp_forward_profile: %s", err.message);
    snprintf(path, sizeof path, CORPUS "%s/expected.json", name);
    cJSON *want = case_read_json(path);
    const cJSON *stream = cJSON_GetObjectItem(want, "stream"),
                *mid = cJSON_GetObjectItem(want, "mid");
    assert_int_equal(p->n_rows, 5);
    for (int k = 0; k < 5; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s: sub-block %d's stream norm", name, k);
        const cJSON *w = cJSON_GetArrayItem(k % 2 ? mid : stream, k / 2);
        case_near(what, p->rows[k].stream_norm, w->valuedouble, TOLERANCE);
    }
    case_near("loss", p->loss, cJSON_GetObjectItem(want, "loss")->valuedouble, TOLERANCE);
    /* the embedding step's and the head's tensors; the rest the conformance
       test holds */
    const cJSON *grad = cJSON_GetObjectItem(want, "grad");
    double sum = 0.0;
    for (size_t i = 0; i < grads.count; i++) {
        sum += grads.frobenius[i] * grads.frobenius[i];
        const char *own = grads.name[i];
        if (strncmp(own, "layers.", 7) == 0 || strncmp(own, "final_norm", 10) == 0)
            continue;
        for (size_t n = 0; n < 4; n++)
            if (strcmp(own, names[n].own) == 0) {
                char hf[96];
                snprintf(hf, sizeof hf, "model.decoder.%s", names[n].family);
                case_near(own, grads.frobenius[i], cJSON_GetObjectItem(grad, hf)->valuedouble,
                          GRAD_TOLERANCE);
            }
    }
    case_near("the global gradient norm", sqrt(sum),
              cJSON_GetObjectItem(want, "grad_global")->valuedouble, TOLERANCE);
    assert_int_equal(grads.count, (size_t)cJSON_GetArraySize(grad));
    cJSON_Delete(want);
    vp_profile_free(p);
    vp_safetensors_free(&file);
}

static void post_ln_with_projections(void **state)
{
    (void)state;
    check_case("opt_post_ln", VP_POST_LN, 16);
}

static void pre_norm_with_offset(void **state)
{
    (void)state;
    check_case("opt_pre_norm", VP_PRE_NORM, 0);
}

/* An embedding wider than the stream, or one without weights to read
   project_in and project_out from, is refused naming both widths. */
static void refusals(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_POST_LN, 2);
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.width = 64;
    o.embed_dim = 32;
    vp_error err;
    assert_int_equal(vp_forward_check(&cfg, &o, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "width 32 on a stream of 64"));
    assert_non_null(strstr(err.message, "never drawn"));
    o.embed_dim = 128;
    assert_int_equal(vp_forward_check(&cfg, &o, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "never a wider one"));
    o.embed_dim = 64; /* as wide as the stream: no projections */
    assert_int_equal(vp_forward_check(&cfg, &o, &err), VP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(post_ln_with_projections),
        cmocka_unit_test(pre_norm_with_offset),
        cmocka_unit_test(refusals),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
