/* The MLP kinds (--mlp) and the exact hidden width (--ffn-width), issue 15,
 * through the program: each kind's tiny network from
 * tests/data/gen_mlp_kinds_reference.py run with --weights on every
 * instruction set gives PyTorch's stream norms, gradient norms, grad_var and
 * weight_grad; the options refuse what they must, naming it. The gain init
 * and the weights' names are tests/unit/test_mlp_kinds.c. */
#include <math.h>
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
#include "torch_expected.h"
#include "varprof/isa.h"
#include "varprof/varprof.h"

/* The stream's norms against PyTorch in float64 on the same float32
   weights: 1e-5 relative, the bound (PyTorch's own float32 run
   moves them by at most 5.5e-9, the data's float32 column). */
#define STREAM_TOLERANCE 1e-5
/* The gradients: test_pytorch_grads.c's bound, 1e-5 relative (PyTorch's
   float32 moves these by at most 1.1e-7). */
#define GRAD_TOLERANCE 1e-5
/* A gradient that is 0 in exact arithmetic (k's bias: a shift of every
   key's score leaves the softmax as it was) is float noise; it is held to
   this share of the largest tensor gradient's norm instead. */
#define ZERO_GRAD_SHARE 1e-6

static const char *const KINDS[] = {"gelu", "gelu-tanh", "relu", "swiglu", "geglu"};
#define N_KINDS (sizeof KINDS / sizeof KINDS[0])

/* ---- PyTorch's figures, mlp_kinds_expected.csv ---- */

/* Kind `kind` of mlp_kinds_expected.csv, checked whole. */
static torch_expected *load_expected(const char *kind)
{
    torch_expected *e = torch_expected_load("mlp_kinds_expected.csv", kind, 0.0);
    if (e->n_tensors == 0 || e->n_stream_norm < 2) {
        print_error("mlp_kinds_expected.csv: kind %s is missing or incomplete\n", kind);
        fail();
    }
    return e;
}

static int check(const char *kind, const char *isa, const char *label, double got, double want,
                 double tol, double *worst)
{
    const double rel = fabs(got - want) / fabs(want);
    if (!(rel <= *worst))
        *worst = isnan(rel) ? INFINITY : rel;
    if (!(rel <= tol)) {
        print_error("%s on %s, %s: %.9g, PyTorch %.9g (%.2g relative)\n", kind, isa, label, got,
                    want, rel);
        return 1;
    }
    return 0;
}

static void run_kind(const char *kind, const char *isa)
{
    torch_expected *want = load_expected(kind);
    char w[512], t[512], grads[512], name[64];
    snprintf(name, sizeof name, "mlp_kind_%s.safetensors", kind);
    snprintf(w, sizeof w, "%s", test_data_path(name));
    snprintf(t, sizeof t, "%s", test_data_path("mlp_kind_tokens.csv"));
    snprintf(grads, sizeof grads, "%s/mlp_%s_%s.csv", test_scratch(), kind, isa);
    const char *args[] = {"--engine", "forward", "--weights", w,     "--token-ids", t,
                          "--heads",  "2",       "--mlp",     kind,  "--grad",      "--grads-out",
                          grads,      "--force", "--format",  "csv", NULL};
    setenv("VARPROF_ISA", isa, 1);
    program_run run = run_varprof(args);
    unsetenv("VARPROF_ISA");
    if (run.status == 2 && strstr(run.err, "not supported by this CPU")) {
        program_run_free(&run);
        free(want);
        return;
    }
    if (run.status != 0) {
        print_error("%s on %s: exit %d: %s", kind, isa, run.status, run.err);
        fail();
    }
    int bad = 0;
    double worst_stream = 0, worst_gv = 0, worst_wg = 0, worst_t = 0;
    const int c_k = csv_column_of(run.out, "sub_block");
    const int c_s = csv_column_of(run.out, "stream_norm");
    const int c_g = csv_column_of(run.out, "grad_var");
    const int c_w = csv_column_of(run.out, "weight_grad");
    assert_true(c_k >= 0 && c_s >= 0 && c_g >= 0 && c_w >= 0);
    size_t rows = 0;
    char label[96];
    for (const char *line = strchr(run.out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const double kd = csv_number_at(line + 1, c_k);
        if (!(kd >= 0 && kd < (double)want->n_stream_norm))
            continue;
        const size_t k = (size_t)kd;
        rows++;
        snprintf(label, sizeof label, "stream norm after sub-block %zu", k);
        bad |= check(kind, isa, label, csv_number_at(line + 1, c_s), want->stream_norm[k],
                     STREAM_TOLERANCE, &worst_stream);
        snprintf(label, sizeof label, "grad_var at sub-block %zu", k);
        bad |= check(kind, isa, label, csv_number_at(line + 1, c_g), want->grad_var[k],
                     GRAD_TOLERANCE, &worst_gv);
        if (k > 0) {
            snprintf(label, sizeof label, "weight_grad at sub-block %zu", k);
            bad |= check(kind, isa, label, csv_number_at(line + 1, c_w), want->weight_grad[k],
                         GRAD_TOLERANCE, &worst_wg);
        }
    }
    assert_int_equal(rows, want->n_stream_norm);
    torch_grads_out *g = calloc(1, sizeof *g);
    assert_non_null(g);
    torch_grads_out_read(grads, want, g);
    if (g->unknown[0]) {
        print_error("%s on %s: --grads-out names '%s', which PyTorch's model lacks\n", kind, isa,
                    g->unknown);
        bad = 1;
    }
    double largest = 0.0;
    for (size_t i = 0; i < want->n_tensors; i++)
        largest = want->tensors[i].frobenius > largest ? want->tensors[i].frobenius : largest;
    for (size_t i = 0; i < want->n_tensors; i++) {
        const torch_tensor *r = &want->tensors[i];
        if (r->seen != 1) {
            print_error("%s on %s: --grads-out has %d rows for %s\n", kind, isa, r->seen, r->name);
            bad = 1;
            continue;
        }
        const size_t len = strlen(r->name);
        if (len > 11 && strcmp(r->name + len - 11, "attn.k.bias") == 0) {
            if (!(g->got_frobenius[i] <= ZERO_GRAD_SHARE * largest)) {
                print_error("%s on %s: ||dL/d %s|| is %.3g, not float noise against %.3g\n", kind,
                            isa, r->name, g->got_frobenius[i], largest);
                bad = 1;
            }
            continue;
        }
        snprintf(label, sizeof label, "||dL/d %s||", r->name);
        bad |= check(kind, isa, label, g->got_frobenius[i], r->frobenius, GRAD_TOLERANCE, &worst_t);
    }
    print_message("  %-10s %-7s worst relative error: stream norm %.1e, tensors %.1e (%zu), "
                  "grad_var %.1e, weight_grad %.1e\n",
                  kind, isa, worst_stream, worst_t, want->n_tensors, worst_gv, worst_wg);
    free(g);
    free(want);
    program_run_free(&run);
    if (bad)
        fail();
}

static void every_kind_matches_pytorch_on_every_isa(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_KINDS; k++)
        for (int isa = 0; isa < VP_ISA_COUNT; isa++)
            if (vp_isa_supported((vp_isa)isa))
                run_kind(KINDS[k], vp_isa_name((vp_isa)isa));
}

/* ---- the options ---- */

static void expect_usage(const char *const *args, const char *needle)
{
    program_run run = run_varprof(args);
    if (run.status != 2 || !strstr(run.err, needle)) {
        print_error("exit %d, wanted 2 with '%s' in: %s\n", run.status, needle, run.err);
        fail();
    }
    program_run_free(&run);
}

static void options_refuse_what_they_must(void **state)
{
    (void)state;
    expect_usage(
        (const char *[]){"--engine", "forward", "--ffn-width", "100", "--ffn-mult", "2", NULL},
        "--ffn-width and --ffn-mult both given");
    expect_usage((const char *[]){"train", "--ffn-width", "100", "--ffn-mult", "2", NULL},
                 "--ffn-width and --ffn-mult both given");
    expect_usage((const char *[]){"--engine", "forward", "--mlp", "silu", NULL},
                 "gelu, gelu-tanh, relu, swiglu, geglu");
    expect_usage((const char *[]){"--engine", "forward", "--ffn-width", "0", NULL},
                 "from 1 to 262144");
    expect_usage((const char *[]){"--engine", "forward", "--ffn-width", "262145", NULL},
                 "from 1 to 262144");
    expect_usage((const char *[]){"--mlp", "relu", NULL}, "--mlp applies to the sampled engines");
    /* the header says what ran */
    const char *args[] = {"--engine", "forward", "--layers",    "1",        "--width",
                          "32",       "--vocab", "16",          "--tokens", "4",
                          "--mlp",    "swiglu",  "--ffn-width", "88",       NULL};
    program_run run = run_varprof(args);
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "swiglu MLP 88 wide"));
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_matches_pytorch_on_every_isa),
        cmocka_unit_test(options_refuse_what_they_must),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("MLP kinds", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
