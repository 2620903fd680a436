/* The models table's forms (issue 30): the residual form, the rotary
 * fraction and pairing, the embedding norm, the logit scale and LayerNorm's
 * bias, read from the trailing columns. --model NAME --engine forward builds
 * a row with them as the same options given by hand build it, to the byte
 * of the CSV; each new family's real row runs two of its layers; a bad form
 * cell is refused naming its line, its column and what it allows. The toy
 * rows here are the real rows' forms at toy widths (VARPROF_MODELS). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

#define HEADER                                                                                     \
    "name,year,layers,placement,norm,qk_norm,source,alpha,beta,alpha_beta_source,width,heads,"     \
    "kv_heads,head_dim,ffn_width,vocab,activation,positions,max_positions,rope_theta,norm_eps,"    \
    "biases,tied_embeddings,final_norm,architecture,shape_source,residual,rotary_fraction,"        \
    "rotary_pairing,embedding_norm,logit_scale,norm_bias\n"

static const char table[] = HEADER
    /* Pythia's: two norms side by side, a quarter of each head rotated */
    "toy-pythia,2023,2,parallel,layernorm,no,test,,,,64,4,4,,256,100,gelu,partial-rope,,10000,"
    "1e-5,yes,no,yes,dense,test,parallel-two-norms,0.25,half,,,\n"
    /* GPT-J's: one norm, a quarter rotated in interleaved pairs, MLP biases */
    "toy-gptj,2021,2,parallel,layernorm,no,test,,,,64,4,4,,256,100,gelu-tanh,partial-rope,,"
    "10000,1e-5,mlp,no,yes,dense,test,parallel-shared-norm,0.25,interleaved,,,\n"
    /* Falcon-40B's: two norms, grouped-query attention, no biases, tied */
    "toy-falcon,2023,2,parallel,layernorm,no,test,,,,64,8,2,,256,100,gelu,rope,,10000,1e-5,no,"
    "yes,yes,dense,test,parallel-two-norms,,,,,\n"
    /* Command-R's: one LayerNorm without bias, interleaved pairs, a logit scale */
    "toy-cohere,2024,2,parallel,layernorm,no,test,,,,64,4,4,,96,100,swiglu,rope,,8000000,1e-5,"
    "no,yes,yes,dense,test,,,interleaved,,0.0625,no\n"
    /* BLOOM's: ALiBi and a LayerNorm on the embedding */
    "toy-bloom,2022,2,pre-norm,layernorm,no,test,,,,64,4,4,,256,100,gelu-tanh,alibi,,,1e-5,yes,"
    "yes,yes,dense,test,,,,layernorm,,\n";

static int setup(void **state)
{
    const char *path;
    if (test_scratch_setup(state) != 0 || !(path = write_scratch("models.csv", table)))
        return -1;
    return setenv("VARPROF_MODELS", path, 1);
}

/* The same network given by hand: every CSV byte equal. */
static void same_csv(const char *name, program_run by_model, program_run by_hand)
{
    if (by_model.status != 0)
        fail_msg("--model %s: %s", name, by_model.err);
    if (by_hand.status != 0)
        fail_msg("by hand for %s: %s", name, by_hand.err);
    if (strcmp(by_model.out, by_hand.out) != 0)
        fail_msg("--model %s gives\n%s\nby hand\n%s", name, by_model.out, by_hand.out);
    program_run_free(&by_model);
    program_run_free(&by_hand);
}

#define BY_MODEL(name)                                                                             \
    RUN("--model", name, "--engine", "forward", "--tokens", "9", "--format", "csv")
#define BY_HAND(...)                                                                               \
    RUN("--layers", "2", "--norm", "layernorm", "--engine", "forward", "--width", "64", "--vocab", \
        "100", "--norm-eps", "1e-5", "--tokens", "9", "--format", "csv", __VA_ARGS__)

static void each_form_is_built_as_by_hand(void **state)
{
    (void)state;
    same_csv("toy-pythia", BY_MODEL("toy-pythia"),
             BY_HAND("--placement", "parallel", "--residual", "parallel-two-norms", "--heads", "4",
                     "--ffn-width", "256", "--mlp", "gelu", "--positions", "rope",
                     "--rope-fraction", "0.25", "--bias", "yes"));
    same_csv("toy-gptj", BY_MODEL("toy-gptj"),
             BY_HAND("--placement", "parallel", "--residual", "parallel-shared-norm", "--heads",
                     "4", "--ffn-width", "256", "--mlp", "gelu-tanh", "--positions",
                     "rope-interleaved", "--rope-fraction", "0.25", "--bias", "mlp"));
    same_csv("toy-falcon", BY_MODEL("toy-falcon"),
             BY_HAND("--placement", "parallel", "--residual", "parallel-two-norms", "--heads", "8",
                     "--kv-heads", "2", "--ffn-width", "256", "--mlp", "gelu", "--positions",
                     "rope", "--bias", "no", "--tie-embeddings", "yes"));
    same_csv("toy-bloom", BY_MODEL("toy-bloom"),
             BY_HAND("--placement", "pre-norm", "--heads", "4", "--ffn-width", "256", "--mlp",
                     "gelu-tanh", "--positions", "alibi", "--embedding-norm", "layernorm", "--bias",
                     "yes", "--tie-embeddings", "yes"));
}

/* Command-R's: its LayerNorm without a bias has no option of its own, but a
 * drawn bias is 0, so the network by hand with biased norms runs the same
 * forward pass; the run names the logit scale and the interleaved pairs. */
static void cohere_is_built(void **state)
{
    (void)state;
    same_csv("toy-cohere", BY_MODEL("toy-cohere"),
             BY_HAND("--placement", "parallel", "--heads", "4", "--ffn-width", "96", "--mlp",
                     "swiglu", "--positions", "rope-interleaved", "--rope-theta", "8000000",
                     "--bias", "no", "--tie-embeddings", "yes", "--logit-scale", "0.0625"));
    program_run run = RUN("--model", "toy-cohere", "--engine", "forward", "--tokens", "9");
    if (run.status != 0)
        fail_msg("%s", run.err);
    if (!strstr(run.out, "scales: logits x 0.0625") || !strstr(run.out, "rope-interleaved"))
        fail_msg("expected the logit scale and the interleaved pairs in:\n%s", run.out);
    program_run_free(&run);
}

/* One model of each new family at its real shape, one of its layers (the
   weights are drawn panel by panel whatever the tokens: a layer of d 8192
   is most of the time). */
static void the_real_rows_run(void **state)
{
    (void)state;
    unsetenv("VARPROF_MODELS"); /* the table beside the program: data/models.csv */
    static const struct {
        const char *name, *says;
    } rows[] = {
        {"pythia-70m", "f_mlp(N_2(x))"},
        {"gpt-j-6b", "rope-interleaved, theta 10000, on the first 0.25 of each head"},
        {"falcon-7b", "71 heads sharing 1 kv head"},
        {"falcon-40b", "128 heads sharing 8 kv heads"},
        {"phi-2", "on the first 0.4 of each head"},
        {"phi-3-mini-4k", "swiglu MLP 8192 wide"},
        {"command-r", "scales: logits x 0.0625"},
        {"bloom-560m", "embedding: a layernorm on the looked-up rows"},
        {"qwen3-0.6b", "sharing 8 kv heads with QK-norm"},
        {"starcoder2-15b", "window: 4096 tokens on 1 of 1 layers\n"},
        {"gemma-3-1b", "window: 512 tokens on 1 of 1 layers, which turn by rope theta 10000"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        program_run run =
            RUN("--model", rows[i].name, "--engine", "forward", "--layers", "1", "--tokens", "8");
        if (run.status != 0)
            fail_msg("--model %s: %s", rows[i].name, run.err);
        if (!strstr(run.out, rows[i].says))
            fail_msg("--model %s: expected '%s' in:\n%s", rows[i].name, rows[i].says, run.out);
        program_run_free(&run);
    }
    setenv("VARPROF_MODELS", in_scratch("models.csv"), 1);
}

/* A table whose one row is `row`; `varprof models` must refuse it saying `says`. */
static void refused_row(const char *row, const char *says)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", in_scratch("bad.csv"));
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, HEADER "%s\n", row);
    fclose(f);
    setenv("VARPROF_MODELS", path, 1);
    program_run run = RUN("models");
    if (run.status != 1 || !strstr(run.err, says))
        fail_msg("%s: exit %d, expected 1 and '%s' in: %s", row, run.status, says, run.err);
    program_run_free(&run);
    setenv("VARPROF_MODELS", in_scratch("models.csv"), 1);
}

#define SHAPE "test,,,,64,4,4,,256,100,gelu,"

static void bad_form_cells_are_refused(void **state)
{
    (void)state;
    refused_row("a,2023,2,parallel,layernorm,no," SHAPE "rope,,10000,1e-5,yes,no,yes,dense,test,"
                "sequential,,,,,",
                "line 2, residual: 'sequential' is not parallel-shared-norm or parallel-two-norms");
    refused_row("a,2023,2,pre-norm,layernorm,no," SHAPE "rope,,10000,1e-5,yes,no,yes,dense,test,"
                "parallel-two-norms,,,,,",
                "line 2, residual: 'parallel-two-norms' is not sequential: a parallel form needs "
                "the parallel placement");
    refused_row("a,2023,2,parallel,layernorm,no," SHAPE "rope,,10000,1e-5,yes,no,yes,dense,test,"
                "two-norms,,,,,",
                "line 2, residual:");
    refused_row("a,2023,2,parallel,layernorm,no," SHAPE "partial-rope,,10000,1e-5,yes,no,yes,"
                "dense,test,,,,,,",
                "line 2, rotary_fraction: '' is not a number between 0 and 1 for partial-rope");
    refused_row("a,2023,2,parallel,layernorm,no," SHAPE "rope,,10000,1e-5,yes,no,yes,dense,test,"
                ",0.5,,,,",
                "line 2, rotary_fraction: '0.5' is not a number between 0 and 1 for "
                "partial-rope positions, or empty for others");
    refused_row("a,2023,2,parallel,layernorm,no," SHAPE "partial-rope,,10000,1e-5,yes,no,yes,"
                "dense,test,,0.3,,,,",
                "line 2, rotary_fraction: 0.3 of a head of 16 is 4.8 coordinates, not an even "
                "whole number");
    refused_row("a,2023,2,parallel,layernorm,no," SHAPE "learned,64,,1e-5,yes,no,yes,dense,test,"
                ",,interleaved,,,",
                "line 2, rotary_pairing: 'interleaved' is not half (rotate-half) or interleaved");
    refused_row("a,2023,2,parallel,layernorm,no," SHAPE "rope,,10000,1e-5,yes,no,yes,dense,test,"
                ",,gptj,,,",
                "line 2, rotary_pairing: 'gptj' is not half");
    refused_row("a,2023,2,pre-norm,layernorm,no," SHAPE "rope,,10000,1e-5,yes,no,yes,dense,test,"
                ",,,rmsnorm,,",
                "line 2, embedding_norm:");
    refused_row("a,2023,2,pre-norm,layernorm,no," SHAPE "rope,,10000,1e-5,yes,no,yes,dense,test,"
                ",,,,0,",
                "line 2, logit_scale: '0' is not a number > 0, or empty for 1");
    refused_row("a,2023,2,pre-norm,rmsnorm,no," SHAPE "rope,,10000,1e-5,no,no,yes,dense,test,"
                ",,,,,no",
                "line 2, norm_bias: 'no' is not yes or no for a layernorm model");
    refused_row("a,2023,2,parallel,layernorm,no,test,,,,,,,,,,,,,,,,,,,,parallel-two-norms,,,,,",
                "line 2, residual: a form needs the row's shape");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_form_is_built_as_by_hand),
        cmocka_unit_test(cohere_is_built),
        cmocka_unit_test(the_real_rows_run),
        cmocka_unit_test(bad_form_cells_are_refused),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, setup, test_scratch_teardown);
}
