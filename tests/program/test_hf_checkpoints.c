/* Hugging Face checkpoint directories (issue 15, --weights DIR): the thirteen
 * tiny checkpoints of tests/data/gen_hf_checkpoints.py, each in its family's
 * exact naming and layout (GPT-2 with and without the 'transformer.' prefix,
 * one sharded; Llama in F32 and in BF16 with tied embeddings; Qwen2 with its
 * q/k/v biases, in F16 and sharded in three; grouped-query attention with
 * H/H_kv = 4 and multi-query with a head_dim of its own; Gemma-2's sandwich
 * of (1 + w) norms with its embedding scale, score scale and soft caps;
 * OLMo-2's output norms with full-width QK-norm; Llama 3.1's scaled RoPE;
 * widths 32 and 64, 13 tokens), read a layer at a time, give on every
 * instruction set the per-sub-block stream norms, grad_var and weight_grad,
 * the loss and the embedding's gradient (a tied one's summed over its two
 * uses) that the script's own PyTorch implementation of each family gives.
 * Besides: varprof train starts from a checkpoint; model_type
 * mistral reads as llama; hostile config.json files and indexes are
 * refused with a message naming what is wrong, never a crash, and options
 * that contradict config.json are usage errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "output_check.h"
#include "run_program.h"
#include "text_file.h"
#include "test_filter.h"
#include "torch_expected.h"
#include "varprof/isa.h"
#include "varprof/safetensors.h"

/* The bound for the stream norms, held to the gradients as well
 * (test_pytorch_positions.c's); PyTorch's own float32 run is within 4e-7 of
 * float64 on every figure here (DATA_FLOAT32_NOISE). */
#define TOLERANCE 1e-5
#define DATA_FLOAT32_NOISE 1e-6

static int check(const char *what, const char *isa, const char *label, double got, double want,
                 double *worst)
{
    const double rel = fabs(got - want) / fabs(want);
    if (!(rel <= *worst))
        *worst = isnan(rel) ? INFINITY : rel;
    if (!(rel <= TOLERANCE)) {
        print_error("%s on %s, %s: %.9g, PyTorch %.9g (%.2g relative > %g)\n", what, isa, label,
                    got, want, rel, TOLERANCE);
        return 1;
    }
    return 0;
}

static void run_case(const char *name, const char *isa)
{
    torch_expected *want = torch_expected_load("hf_expected.csv", name, 1e-30);
    if (!want->have_loss || want->n_stream_norm != 5 || want->n_grad_var != 5 ||
        want->n_weight_grad != 5 || want->worst_noise > DATA_FLOAT32_NOISE) {
        print_error("hf_expected.csv: case %s is missing, incomplete or noisy (%.2g)\n", name,
                    want->worst_noise);
        fail();
    }
    char dir[512], tokens[512], label[96], grads[] = "/tmp/varprof-hf-grads-XXXXXX";
    snprintf(dir, sizeof dir, "%s/hf/%s", test_data_path(""), name);
    snprintf(tokens, sizeof tokens, "%s", test_data_path("hf_tokens.csv"));
    const int fd = mkstemp(grads);
    assert_true(fd >= 0);
    close(fd);
    const char *args[] = {"--engine", "forward",     "--weights", dir,       "--token-ids",
                          tokens,     "--grad",      "--loss",    "copy",    "--format",
                          "csv",      "--grads-out", grads,       "--force", "--names",
                          "varprof",  NULL};
    setenv("VARPROF_ISA", isa, 1);
    program_run run = run_varprof(args);
    args[10] = "json";
    args[11] = NULL; /* the gradients once */
    program_run json = run_varprof(args);
    unsetenv("VARPROF_ISA");
    if (run.status != 0)
        unlink(grads);
    if (run.status == 2 && strstr(run.err, "not supported by this CPU")) {
        program_run_free(&run);
        program_run_free(&json);
        free(want);
        return;
    }
    if (run.status != 0) {
        print_error("%s on %s: exit %d: %s", name, isa, run.status, run.err);
        fail();
    }
    int bad = 0;
    double worst_stream = 0, worst_loss = 0, worst_gv = 0, worst_wg = 0;
    bad |= check(name, isa, "loss", torch_reported_loss(json.status == 0 ? json.out : NULL),
                 want->loss, &worst_loss);
    torch_profile got;
    torch_profile_read(run.out, &got);
    assert_int_equal(got.rows, want->n_stream_norm);
    for (size_t k = 0; k < want->n_stream_norm; k++) {
        snprintf(label, sizeof label, "stream norm after sub-block %zu", k);
        bad |= check(name, isa, label, got.stream_norm[k], want->stream_norm[k], &worst_stream);
        snprintf(label, sizeof label, "grad_var at sub-block %zu", k);
        bad |= check(name, isa, label, got.grad_var[k], want->grad_var[k], &worst_gv);
        if (k == 0)
            continue;
        snprintf(label, sizeof label, "weight_grad at sub-block %zu", k);
        bad |= check(name, isa, label, got.weight_grad[k], want->weight_grad[k], &worst_wg);
    }
    /* the embedding's gradient (a tied checkpoint's one parameter, summed
       over its two uses) and lm_head's where it is its own; a tied head has
       no head.weight of its own */
    torch_grads_out g;
    torch_grads_out_read(grads, want, &g);
    double worst_embed = 0;
    static const char *const params[] = {"embed.weight", "head.weight"};
    for (size_t i = 0; i < 2; i++) {
        const torch_tensor *t = torch_expected_tensor(want, params[i]);
        if (!t)
            continue;
        const size_t at = (size_t)(t - want->tensors);
        bad |= t->seen != 1 ||
               check(name, isa, params[i], g.got_frobenius[at], t->frobenius, &worst_embed);
    }
    if (!torch_expected_tensor(want, "head.weight")) {
        FILE *f = fopen(grads, "r");
        assert_non_null(f);
        char line[256];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "head.weight,", 12) == 0) {
                print_error("%s on %s: a tied head wrote head.weight's gradient apart\n", name,
                            isa);
                bad = 1;
            }
        fclose(f);
    }
    unlink(grads);
    print_message("  %-10s %-7s worst relative error: stream norm %.1e, loss %.1e, grad_var "
                  "%.1e, weight_grad %.1e, embedding's gradient %.1e\n",
                  name, isa, worst_stream, worst_loss, worst_gv, worst_wg, worst_embed);
    program_run_free(&run);
    program_run_free(&json);
    free(want);
    if (bad)
        fail();
}

static void run_on_every_isa(const char *name)
{
    for (int isa = 0; isa < VP_ISA_COUNT; isa++)
        if (vp_isa_supported((vp_isa)isa))
            run_case(name, vp_isa_name((vp_isa)isa));
}

static void gpt2_matches_pytorch(void **state)
{
    (void)state;
    run_on_every_isa("gpt2_d32"); /* no prefix, one file */
    run_on_every_isa("gpt2_d64"); /* transformer. prefix, two shards */
}

static void llama_matches_pytorch(void **state)
{
    (void)state;
    run_on_every_isa("llama_d32");   /* F32, lm_head */
    run_on_every_isa("llama_d64");   /* BF16, tied */
    run_on_every_isa("llama31_d64"); /* Llama 3.1's rope_scaling, tied */
}

static void qwen2_matches_pytorch(void **state)
{
    (void)state;
    run_on_every_isa("qwen2_d32"); /* q/k/v biases, F16 */
    run_on_every_isa("qwen2_d64"); /* tied, three shards */
}

static void grouped_query_attention_matches_pytorch(void **state)
{
    (void)state;
    run_on_every_isa("llama_gqa_d64"); /* 8 heads, 2 kv heads */
    run_on_every_isa("qwen2_gqa_d32"); /* 4 heads, 1 kv head, head_dim 16, BF16 */
}

/* Gemma-2: sandwich norms of (1 + w), the embedding times sqrt(d), a score
   scale of its own and soft caps on scores and logits, a tanh GeGLU */
static void gemma2_matches_pytorch(void **state)
{
    (void)state;
    run_on_every_isa("gemma2_d32");     /* head_dim 16 (H hd 64), caps 1.5 and 3.0: they bind */
    run_on_every_isa("gemma2_gqa_d64"); /* 8 heads, 2 kv heads, caps 50 and 30, BF16, shards */
}

/* OLMo-2: output norms, QK-norm over q's and k's full width */
static void olmo2_matches_pytorch(void **state)
{
    (void)state;
    run_on_every_isa("olmo2_d32");     /* F32, theta 500000 */
    run_on_every_isa("olmo2_gqa_d64"); /* 8 heads, 2 kv heads, BF16, two shards */
}

/* ---- hostile input ---- */

/* text with its first `from` replaced by `to` (from must be there) */
static char *replaced(const char *text, const char *from, const char *to)
{
    static char out[1 << 17];
    const char *at = strstr(text, from);
    if (!at) {
        print_error("'%s' is not in the file\n", from);
        fail();
    }
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

typedef struct {
    const char *base; /* a case of tests/data/hf */
    const char *file; /* config.json or model.safetensors.index.json */
    const char *from, *to;
    const char *link, *target; /* a symlink to make in the copy, or NULL; a target
                                  of "=FILE" copies the base's FILE there instead */
    const char *says[3];       /* in the message */
} hostile_case;

#define INDEX "model.safetensors.index.json"
#define SHARD1 "\"transformer.wte.weight\": \"model-00001-of-00002.safetensors\""
#define WEIGHT_MAP "\"weight_map\": {"

static const hostile_case hostile[] = {
    {"gpt2_d32",
     "config.json",
     "\"model_type\": \"gpt2\",",
     "",
     NULL,
     NULL,
     {"'model_type' is missing"}},
    {"gpt2_d32", "config.json", "\"gpt2\"", "\"gemma\"", NULL, NULL, {"gemma", "not read yet"}},
    {"gpt2_d32", "config.json", "\"gpt2\"", "\"olmo\"", NULL, NULL, {"olmo", "not read yet"}},
    {"gpt2_d32", "config.json", "\"gpt2\"", "\"bert\"", NULL, NULL, {"bert", "gpt2, llama"}},
    {"gemma2_d32",
     "config.json",
     "\"hidden_activation\": \"gelu_pytorch_tanh\"",
     "\"hidden_activation\": \"silu\"",
     NULL,
     NULL,
     {"'hidden_activation' 'silu'", "gelu_pytorch_tanh"}},
    {"gemma2_d32",
     "config.json",
     "\"attn_logit_softcapping\": 1.5",
     "\"attn_logit_softcapping\": -1.5",
     NULL,
     NULL,
     {"'attn_logit_softcapping'", "above 0"}},
    {"gemma2_d32",
     "config.json",
     "\"query_pre_attn_scalar\": 24",
     "\"query_pre_attn_scalar\": \"24\"",
     NULL,
     NULL,
     {"'query_pre_attn_scalar'", "number"}},
    {"gemma2_d32",
     "config.json",
     "\"attention_bias\": false",
     "\"attention_bias\": true",
     NULL,
     NULL,
     {"'attention_bias' is set"}},
    {"gemma2_d32", /* Gemma-2 ties its head: untied, the lm_head it lacks is named */
     "config.json",
     "\"tie_word_embeddings\": true",
     "\"tie_word_embeddings\": false",
     NULL,
     NULL,
     {"'lm_head.weight'", "missing"}},
    {"olmo2_d32",
     "config.json",
     "\"num_key_value_heads\": 4,",
     "\"num_key_value_heads\": 2,",
     NULL,
     NULL,
     {"k_proj.weight", "[32, 32]", "[16, 32]"}},
    {"olmo2_d32",
     "config.json",
     "\"rope_scaling\": null",
     "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}",
     NULL,
     NULL,
     {"rope_scaling of type 'linear' is not read", "llama3"}},
    {"llama31_d64",
     "config.json",
     "\"factor\": 8.0",
     "\"factor\": 0.5",
     NULL,
     NULL,
     {"rope_scaling's factor 0.5", "from 1"}},
    {"llama31_d64",
     "config.json",
     "\"low_freq_factor\": 1.0,",
     "",
     NULL,
     NULL,
     {"rope_scaling's 'low_freq_factor' must be a number"}},
    {"gpt2_d32", "config.json", "{", "[", NULL, NULL, {"not a JSON object"}},
    {"gpt2_d32",
     "config.json",
     "\"n_embd\": 32,",
     "\"n_embd\": 32, \"hidden_size\": 48,",
     NULL,
     NULL,
     {"'n_embd' 32", "'hidden_size' 48", "disagree"}},
    {"gpt2_d32",
     "config.json",
     "\"n_embd\": 32,",
     "\"n_embd\": 48,",
     NULL,
     NULL,
     {"wte.weight", "shape [50, 32]", "[50, 48]"}},
    {"gpt2_d32", "config.json", "\"n_embd\": 32,", "\"n_embd\": -32,", NULL, NULL, {"'n_embd'"}},
    {"gpt2_d32",
     "config.json",
     "\"n_layer\": 2,",
     "\"n_layer\": 999999,",
     NULL,
     NULL,
     {"999999 layers"}},
    {"gpt2_d32",
     "config.json",
     "\"n_layer\": 2,",
     "\"n_layer\": 1,",
     NULL,
     NULL,
     {"h.1.", "not one a gpt2 checkpoint of 1 layers has"}},
    {"gpt2_d32",
     "config.json",
     "\"n_head\": 4,",
     "\"n_head\": 5,",
     NULL,
     NULL,
     {"'n_head' 5", "does not divide"}},
    {"llama_d32",
     "config.json",
     "\"num_key_value_heads\": 4,",
     "\"num_key_value_heads\": 2,",
     NULL,
     NULL,
     {"k_proj.weight", "[32, 32]", "[16, 32]"}},
    {"llama_d32",
     "config.json",
     "\"num_key_value_heads\": 4,",
     "\"num_key_value_heads\": 3,",
     NULL,
     NULL,
     {"'num_key_value_heads' 3", "does not divide", "'num_attention_heads' 4"}},
    {"llama_d32",
     "config.json",
     "\"intermediate_size\": 104,",
     "\"intermediate_size\": 100,",
     NULL,
     NULL,
     {"gate_proj.weight", "[104, 32]", "[100, 32]"}},
    {"llama_d32",
     "config.json",
     "\"vocab_size\": 50,",
     "",
     NULL,
     NULL,
     {"'vocab_size' is missing"}},
    {"llama_d32",
     "config.json",
     "\"rope_scaling\": null",
     "\"rope_scaling\": {\"factor\": 2}",
     NULL,
     NULL,
     {"rope_scaling"}},
    {"llama_d32",
     "config.json",
     "\"hidden_size\": 32,",
     "\"hidden_size\": 32, \"head_dim\": 16,",
     NULL,
     NULL,
     {"q_proj.weight", "[32, 32]", "[64, 32]"}},
    {"llama_d32",
     "config.json",
     "\"tie_word_embeddings\": false",
     "\"tie_word_embeddings\": 1",
     NULL,
     NULL,
     {"'tie_word_embeddings' must be true or false"}},
    {"gpt2_d64",
     INDEX,
     SHARD1,
     "\"transformer.wte.weight\": \"../model-00001-of-00002.safetensors\"",
     NULL,
     NULL,
     {"'..'"}},
    {"gpt2_d64",
     INDEX,
     SHARD1,
     "\"transformer.wte.weight\": \"/etc/passwd\"",
     NULL,
     NULL,
     {"absolute"}},
    {"gpt2_d64", INDEX, SHARD1, "\"transformer.wte.weight\": \"\"", NULL, NULL, {"empty"}},
    {"gpt2_d64",
     INDEX,
     SHARD1,
     "\"transformer.wte.weight\": \"model-00009-of-00002.safetensors\"",
     NULL,
     NULL,
     {"model-00009-of-00002.safetensors", "missing"}},
    {"gpt2_d64",
     INDEX,
     SHARD1,
     "\"transformer.wte.weight\": \"" INDEX "\"",
     NULL,
     NULL,
     {"the index itself"}},
    {"gpt2_d64",
     INDEX,
     SHARD1,
     "\"transformer.wte.weight\": \"out.safetensors\"",
     "out.safetensors",
     "/etc/hostname",
     {"outside the directory"}},
    {"gpt2_d64",
     INDEX,
     SHARD1,
     "\"transformer.wte.weight\": \"loop.safetensors\"",
     "loop.safetensors",
     "loop.safetensors",
     {"loop.safetensors"}},
    {"gpt2_d64",
     INDEX,
     SHARD1,
     "\"transformer.wte.weight\": \"again.safetensors\"",
     "again.safetensors",
     "model-00001-of-00002.safetensors",
     {"one file"}},
    {"gpt2_d64", INDEX, WEIGHT_MAP, WEIGHT_MAP " " SHARD1 ",", NULL, NULL, {"mapped twice"}},
    {"gpt2_d64",
     INDEX,
     SHARD1,
     "\"transformer.wte.weight\": \"model-00002-of-00002.safetensors\"",
     NULL,
     NULL,
     {"transformer.wte.weight", "lacks it"}},
    {"gpt2_d64",
     INDEX,
     "\"total_size\"",
     "\"total\"",
     "model-00002-of-00002.safetensors",
     "=model-00001-of-00002.safetensors",
     {"transformer.h.1.ln_1.weight", "lacks it"}},
    {"gpt2_d64",
     INDEX,
     WEIGHT_MAP,
     "\"weight_map\": 7, \"x\": {",
     NULL,
     NULL,
     {"'weight_map' object"}},
};

static void make_copy(const hostile_case *c, const char *dir)
{
    test_remove_tree(dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    static const char *const files[] = {"config.json", "model.safetensors", INDEX,
                                        "model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors"};
    char from[1024], to[1024];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(from, sizeof from, "%s/hf/%s/%s", test_data_path(""), c->base, files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        if (access(from, F_OK) == 0)
            copy_file(from, to);
    }
    snprintf(to, sizeof to, "%s/%s", dir, c->file);
    write_text(to, replaced(read_text(to), c->from, c->to));
    if (c->link && c->target[0] == '=') {
        snprintf(from, sizeof from, "%s/hf/%s/%s", test_data_path(""), c->base, c->target + 1);
        snprintf(to, sizeof to, "%s/%s", dir, c->link);
        copy_file(from, to);
    } else if (c->link) {
        snprintf(to, sizeof to, "%s/%s", dir, c->link);
        assert_int_equal(symlink(c->target, to), 0);
    }
}

static void hostile_input_is_refused(void **state)
{
    (void)state;
    char dir[512], tokens[512];
    snprintf(tokens, sizeof tokens, "%s", test_data_path("hf_tokens.csv"));
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        const hostile_case *c = &hostile[i];
        snprintf(dir, sizeof dir, "%s/hostile%zu", test_scratch(), i);
        make_copy(c, dir);
        const char *args[] = {"--engine", "forward", "--weights", dir, "--token-ids", tokens, NULL};
        program_run run = run_varprof(args);
        int bad = run.status != 1;
        for (size_t s = 0; s < 3 && c->says[s]; s++)
            bad |= !strstr(run.err, c->says[s]);
        if (bad) {
            print_error("case %zu (%s, %s: '%s' -> '%s'): exit %d, want 1 and '%s' '%s' '%s' "
                        "in: %s",
                        i, c->base, c->file, c->from, c->to, run.status, c->says[0],
                        c->says[1] ? c->says[1] : "", c->says[2] ? c->says[2] : "", run.err);
            fail();
        }
        program_run_free(&run);
        test_remove_tree(dir);
    }
}

/* A tensor kept in two shards: a third shard, listed for a tensor of its
   own, also holds wte, which the index maps to the first. */
static void tensor_in_two_shards_is_refused(void **state)
{
    (void)state;
    char dir[512], path[600], tokens[512];
    snprintf(dir, sizeof dir, "%s/two_shards", test_scratch());
    const hostile_case c = {
        "gpt2_d64", INDEX, WEIGHT_MAP, WEIGHT_MAP " \"extra.weight\": \"extra.safetensors\",",
        NULL,       NULL,  {NULL}};
    make_copy(&c, dir);
    static const float one[1] = {1.0f};
    const vp_tensor_out extra[] = {{"extra.weight", 1, {1, 0}, one},
                                   {"transformer.wte.weight", 1, {1, 0}, one}};
    snprintf(path, sizeof path, "%s/extra.safetensors", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    vp_error err;
    assert_int_equal(vp_safetensors_write(f, extra, 2, &err), VP_OK);
    assert_int_equal(fclose(f), 0);
    snprintf(tokens, sizeof tokens, "%s", test_data_path("hf_tokens.csv"));
    const char *args[] = {"--engine", "forward", "--weights", dir, "--token-ids", tokens, NULL};
    program_run run = run_varprof(args);
    if (run.status != 1 ||
        !strstr(run.err, "shard 'extra.safetensors' holds tensor 'transformer.wte.weight', which "
                         "the index maps to model-00001-of-00002.safetensors")) {
        print_error("exit %d: %s", run.status, run.err);
        fail();
    }
    program_run_free(&run);
}

/* The command as written: --weights and --token-ids alone print the
   measured profile beside the closed form fed with its measured gains; for
   every family, tied heads (GPT-2's, with its head.bias of zeros) and
   untied, without --grad as with it. */
static void the_weights_alone_run_beside_the_closed_form(void **state)
{
    (void)state;
    static const char *const cases[] = {"gpt2_d32",   "gpt2_d64",      "llama_d32",
                                        "llama_d64",  "qwen2_d32",     "qwen2_d64",
                                        "gemma2_d32", "olmo2_gqa_d64", "llama31_d64"};
    char dir[512], tokens[512];
    snprintf(tokens, sizeof tokens, "%s", test_data_path("hf_tokens.csv"));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(dir, sizeof dir, "%s/hf/%s", test_data_path(""), cases[i]);
        const char *args[] = {"--weights", dir, "--token-ids", tokens, NULL};
        program_run run = run_varprof(args);
        if (run.status != 0 ||
            !strstr(run.out, ": the forward pass against the closed form at its measured gains") ||
            !strstr(run.out, "sub-block  part       var pred.  measured"))
            fail_msg("%s: exit %d: %s%s", cases[i], run.status, run.out, run.err);
        program_run_free(&run);
    }
}

/* A checkpoint's layers are read one at a time while the network runs: a
   weight that is not finite in the last layer stops the run there with its
   tensor named, with --grad or without, never a profile of NaNs or a crash. */
static void a_bad_weight_in_a_streamed_layer_is_named(void **state)
{
    (void)state;
    char dir[512], path[600], tokens[512];
    snprintf(dir, sizeof dir, "%s/nan_layer", test_scratch());
    const hostile_case c = {"llama_d32", "config.json", "{", "{", NULL, NULL, {NULL}};
    make_copy(&c, dir);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    vp_safetensors file;
    vp_error err;
    assert_int_equal(vp_safetensors_read(path, &file, &err), VP_OK);
    const vp_tensor_info *t = vp_safetensors_find(&file, "model.layers.1.mlp.down_proj.weight");
    assert_non_null(t);
    assert_int_equal(t->dtype, VP_DTYPE_F32);
    const size_t at = t->begin + 7 * 4; /* element 7 */
    /* the data section starts after the 8-byte length and the header */
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    unsigned char length[8];
    assert_int_equal(fread(length, 1, 8, f), 8);
    size_t header = 0;
    for (int i = 7; i >= 0; i--)
        header = header << 8 | length[i];
    static const unsigned char nan_bits[4] = {0x00, 0x00, 0xc0, 0x7f};
    assert_int_equal(fseek(f, (long)(8 + header + at), SEEK_SET), 0);
    assert_int_equal(fwrite(nan_bits, 1, 4, f), 4);
    assert_int_equal(fclose(f), 0);
    vp_safetensors_free(&file);
    snprintf(tokens, sizeof tokens, "%s", test_data_path("hf_tokens.csv"));
    for (int grad = 0; grad <= 1; grad++) {
        const char *args[] = {
            "--engine", "forward", "--weights", dir, "--token-ids", tokens, grad ? "--grad" : NULL,
            NULL};
        program_run run = run_varprof(args);
        if (run.status != 1 ||
            !strstr(run.err, "tensor 'layers.1.mlp.down.weight' holds NaN at element 7")) {
            print_error("exit %d: %s", run.status, run.err);
            fail();
        }
        program_run_free(&run);
    }
}

/* model_type mistral reads as llama: the same profile, byte for byte; a
   sliding_window shorter than the batch is applied (another profile; PyTorch's
   figures for it in test_pytorch_windows), in train too. */
static void mistral_reads_as_llama(void **state)
{
    (void)state;
    char llama[512], tokens[512], dir[512];
    snprintf(llama, sizeof llama, "%s/hf/llama_d32", test_data_path(""));
    snprintf(tokens, sizeof tokens, "%s", test_data_path("hf_tokens.csv"));
    static const hostile_case cases[] = {
        {"llama_d32",
         "config.json",
         "\"model_type\": \"llama\"",
         "\"model_type\": \"mistral\", \"sliding_window\": 4096",
         NULL,
         NULL,
         {NULL}},
        {"llama_d32",
         "config.json",
         "\"model_type\": \"llama\"",
         "\"model_type\": \"mistral\", \"sliding_window\": 8",
         NULL,
         NULL,
         {NULL}},
    };
    const char *args[] = {"--engine", "forward", "--weights", llama, "--token-ids", tokens, NULL};
    program_run want = run_varprof(args);
    assert_int_equal(want.status, 0);
    for (size_t i = 0; i < 2; i++) {
        snprintf(dir, sizeof dir, "%s/mistral%zu", test_scratch(), i);
        make_copy(&cases[i], dir);
        args[3] = dir;
        program_run run = run_varprof(args);
        /* a window of 4096 over these tokens is none: the figures are
           llama's, the heading says the window */
        drop_lines(run.out, "window: ");
        if (i == 0 && (run.status != 0 || strcmp(run.out, want.out) != 0)) {
            print_error("mistral: exit %d, and the profile %s llama's: %s", run.status,
                        run.status ? "unlike" : "differs from", run.err);
            fail();
        }
        if (i == 1 && (run.status != 0 || strcmp(run.out, want.out) == 0)) {
            print_error("mistral window 8: exit %d, the profile %s llama's: %s", run.status,
                        run.status ? "unlike" : "the same as", run.err);
            fail();
        }
        program_run_free(&run);
        if (i == 1) { /* train too */
            const char *train[] = {"train",   "--weights", dir,       "--tokens", "13",
                                   "--steps", "1",         "--quiet", NULL};
            run = run_varprof(train);
            if (run.status != 0) {
                print_error("train, mistral window 8: exit %d: %s", run.status, run.err);
                fail();
            }
            program_run_free(&run);
        }
    }
    program_run_free(&want);
}

/* varprof train starts from a checkpoint, pre-norm alone (its default list
   has post-ln too), the loss falling over 3 steps of Adam. */
static void train_starts_from_a_checkpoint(void **state)
{
    (void)state;
    static const char *const cases[] = {"gpt2_d64", "llama_d64", "qwen2_d32"};
    char dir[512];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(dir, sizeof dir, "%s/hf/%s", test_data_path(""), cases[i]);
        const char *args[] = {"train", "--weights", dir,   "--steps", "3", "--tokens",
                              "13",    "--format",  "csv", "--quiet", NULL};
        program_run run = run_varprof(args);
        double first = 0, last = 0;
        int rows = 0, other = 0;
        for (const char *line = strchr(run.out, '\n'); line && line[1];
             line = strchr(line + 1, '\n')) {
            double loss;
            /* placement,layers,base_lr,warmup,seed,step,lr,loss,... */
            if (sscanf(line + 1, "%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%lf", &loss) !=
                1)
                continue;
            other |= strncmp(line + 1, "pre-norm,", 9) != 0;
            last = loss;
            if (rows++ == 0)
                first = loss;
        }
        if (run.status != 0 || rows != 3 || other || !(last < first)) {
            print_error("%s: exit %d, %d rows, %s, loss %g -> %g: %s%s", cases[i], run.status, rows,
                        other ? "not pre-norm alone" : "pre-norm", first, last, run.err, run.out);
            fail();
        }
        program_run_free(&run);
    }
}

/* Options config.json decides may not be given against it. */
static void options_against_config_are_usage_errors(void **state)
{
    (void)state;
    char dir[512], tokens[512];
    snprintf(dir, sizeof dir, "%s/hf/llama_d32", test_data_path(""));
    snprintf(tokens, sizeof tokens, "%s", test_data_path("hf_tokens.csv"));
    static const struct {
        const char *extra[5];
        const char *says;
    } cases[] = {
        {{"--heads", "2", NULL}, "'num_attention_heads' is 4"},
        {{"--kv-heads", "2", NULL}, "'num_key_value_heads' is 4"},
        {{"--positions", "learned", NULL}, "llama checkpoint's are rope"},
        {{"--norm-eps", "1e-5", NULL}, "'rms_norm_eps'"},
        {{"--positions", "rope", "--rope-theta", "500000", NULL}, "'rope_theta' is 10000"},
        {{"--rope-theta", "500000", NULL}, "'rope_theta' is 10000"},
        {{"--placement", "post-ln", NULL}, "pre-norm"},
        {{"--mlp", "geglu", NULL}, "'hidden_act'"},
        {{"--tie-embeddings", "yes", NULL}, "'tie_word_embeddings' is false"},
    };
    char gpt2[512];
    snprintf(gpt2, sizeof gpt2, "%s/hf/gpt2_d32", test_data_path(""));
    const char *learned[] = {"--engine", "forward",      "--weights", gpt2, "--token-ids",
                             tokens,     "--rope-theta", "500000",    NULL};
    program_run gpt2_run = run_varprof(learned);
    if (gpt2_run.status != 2 || !strstr(gpt2_run.err, "gpt2 checkpoint's positions are learned")) {
        print_error("gpt2 --rope-theta: exit %d: %s", gpt2_run.status, gpt2_run.err);
        fail();
    }
    program_run_free(&gpt2_run);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *args[] = {"--engine",
                              "forward",
                              "--weights",
                              dir,
                              "--token-ids",
                              tokens,
                              cases[i].extra[0],
                              cases[i].extra[1],
                              cases[i].extra[2],
                              cases[i].extra[3],
                              NULL};
        program_run run = run_varprof(args);
        if (run.status != 2 || !strstr(run.err, cases[i].says)) {
            print_error("case %zu: exit %d, want 2 and '%s' in: %s", i, run.status, cases[i].says,
                        run.err);
            fail();
        }
        program_run_free(&run);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpt2_matches_pytorch),
        cmocka_unit_test(llama_matches_pytorch),
        cmocka_unit_test(qwen2_matches_pytorch),
        cmocka_unit_test(grouped_query_attention_matches_pytorch),
        cmocka_unit_test(gemma2_matches_pytorch),
        cmocka_unit_test(olmo2_matches_pytorch),
        cmocka_unit_test(hostile_input_is_refused),
        cmocka_unit_test(tensor_in_two_shards_is_refused),
        cmocka_unit_test(a_bad_weight_in_a_streamed_layer_is_named),
        cmocka_unit_test(the_weights_alone_run_beside_the_closed_form),
        cmocka_unit_test(mistral_reads_as_llama),
        cmocka_unit_test(train_starts_from_a_checkpoint),
        cmocka_unit_test(options_against_config_are_usage_errors),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("Hugging Face checkpoints", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
