/* Weights drawn or stored and activations kept or recomputed, through the
 * command line (the library's side is tests/unit/test_drawn_weights.c):
 * --activations auto recomputes only where keeping would not fit (and keep
 * is refused there), a 7B-shaped network (Llama 2's shapes) at 2 layers
 * gives the same CSV drawn or stored, and the summary and the JSON say what
 * the backward held. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "forward/network.h"
#include "run_program.h"
#include "test_filter.h"

/* o with Llama's block: SwiGLU, no biases, RMSNorm, width d, h query and
   kv key-value heads, vocab v. */
static void llama_options(vp_forward_options *o, size_t d, size_t h, size_t kv, size_t v)
{
    vp_forward_options_init(o);
    o->width = d;
    o->heads = h;
    o->kv_heads = kv;
    o->mlp = VP_MLP_SWIGLU;
    o->bias = VP_BIAS_NONE;
    o->norm = VP_NORM_RMSNORM;
    o->vocab = v;
}

/* --activations auto keeps every activation while the run fits in half of
   the machine's memory and recomputes where only that makes it fit: Llama
   3.1 70B's shape with --grad at 128 tokens keeps (about 7 GiB), at 512
   tokens (25 GiB kept, 1.4 GiB of inputs) recomputes; keep and
   recompute are obeyed as said. */
static void test_auto_recomputes_when_keeping_would_not_fit(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 80);
    cfg.grad = 1;
    vp_forward_options o;
    llama_options(&o, 8192, 64, 8, 128256);
    o.ffn_width = 28672;
    o.batch = 1;
    o.tokens = 128;
    o.threads = 2;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0 || (double)pages * (double)page < 20e9)
        skip(); /* the figures above are for a machine of 24 GiB */
    assert_int_equal(fw_recomputes(&cfg, &o), 0);
    o.tokens = 512;
    assert_int_equal(fw_recomputes(&cfg, &o), 1);
    o.activations = VP_ACTIVATIONS_KEEP;
    assert_int_equal(fw_recomputes(&cfg, &o), 0);
    o.activations = VP_ACTIVATIONS_RECOMPUTE;
    o.tokens = 16;
    assert_int_equal(fw_recomputes(&cfg, &o), 1);
    cfg.grad = 0;
    assert_int_equal(fw_recomputes(&cfg, &o), 0);
    /* keep asked where it does not fit: refused, pointing at recompute */
    program_run r = run_varprof((const char *const[]){"--model", "llama-3.1-70b", "--engine",
                                                      "forward", "--batch", "1", "--tokens", "512",
                                                      "--grad", "--activations", "keep", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "of activations"));
    assert_non_null(strstr(r.err, "--activations recompute"));
    program_run_free(&r);
}

/* A network of Llama 2 7B's shapes (d 4096, 32 heads, SwiGLU 11008, vocab
   32000) at 2 layers: the CSV drawn is the CSV stored. */
static void test_7b_shaped_csv(void **state)
{
    (void)state;
    program_run runs[2];
    const char *const storages[2] = {"drawn", "stored"};
    for (int i = 0; i < 2; i++) {
        runs[i] = run_varprof((const char *const[]){"--model", "llama-2-7b", "--engine", "forward",
                                                    "--layers", "2", "--batch", "1", "--tokens",
                                                    "16", "--threads", "2", "--weight-storage",
                                                    storages[i], "--format", "csv", NULL});
        assert_int_equal(runs[i].status, 0);
    }
    assert_true(runs[0].out_length > 200);
    assert_string_equal(runs[0].out, runs[1].out);
    program_run_free(&runs[0]);
    program_run_free(&runs[1]);
}

/* With --grad the summary says what the backward held: every activation,
   and the weights drawn again or stored. */
static void test_backward_says_what_it_held(void **state)
{
    (void)state;
    const char *const storages[2] = {"drawn", "stored"};
    const char *const says[2] = {"weights drawn again", "weights stored"};
    for (int i = 0; i < 2; i++) {
        program_run r = run_varprof(
            (const char *const[]){"--engine", "forward", "--grad", "--layers", "2", "--width", "64",
                                  "--heads", "2", "--weight-storage", storages[i], NULL});
        assert_int_equal(r.status, 0);
        const char *line = strstr(r.out, "  backward held     every activation (");
        assert_non_null(line);
        assert_non_null(strstr(line, " GiB); "));
        assert_non_null(strstr(line, says[i]));
        program_run_free(&r);
    }
    /* and the JSON's sampling: the bytes held, keeping and recomputing.
       2 layers = 4 sub-blocks on 2 x 64 rows of width 64: recomputing holds
       at least the 5 inputs (4 sub-blocks' and the top's), 160 KiB, and less
       than keeping, which also holds every sub-block's norm output, q, k,
       v, the heads' output and the MLP's hidden values. */
    double held[2] = {0.0, 0.0};
    const char *const modes[2] = {"keep", "recompute"};
    for (int i = 0; i < 2; i++) {
        program_run r = run_varprof((const char *const[]){
            "--engine", "forward", "--grad", "--layers", "2", "--width", "64", "--heads", "2",
            "--activations", modes[i], "--format", "json", NULL});
        assert_int_equal(r.status, 0);
        assert_non_null(
            strstr(r.out, i ? "\"activations\":\"recomputed\"" : "\"activations\":\"kept\""));
        assert_non_null(strstr(r.out, "\"weights\":\"drawn\""));
        const char *bytes = strstr(r.out, "\"activation_bytes\":");
        assert_non_null(bytes);
        held[i] = strtod(bytes + strlen("\"activation_bytes\":"), NULL);
        program_run_free(&r);
    }
    assert_true(held[1] >= 5.0 * 128 * 64 * sizeof(float));
    assert_true(held[1] < held[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_7b_shaped_csv),
        cmocka_unit_test(test_backward_says_what_it_held),
        cmocka_unit_test(test_auto_recomputes_when_keeping_would_not_fit),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
