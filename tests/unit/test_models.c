/* The models table: the committed data/models.csv parses, names the models
 * the chapter needs with the placements their papers give, every model
 * resolves to a profile, and a malformed row is an error naming its line.
 * --model on the command line is tests/program/test_cli_models.c. */
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/varprof.h"

static const char *models_path(void)
{
    const char *env = getenv("VARPROF_MODELS");
    return env && *env ? env : "data/models.csv";
}

static void table_parses_and_names_the_chapter_models(void **state)
{
    (void)state;
    vp_model_table table;
    vp_error err;
    if (vp_models_read(models_path(), &table, &err) != VP_OK) {
        print_error("%s\n", err.message);
        fail();
    }
    assert_true(table.count >= 25);
    const struct {
        const char *name;
        vp_placement placement;
    } expected[] = {
        {"bert-base", VP_POST_LN},    {"transformer-base", VP_POST_LN},
        {"gpt-2-small", VP_PRE_NORM}, {"gpt-3-175b", VP_PRE_NORM},
        {"llama-2-7b", VP_PRE_NORM},  {"llama-3-8b", VP_PRE_NORM},
        {"mistral-7b", VP_PRE_NORM},  {"qwen2-7b", VP_PRE_NORM},
        {"deepseek-v3", VP_PRE_NORM}, {"gemma-2-27b", VP_SANDWICH},
        {"gemma-3-27b", VP_SANDWICH}, {"olmo-2-7b", VP_OUTPUT_NORM},
        {"gpt-j-6b", VP_PARALLEL},
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const vp_model *m = vp_model_find(&table, expected[i].name);
        if (!m) {
            print_error("%s is missing from %s\n", expected[i].name, models_path());
            fail();
        }
        assert_int_equal(m->placement, expected[i].placement);
    }
    /* facts the chapter quotes: Gemma 2 27B has 46 layers, BERT-base 12 */
    assert_int_equal(vp_model_find(&table, "gemma-2-27b")->layers, 46);
    assert_int_equal(vp_model_find(&table, "bert-base")->layers, 12);
    assert_int_equal(vp_model_find(&table, "gpt-j-6b")->layers, 28);
    /* GLM-130B's own DeepNorm scales, (2N)^(1/2) and (2N)^(-1/2), not
     * DeepNet's (2N)^(1/4) and (8N)^(-1/4); the others use the defaults */
    const vp_model *glm = vp_model_find(&table, "glm-130b");
    assert_non_null(glm);
    assert_string_equal(glm->alpha.text, "(2N)^(1/2)");
    assert_string_equal(glm->beta.text, "(2N)^(-1/2)");
    assert_true(strstr(glm->scale_source, "arXiv:2210.02414") != NULL);
    assert_true(fabs(vp_model_scale_value(&glm->alpha, 70) - sqrt(140.0)) < 1e-14 * sqrt(140.0));
    assert_true(fabs(vp_model_scale_value(&glm->beta, 70) - 1.0 / sqrt(140.0)) < 1e-14);
    const vp_model *llama = vp_model_find(&table, "llama-2-7b");
    assert_true(isnan(vp_model_scale_value(&llama->alpha, 32)));
    /* every committed model has its shape; Llama-2-7B's as its config.json
     * gives it: d 4096, 32 heads, SwiGLU 11008, RoPE 10000, no biases */
    for (size_t i = 0; i < table.count; i++)
        if (!table.models[i].shape.known || !table.models[i].shape.source[0]) {
            print_error("%s has no shape\n", table.models[i].name);
            fail();
        }
    const vp_model_shape *shape = &llama->shape;
    assert_int_equal(shape->width, 4096);
    assert_int_equal(shape->heads, 32);
    assert_int_equal(shape->kv_heads, 32);
    assert_int_equal(shape->head_dim, 128);
    assert_int_equal(shape->ffn_width, 11008);
    assert_int_equal(shape->vocab, 32000);
    assert_int_equal(shape->activation, VP_MLP_SWIGLU);
    assert_int_equal(shape->positions, VP_MODEL_POSITIONS_ROPE);
    assert_true(shape->rope_theta == 10000.0);
    assert_int_equal(shape->biases, VP_MODEL_BIASES_NO);
    assert_false(shape->tied_embeddings);
    assert_true(shape->final_norm);
    assert_int_equal(shape->architecture, VP_MODEL_ARCHITECTURE_DENSE);
    assert_int_equal(vp_model_find(&table, "t5-base")->shape.architecture,
                     VP_MODEL_ARCHITECTURE_ENCODER_DECODER);
    assert_int_equal(vp_model_find(&table, "deepseek-v3")->shape.architecture,
                     VP_MODEL_ARCHITECTURE_MOE);
    assert_string_equal(llama->scale_source, "");
    vp_model_table_free(&table);
}

static void every_model_resolves_to_a_profile(void **state)
{
    (void)state;
    vp_model_table table;
    assert_int_equal(vp_models_read(models_path(), &table, NULL), VP_OK);
    for (size_t i = 0; i < table.count; i++) {
        const vp_model *m = &table.models[i];
        vp_config cfg;
        vp_config_init(&cfg, m->placement, m->layers);
        vp_profile *p;
        vp_error err;
        assert_int_equal(vp_closed_profile(&cfg, &p, &err), VP_OK);
        assert_int_equal(p->sub_blocks, vp_sub_block_count(m->placement, m->layers));
        assert_int_equal(p->overflow_at, 0);
        vp_profile_free(p);
    }
    vp_model_table_free(&table);
}

static void malformed_rows_name_their_line(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/models.csv", dir);
    const char *head = "name,year,layers,placement,norm,qk_norm,source\n";
    const char *good = "a-1,2020,12,pre-norm,layernorm,no,paper\n";
    const struct {
        const char *row;
        const char *message;
    } cases[] = {
        {"b,2020,12,pre-norm,layernorm,no\n", "line 3 has 6 cells; the header (line 1) has 7"},
        {"B!,2020,12,pre-norm,layernorm,no,paper\n", "line 3: name 'B!'"},
        {"b,20x0,12,pre-norm,layernorm,no,paper\n", "line 3, year"},
        {"b,2020,1.5,pre-norm,layernorm,no,paper\n", "line 3, layers"},
        {"b,2020,12,post-norm,layernorm,no,paper\n", "line 3, placement"},
        {"b,2020,12,pre-norm,batchnorm,no,paper\n", "line 3, norm: 'batchnorm'"},
        {"b,2020,12,pre-norm,layernorm,maybe,paper\n", "line 3, qk_norm"},
        {"b,2020,12,pre-norm,layernorm,no,\n", "line 3, source"},
        {"a-1,2021,12,pre-norm,layernorm,no,paper\n", "line 3: model 'a-1' is listed twice"},
        {"b,2020,12,pre-norm,layernorm,no,\"open\n", "quoted field"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%s%s%s", head, good, cases[i].row);
        fclose(f);
        vp_model_table table = {0};
        vp_error err = {0};
        assert_int_equal(vp_models_read(path, &table, &err), VP_EFORMAT);
        if (!strstr(err.message, cases[i].message)) {
            print_error("want \"%s\" in \"%s\"\n", cases[i].message, err.message);
            fail();
        }
        assert_int_equal(table.count, 0);
        assert_null(table.models);
    }
    /* a model's own alpha and beta: a deepnorm model's, each empty, a number
     * or (cN)^(p), with their source */
    const char *head10 = "name,year,layers,placement,norm,qk_norm,source,alpha,beta,"
                         "alpha_beta_source\n";
    const struct {
        const char *row;
        const char *message;
    } scales[] = {
        {"b,2020,12,post-ln,layernorm,no,paper,2,,src\n",
         "line 3, alpha and beta: only a deepnorm"},
        {"b,2020,12,deepnorm,layernorm,no,paper,(2M)^(1/2),,src\n", "line 3, alpha: '(2M)^(1/2)'"},
        {"b,2020,12,deepnorm,layernorm,no,paper,,(2N)^(1/0),src\n", "line 3, beta"},
        {"b,2020,12,deepnorm,layernorm,no,paper,0,,src\n", "line 3, alpha: '0'"},
        {"b,2020,12,deepnorm,layernorm,no,paper,2,,\n", "line 3, alpha_beta_source"},
        {"b,2020,12,deepnorm,layernorm,no,paper,,,src\n", "line 3, alpha_beta_source"},
        {"b,2020,12,deepnorm,layernorm,no,paper,11,8,,src\n", "'11,8' looks like the number 11.8"},
    };
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%sa-1,2020,12,pre-norm,layernorm,no,paper,,,\n%s", head10, scales[i].row);
        fclose(f);
        vp_model_table table = {0};
        vp_error err = {0};
        assert_int_equal(vp_models_read(path, &table, &err), VP_EFORMAT);
        if (!strstr(err.message, scales[i].message)) {
            print_error("want \"%s\" in \"%s\"\n", scales[i].message, err.message);
            fail();
        }
        assert_null(table.models);
    }
    FILE *own = fopen(path, "w");
    fprintf(own, "%sd,2020,12,deepnorm,layernorm,no,paper,(N)^(0.5),0.125,src\n", head10);
    fclose(own);
    vp_model_table read = {0};
    assert_int_equal(vp_models_read(path, &read, NULL), VP_OK);
    assert_true(vp_model_scale_value(&read.models[0].alpha, 16) == 4.0);
    assert_true(vp_model_scale_value(&read.models[0].beta, 16) == 0.125);
    vp_model_table_free(&read);
    /* a header in capitals is said to be one */
    FILE *f = fopen(path, "w");
    fprintf(f, "Name,year,layers,placement,norm,qk_norm,source\n%s", good);
    fclose(f);
    vp_model_table named = {0};
    vp_error why;
    assert_int_equal(vp_models_read(path, &named, &why), VP_EFORMAT);
    assert_non_null(strstr(why.message, "column 1 is 'Name', expected 'name'"));
    assert_non_null(strstr(why.message, "exactly"));
    /* Excel's byte-order mark is skipped */
    f = fopen(path, "w");
    fprintf(f, "\xEF\xBB\xBF%s%s", head, good);
    fclose(f);
    assert_int_equal(vp_models_read(path, &named, &why), VP_OK);
    assert_int_equal(named.count, 1);
    vp_model_table_free(&named);
    f = fopen(path, "w");
    fprintf(f, "model,year\n");
    fclose(f);
    vp_model_table table;
    vp_error err;
    assert_int_equal(vp_models_read(path, &table, &err), VP_EFORMAT);
    assert_non_null(strstr(err.message, "line 1"));
    test_remove_tree(dir);
}

/* The shape's columns: a row gives all of them or none, each is checked
 * against what it allows, and the heads' arithmetic must hold. */
/* The header of a table with the shape's columns (26) */
#define SHAPE_HEADER                                                                               \
    "name,year,layers,placement,norm,qk_norm,source,alpha,beta,alpha_beta_source,width,heads,"     \
    "kv_heads,head_dim,ffn_width,vocab,activation,positions,max_positions,rope_theta,norm_eps,"    \
    "biases,tied_embeddings,final_norm,architecture,shape_source"

/* A table of head and the row first + rest is refused, saying message. */
static void refused_row(const char *path, const char *head, const char *first, const char *rest,
                        const char *message)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s%s%s\n", head, first, rest);
    fclose(f);
    vp_model_table table = {0};
    vp_error err = {0};
    assert_int_equal(vp_models_read(path, &table, &err), VP_EFORMAT);
    if (!strstr(err.message, message))
        fail_msg("want \"%s\" in \"%s\"", message, err.message);
    assert_null(table.models);
}

static void malformed_shapes_name_their_column(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/models.csv", dir);
    const char *head = SHAPE_HEADER "\n";
    /* the first ten cells, and the comma before the shape's */
    const char *model = "b,2020,12,pre-norm,rmsnorm,no,paper,,,,";
    const struct {
        const char *shape;
        const char *message;
    } cases[] = {
        {"0,8,8,,2048,32000,swiglu,rope,,10000,1e-5,no,no,yes,dense,cfg", "line 2, width: '0'"},
        {"512,7,7,,2048,32000,swiglu,rope,,10000,1e-5,no,no,yes,dense,cfg",
         "line 2, heads: 7 does not divide width (512); give head_dim"},
        {"512,8,3,,2048,32000,swiglu,rope,,10000,1e-5,no,no,yes,dense,cfg",
         "line 2, kv_heads: 3 does not divide heads (8)"},
        {"512,8,16,,2048,32000,swiglu,rope,,10000,1e-5,no,no,yes,dense,cfg",
         "line 2, kv_heads: '16'"},
        {"512,8,8,x,2048,32000,swiglu,rope,,10000,1e-5,no,no,yes,dense,cfg",
         "line 2, head_dim: 'x'"},
        {"512,8,8,,,32000,swiglu,rope,,10000,1e-5,no,no,yes,dense,cfg", "line 2, ffn_width"},
        {"512,8,8,,2048,32000,silu,rope,,10000,1e-5,no,no,yes,dense,cfg",
         "line 2, activation: MLP 'silu' is not one of: gelu, gelu-tanh, relu, swiglu, geglu"},
        {"512,8,8,,2048,32000,swiglu,yarn,,10000,1e-5,no,no,yes,dense,cfg",
         "line 2, positions: 'yarn' is not none, learned, sinusoidal, rope, relative, alibi or "
         "partial-rope"},
        {"512,8,8,,2048,32000,gelu,learned,,,1e-5,yes,yes,yes,dense,cfg", "line 2, max_positions"},
        {"512,8,8,,2048,32000,swiglu,rope,1024,10000,1e-5,no,no,yes,dense,cfg",
         "line 2, max_positions"},
        {"512,8,8,,2048,32000,swiglu,rope,,,1e-5,no,no,yes,dense,cfg", "line 2, rope_theta: ''"},
        {"512,8,8,,2048,32000,gelu,none,,10000,1e-5,no,no,yes,dense,cfg",
         "line 2, rope_theta: '10000'"},
        {"512,8,8,,2048,32000,swiglu,rope,,10000,5,no,no,yes,dense,cfg", "line 2, norm_eps: '5'"},
        {"512,8,8,,2048,32000,swiglu,rope,,10000,1e-5,qk,no,yes,dense,cfg",
         "line 2, biases: 'qk' is not no, yes (every linear map), qkv"},
        {"512,8,8,,2048,32000,swiglu,rope,,10000,1e-5,no,tied,yes,dense,cfg",
         "line 2, tied_embeddings: 'tied' is not yes or no"},
        {"512,8,8,,2048,32000,swiglu,rope,,10000,1e-5,no,no,1,dense,cfg",
         "line 2, final_norm: '1' is not yes or no"},
        {"512,8,8,,2048,32000,swiglu,rope,,10000,1e-5,no,no,yes,dense,", "line 2, shape_source"},
        {",,,,,,,,,,,,,,,cfg", "line 2, width"},
        {"512,8,8,,2048,32000,swiglu,rope,,10000,1e-5,no,no,yes,mixture,cfg",
         "line 2, architecture: 'mixture' is not dense, encoder-decoder (the row is the encoder) "
         "or "
         "moe"},
        {"512,8,8,,2048,32000,swiglu,rope,,10000,1e-5,no,no,yes,dense", "line 2 has 25 cells"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        refused_row(path, head, model, cases[i].shape, cases[i].message);
    /* a shape with head_dim apart from d / H (Gemma's), one left unknown, and
     * the old 10-column header, which gives none */
    FILE *f = fopen(path, "w");
    fprintf(f,
            "%s%s3584,16,8,256,14336,256000,geglu,rope,,10000,1e-6,no,yes,yes,moe,cfg\n"
            "c,2020,12,pre-norm,rmsnorm,no,paper,,,,,,,,,,,,,,,,,,,\n",
            head, model);
    fclose(f);
    vp_model_table table;
    assert_int_equal(vp_models_read(path, &table, NULL), VP_OK);
    assert_int_equal(table.count, 2);
    const vp_model_shape *s = &table.models[0].shape;
    assert_true(s->known && s->head_dim_given);
    assert_int_equal(s->head_dim, 256);
    assert_int_equal(s->activation, VP_MLP_GEGLU);
    assert_true(s->rope_theta == 10000.0 && s->norm_eps == 1e-6 && s->tied_embeddings);
    assert_int_equal(s->architecture, VP_MODEL_ARCHITECTURE_MOE);
    assert_false(table.models[1].shape.known);
    vp_model_table_free(&table);
    f = fopen(path, "w");
    fprintf(f, "name,year,layers,placement,norm,qk_norm,source,alpha,beta,alpha_beta_source\n"
               "b,2020,12,pre-norm,rmsnorm,no,paper,,,\n");
    fclose(f);
    assert_int_equal(vp_models_read(path, &table, NULL), VP_OK);
    assert_false(table.models[0].shape.known);
    vp_model_table_free(&table);
    test_remove_tree(dir);
}

/* Attention's columns: each bad cell names its line, its column and what
   it allows; a good row reads each fact, an empty one none. */
static void malformed_attention_names_its_column(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/models.csv", dir);
    const char *head = SHAPE_HEADER ",residual,rotary_fraction,rotary_pairing,embedding_norm,"
                                    "logit_scale,norm_bias,sliding_window,window_pattern,"
                                    "rope_local_theta,rope_linear_factor,attn_scalar,"
                                    "attn_softcap,logit_softcap\n";
    /* a rope row and an alibi row, up to the forms' cells */
    const char *rope = "g,2025,6,sandwich,rmsnorm,yes,paper,,,,64,4,2,16,96,100,geglu-tanh,rope,,"
                       "1000000,1e-6,no,yes,yes,dense,cfg,,,,,,,";
    const char *alibi = "b,2022,6,pre-norm,layernorm,no,paper,,,,64,4,4,,256,100,gelu-tanh,alibi,"
                        ",,1e-5,yes,yes,yes,dense,cfg,,,,,,,";
    const char *unknown = "u,2020,6,pre-norm,rmsnorm,no,paper,,,,,,,,,,,,,,,,,,,,,,,,,,";
    const struct {
        const char *row, *attention, *message;
    } cases[] = {
        {rope, "0,,,,,,", "line 2, sliding_window: '0' is not a whole number of keys"},
        {rope, "x,,,,,,", "line 2, sliding_window: 'x'"},
        {rope, ",6,,,,,",
         "line 2, window_pattern: '6' is not a whole number from 2 to 1000000 "
         "beside a sliding_window"},
        {rope, "4,1,,,,,", "line 2, window_pattern: '1'"},
        {rope, "4,,10000,,,,",
         "line 2, rope_local_theta: '10000' is not a number > 1 for rope "
         "positions beside a window_pattern"},
        {alibi, "4,2,10000,,,,", "line 2, rope_local_theta: '10000'"},
        {rope, "4,2,1,,,,", "line 2, rope_local_theta: '1'"},
        {rope, ",,,0.5,,,", "line 2, rope_linear_factor: '0.5' is not a number from 1 to 1e6"},
        {alibi, ",,,8,,,", "line 2, rope_linear_factor: '8'"},
        {rope, ",,,,0,,", "line 2, attn_scalar: '0' is not a number > 0"},
        {rope, ",,,,,-50,", "line 2, attn_softcap: '-50'"},
        {rope, ",,,,,,nan", "line 2, logit_softcap: 'nan'"},
        {unknown, "4,,,,,,", "line 2, sliding_window: attention's cells need the row's shape"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        refused_row(path, head, cases[i].row, cases[i].attention, cases[i].message);
    FILE *f = fopen(path, "w");
    fprintf(f, "%s%s1024,6,10000,8,168,50,30\n%s,,,,,,\n", head, rope, alibi);
    fclose(f);
    vp_model_table table;
    assert_int_equal(vp_models_read(path, &table, NULL), VP_OK);
    const vp_model_shape *s = &table.models[0].shape, *none = &table.models[1].shape;
    assert_int_equal(s->sliding_window, 1024);
    assert_int_equal(s->window_pattern, 6);
    assert_true(s->rope_local_theta == 10000.0 && s->rope_linear == 8.0);
    assert_true(s->attn_scalar == 168.0 && s->attn_softcap == 50.0 && s->logit_softcap == 30.0);
    assert_int_equal(none->sliding_window + none->window_pattern, 0);
    assert_true(none->rope_local_theta == 0.0 && none->rope_linear == 1.0);
    assert_true(none->attn_scalar == 0.0 && none->attn_softcap == 0.0);
    vp_model_table_free(&table);
    test_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_parses_and_names_the_chapter_models),
        cmocka_unit_test(every_model_resolves_to_a_profile),
        cmocka_unit_test(malformed_rows_name_their_line),
        cmocka_unit_test(malformed_shapes_name_their_column),
        cmocka_unit_test(malformed_attention_names_its_column),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("the models table", tests, NULL, NULL);
}
