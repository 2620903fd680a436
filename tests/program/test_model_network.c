/* --model NAME --engine forward builds the model's own shape (issue 15):
 * the network it runs is the one the same options given by hand build, to
 * the byte of the CSV (grouped-query attention and Gemma's wide heads
 * among them), and what of a model the forward pass cannot build
 * is refused, naming it and the stand-in option. The models here are a
 * table of the test's own (VARPROF_MODELS), small enough to run, with the
 * shapes of real rows (Llama's, GPT-2's) at toy widths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csv_text.h"
#include "run_program.h"
#include "test_filter.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static const char table[] =
    "name,year,layers,placement,norm,qk_norm,source,alpha,beta,alpha_beta_source,width,heads,"
    "kv_heads,head_dim,ffn_width,vocab,activation,positions,max_positions,rope_theta,norm_eps,"
    "biases,tied_embeddings,final_norm,architecture,shape_source\n"
    /* Llama's shape at width 64 */
    "toy-llama,2023,3,pre-norm,rmsnorm,no,test,,,,64,4,4,,96,100,swiglu,rope,,500000,1e-6,no,no,"
    "yes,dense,test\n"
    /* GPT-2's: learned positions, tanh GELU, biases, LayerNorm */
    "toy-gpt2,2019,2,pre-norm,layernorm,no,test,,,,32,2,2,,128,50,gelu-tanh,learned,1024,,1e-5,"
    "yes,yes,yes,dense,test\n"
    /* Qwen2's q, k, v biases alone */
    "toy-qwen,2024,2,pre-norm,rmsnorm,no,test,,,,32,4,4,,64,50,swiglu,rope,,1000000,1e-6,qkv,no,"
    "yes,dense,test\n"
    /* grouped-query attention, and heads wider than d / H (Gemma's) */
    "toy-gqa,2024,2,pre-norm,rmsnorm,no,test,,,,64,8,2,,96,100,swiglu,rope,,10000,1e-5,no,no,yes,"
    "dense,test\n"
    "toy-wide-heads,2024,2,pre-norm,rmsnorm,no,test,,,,64,4,4,32,96,100,geglu,rope,,10000,1e-6,no,"
    "yes,yes,dense,test\n"
    /* what the forward pass does not build: partial rope without its
       fraction (a table of 26 columns has no column for it) */
    "toy-gptj,2021,2,parallel,layernorm,no,test,,,,64,4,4,,256,100,gelu-tanh,partial-rope,,10000,"
    "1e-5,mlp,no,yes,dense,test\n"
    /* a bidirectional encoder, a mixture of experts, Llama 3.1's scaled RoPE */
    "bert-toy,2018,2,post-ln,layernorm,no,test,,,,64,4,4,,256,100,gelu,learned,512,,1e-12,yes,"
    "yes,no,dense,test\n"
    "toy-moe,2024,2,pre-norm,rmsnorm,no,test,,,,64,4,4,,96,100,swiglu,rope,,10000,1e-6,no,no,"
    "yes,moe,test\n"
    "llama-3.1-toy,2024,2,pre-norm,rmsnorm,no,test,,,,64,4,1,,96,100,swiglu,rope,,500000,1e-5,no,"
    "no,yes,dense,test\n"
    /* a row without a shape: the generic network, as before the shapes */
    "toy-unknown,2020,2,post-ln,layernorm,no,test,,,,,,,,,,,,,,,,,,,\n";

/* Gemma's rows, in a table with attention's columns: the sqrt(d) embedding
   scale no column holds (every Gemma has it), and the columns' window,
   pattern, second RoPE base, linear factor, scores' scale and soft caps */
static const char attention_table[] =
    "name,year,layers,placement,norm,qk_norm,source,alpha,beta,alpha_beta_source,width,heads,"
    "kv_heads,head_dim,ffn_width,vocab,activation,positions,max_positions,rope_theta,norm_eps,"
    "biases,tied_embeddings,final_norm,architecture,shape_source,residual,rotary_fraction,"
    "rotary_pairing,embedding_norm,logit_scale,norm_bias,sliding_window,window_pattern,"
    "rope_local_theta,rope_linear_factor,attn_scalar,attn_softcap,logit_softcap\n"
    "gemma-2-toy,2024,2,sandwich,rmsnorm,no,test,,,,64,4,2,32,96,100,geglu-tanh,rope,,10000,1e-6,"
    "no,yes,yes,dense,test,,,,,,,4096,2,,,256,50,30\n"
    "gemma-3-toy,2025,2,sandwich,rmsnorm,yes,test,,,,64,4,2,32,96,100,geglu-tanh,rope,,1000000,"
    "1e-6,no,yes,yes,dense,test,,,,,,,4,2,10000,8,32,,\n"
    /* a window and its pattern alone, as --sliding-window and --window-pattern give them */
    "toy-window,2024,3,pre-norm,rmsnorm,no,test,,,,64,4,2,,96,100,swiglu,rope,,10000,1e-6,no,no,"
    "yes,dense,test,,,,,,,4,2,,,,,\n";

static int setup(void **state)
{
    if (test_scratch_setup(state) != 0 || !write_scratch("models.csv", table) ||
        !write_scratch("attention.csv", attention_table))
        return -1;
    return setenv("VARPROF_MODELS", in_scratch("models.csv"), 1);
}

/* RUN with the attention table as the models table */
#define RUN_GEMMA(...)                                                                             \
    (setenv("VARPROF_MODELS", in_scratch("attention.csv"), 1),                                     \
     run_gemma((const char *const[]){__VA_ARGS__, NULL}))

static program_run run_gemma(const char *const *argv)
{
    program_run run = run_varprof(argv);
    setenv("VARPROF_MODELS", in_scratch("models.csv"), 1);
    return run;
}

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("expected '%s' in:\n%s", part, text);
}

/* The same network given by hand: every CSV byte equal. */
static void same_csv(program_run by_model, program_run by_hand)
{
    assert_int_equal(by_model.status, 0);
    if (by_hand.status != 0)
        fail_msg("by hand: %s", by_hand.err);
    if (strcmp(by_model.out, by_hand.out) != 0)
        fail_msg("--model gives\n%s\nby hand\n%s", by_model.out, by_hand.out);
    program_run_free(&by_model);
    program_run_free(&by_hand);
}

static void the_models_shape_is_built(void **state)
{
    (void)state;
    same_csv(RUN("--model", "toy-llama", "--engine", "forward", "--tokens", "9", "--format", "csv"),
             RUN("--placement", "pre-norm", "--layers", "3", "--norm", "rmsnorm", "--engine",
                 "forward", "--width", "64", "--heads", "4", "--ffn-width", "96", "--vocab", "100",
                 "--mlp", "swiglu", "--positions", "rope", "--rope-theta", "500000", "--norm-eps",
                 "1e-6", "--bias", "no", "--tokens", "9", "--format", "csv"));
    same_csv(RUN("--model", "toy-gpt2", "--engine", "forward", "--tokens", "9", "--grad",
                 "--format", "csv"),
             RUN("--placement", "pre-norm", "--layers", "2", "--norm", "layernorm", "--engine",
                 "forward", "--width", "32", "--heads", "2", "--ffn-width", "128", "--vocab", "50",
                 "--mlp", "gelu-tanh", "--positions", "learned", "--norm-eps", "1e-5", "--bias",
                 "yes", "--final-norm", "yes", "--tie-embeddings", "yes", "--tokens", "9", "--grad",
                 "--format", "csv"));
    same_csv(RUN("--model", "toy-qwen", "--engine", "forward", "--format", "csv"),
             RUN("--placement", "pre-norm", "--layers", "2", "--norm", "rmsnorm", "--engine",
                 "forward", "--width", "32", "--heads", "4", "--ffn-width", "64", "--vocab", "50",
                 "--mlp", "swiglu", "--positions", "rope", "--rope-theta", "1000000", "--norm-eps",
                 "1e-6", "--bias", "qkv", "--format", "csv"));
    /* grouped-query attention: 8 query heads sharing 2 key-value heads */
    same_csv(RUN("--model", "toy-gqa", "--engine", "forward", "--tokens", "7", "--grad", "--format",
                 "csv"),
             RUN("--placement", "pre-norm", "--layers", "2", "--norm", "rmsnorm", "--engine",
                 "forward", "--width", "64", "--heads", "8", "--kv-heads", "2", "--ffn-width", "96",
                 "--vocab", "100", "--mlp", "swiglu", "--positions", "rope", "--rope-theta",
                 "10000", "--norm-eps", "1e-5", "--bias", "no", "--final-norm", "yes", "--tokens",
                 "7", "--grad", "--format", "csv"));
    /* 4 heads of 32, 128 wide in all against the stream's 64 */
    same_csv(
        RUN("--model", "toy-wide-heads", "--engine", "forward", "--tokens", "7", "--format", "csv"),
        RUN("--placement", "pre-norm", "--layers", "2", "--norm", "rmsnorm", "--engine", "forward",
            "--width", "64", "--heads", "4", "--head-dim", "32", "--ffn-width", "96", "--vocab",
            "100", "--mlp", "geglu", "--positions", "rope", "--rope-theta", "10000", "--norm-eps",
            "1e-6", "--bias", "no", "--tokens", "7", "--format", "csv"));
    /* and the heading says what ran */
    program_run run = RUN("--model", "toy-llama", "--engine", "forward", "--tokens", "9");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "network: width 64, 4 heads, swiglu MLP 96 wide, no biases, vocab");
    assert_contains(run.out, "positions: rope, theta 500000");
    program_run_free(&run);
}

/* stream_var at sub-block 0 of a CSV profile */
static double embedding_var(const char *csv)
{
    const char *row0 = strchr(csv, '\n');
    assert_non_null(row0);
    return csv_number_at(row0 + 1, csv_column_of(csv, "stream_var"));
}

/* Gemma 2: the table's shape, its attention columns and the embedding
   scale no column has. The embedding's sqrt(64) = 8 is exact in float, so
   sub-block 0's variance is exactly 64 times that of the same network built
   by hand, which has none of them. */
static void gemma2s_facts_are_built(void **state)
{
    (void)state;
    program_run run = RUN_GEMMA("--model", "gemma-2-toy", "--engine", "forward", "--tokens", "7");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "geglu-tanh MLP 96 wide");
    assert_contains(run.out,
                    "scales: embedding x 8, scores x 0.0625, scores capped at 50, logits capped "
                    "at 30");
    program_run_free(&run);
    program_run by_model = RUN_GEMMA("--model", "gemma-2-toy", "--engine", "forward", "--tokens",
                                     "7", "--format", "csv");
    program_run by_hand =
        RUN("--placement", "sandwich", "--layers", "2", "--norm", "rmsnorm", "--engine", "forward",
            "--width", "64", "--heads", "4", "--kv-heads", "2", "--head-dim", "32", "--ffn-width",
            "96", "--vocab", "100", "--mlp", "geglu-tanh", "--positions", "rope", "--norm-eps",
            "1e-6", "--bias", "no", "--tokens", "7", "--format", "csv");
    assert_int_equal(by_model.status, 0);
    assert_int_equal(by_hand.status, 0);
    assert_true(embedding_var(by_model.out) == 64.0 * embedding_var(by_hand.out));
    program_run_free(&by_model);
    program_run_free(&by_hand);
}

/* Gemma 3: built from its columns, as a checkpoint of it is read
   (test_model_windows holds the two to the same bytes): no soft caps, the
   scores times 32^-1/2 rounded to float, 9 tokens through a window of 4 on
   its sliding layer */
static void gemma3s_facts_are_built(void **state)
{
    (void)state;
    program_run run = RUN_GEMMA("--model", "gemma-3-toy", "--engine", "forward", "--tokens", "9");
    if (run.status != 0)
        fail_msg("--model gemma-3-toy: %s", run.err);
    assert_contains(run.out, "geglu-tanh MLP 96 wide");
    assert_contains(run.out, "scales: embedding x 8, scores x 0.176777\n");
    assert_contains(run.out, "positions: rope, theta 1e+06, linear scaling x8 on the full layers\n"
                             "window: 4 tokens on 1 of 2 layers, which turn by rope theta 10000\n");
    program_run_free(&run);
}

static void the_command_line_overrides_the_model(void **state)
{
    (void)state;
    same_csv(RUN("--model", "toy-llama", "--engine", "forward", "--width", "32", "--mlp", "relu",
                 "--bias", "yes", "--positions", "none", "--format", "csv"),
             RUN("--placement", "pre-norm", "--layers", "3", "--norm", "rmsnorm", "--engine",
                 "forward", "--width", "32", "--heads", "4", "--ffn-width", "96", "--vocab", "100",
                 "--mlp", "relu", "--norm-eps", "1e-6", "--bias", "yes", "--format", "csv"));
    /* a row without a shape runs the generic network, as it always has */
    same_csv(
        RUN("--model", "toy-unknown", "--engine", "forward", "--format", "csv"),
        RUN("--placement", "post-ln", "--layers", "2", "--engine", "forward", "--format", "csv"));
}

static void refused(program_run run, const char *part)
{
    if (run.status != 2)
        fail_msg("exit %d, expected a usage error naming '%s': %s", run.status, part, run.err);
    assert_contains(run.err, part);
    program_run_free(&run);
}

static void what_it_cannot_build_is_refused(void **state)
{
    (void)state;
    refused(RUN("--model", "toy-gptj", "--engine", "forward"),
            "its rotary fraction is not in the table, which the forward pass does not build; "
            "give --positions none, learned, rope, rope-interleaved or alibi");
    refused(RUN("--model", "bert-toy", "--engine", "forward"), "attention sees both ways");
    refused(RUN("--model", "toy-moe", "--engine", "forward"), "it is a mixture of experts");
    /* the stand-ins the messages name run */
    program_run run =
        RUN("--model", "toy-gptj", "--engine", "forward", "--bias", "yes", "--positions", "rope");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
    /* Llama 3.1's scaled RoPE is built, and differs from plain RoPE */
    run = RUN("--model", "llama-3.1-toy", "--engine", "forward", "--tokens", "9");
    assert_int_equal(run.status, 0);
    assert_contains(run.out, "positions: rope, theta 500000, llama3 scaling (factor 8, "
                             "low_freq_factor 1,\n  high_freq_factor 4, original context 8192)");
    program_run_free(&run);
    program_run scaled =
        RUN("--model", "llama-3.1-toy", "--engine", "forward", "--tokens", "9", "--format", "csv");
    program_run plain = RUN("--model", "llama-3.1-toy", "--engine", "forward", "--tokens", "9",
                            "--positions", "rope", "--rope-theta", "500000", "--format", "csv");
    assert_int_equal(scaled.status, 0);
    assert_int_equal(plain.status, 0);
    assert_true(strcmp(scaled.out, plain.out) != 0);
    program_run_free(&scaled);
    program_run_free(&plain);
    /* the closed form alone needs no shape */
    run = RUN("--model", "toy-gqa");
    assert_int_equal(run.status, 0);
    program_run_free(&run);
}

/* A row's window is the options' window: the same bytes by hand; the
   command line's window replaces the row's, pattern and all; the options
   are refused without a window, beside a checkpoint's own, or out of range */
static void the_window_is_the_options_window(void **state)
{
    (void)state;
#define WINDOW_BY_HAND(...)                                                                        \
    RUN("--placement", "pre-norm", "--layers", "3", "--norm", "rmsnorm", "--engine", "forward",    \
        "--width", "64", "--heads", "4", "--kv-heads", "2", "--ffn-width", "96", "--vocab", "100", \
        "--mlp", "swiglu", "--positions", "rope", "--norm-eps", "1e-6", "--bias", "no",            \
        "--tokens", "9", "--format", "csv", __VA_ARGS__)
    same_csv(RUN_GEMMA("--model", "toy-window", "--engine", "forward", "--tokens", "9", "--format",
                       "csv"),
             WINDOW_BY_HAND("--sliding-window", "4", "--window-pattern", "2"));
    same_csv(RUN_GEMMA("--model", "toy-window", "--engine", "forward", "--tokens", "9", "--format",
                       "csv", "--sliding-window", "3"),
             WINDOW_BY_HAND("--sliding-window", "3"));
    /* not vacuous: 9 tokens through a window of 4 are not those of no window */
    program_run windowed = WINDOW_BY_HAND("--sliding-window", "4"),
                whole = WINDOW_BY_HAND("--bias", "no");
    assert_int_equal(windowed.status, 0);
    assert_int_equal(whole.status, 0);
    assert_true(strcmp(windowed.out, whole.out) != 0);
    program_run_free(&windowed);
    program_run_free(&whole);
#undef WINDOW_BY_HAND
    refused(RUN("--engine", "forward", "--window-pattern", "2"),
            "--window-pattern needs --sliding-window");
    refused(RUN("--engine", "forward", "--sliding-window", "0"), "--sliding-window");
    refused(RUN("--engine", "forward", "--sliding-window", "4", "--window-pattern", "1"),
            "--window-pattern");
    refused(RUN("--weights", test_data_path("hf/window_mistral"), "--sliding-window", "8"),
            "a checkpoint directory's config.json says its window");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_models_shape_is_built),
        cmocka_unit_test(gemma2s_facts_are_built),
        cmocka_unit_test(gemma3s_facts_are_built),
        cmocka_unit_test(the_window_is_the_options_window),
        cmocka_unit_test(the_command_line_overrides_the_model),
        cmocka_unit_test(what_it_cannot_build_is_refused),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, setup, test_scratch_teardown);
}
