/* Learned and rotary positions matched to PyTorch (issue 15): four tiny
 * pre-norm networks of tests/data/gen_positions_reference.py, each written
 * with its own PyTorch implementation (GPT-2's wpe; Hugging Face Llama's
 * rotate-half RoPE, after QK-norm in one case and without it in another;
 * widths 32 and 64, 13 tokens a sequence), give on every instruction set
 * the per-sub-block stream norms, the loss, every named tensor's gradient
 * norm (--grads-out) and every sub-block's grad_var and weight_grad that
 * PyTorch gives. Besides: a table shorter than the tokens is refused,
 * training updates the learned positions, and bad positions options are
 * usage errors naming the fix. */
#include <math.h>
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
#include "torch_expected.h"
#include "varprof/isa.h"
#include "varprof/varprof.h"

/* The forward's stream norms against PyTorch in float64 on the same float32
 * weights: 1e-5 relative, the bound. The gradients: the bound
 * test_pytorch_grads.c holds the backward to, also 1e-5 relative. PyTorch's
 * own float32 run moves no figure here by more than 1e-6 from float64
 * (DATA_FLOAT32_NOISE), but the exactly-zero ones below. */
#define STREAM_TOLERANCE 1e-5
#define GRAD_TOLERANCE 1e-5
#define DATA_FLOAT32_NOISE 1e-6

/* A gradient that is zero in exact arithmetic (the keys' bias without
 * QK-norm or rope: softmax ignores a shift shared by every key; PyTorch's
 * float64 gives ~1e-18) is held to this absolute bound instead; PyTorch's
 * own float32 leaves about 7e-10 there. */
#define EXACT_ZERO 1e-15
#define ZERO_TOLERANCE 1e-7

/* Case `which` of positions_expected.csv, checked whole. */
static torch_expected *load_expected(const char *which)
{
    torch_expected *e = torch_expected_load("positions_expected.csv", which, EXACT_ZERO);
    if (!e->have_loss || e->n_tensors == 0 || e->n_stream_norm < 2 ||
        e->n_grad_var != e->n_stream_norm || e->n_weight_grad != e->n_grad_var) {
        print_error("positions_expected.csv: case %s is missing or incomplete\n", which);
        fail();
    }
    if (e->worst_noise > DATA_FLOAT32_NOISE) {
        print_error("positions_expected.csv: case %s's float32 and float64 differ by %.2g\n",
                    which, e->worst_noise);
        fail();
    }
    return e;
}

/* ---- what the program wrote ---- */

/* ---- the comparison ---- */

/* got against want within tol relative (want exactly zero: ZERO_TOLERANCE
   absolute); the worst relative error into *worst. 1 on a mismatch. */
static int check(const char *what, const char *isa, const char *label, double got, double want,
                 double tol, double *worst)
{
    if (fabs(want) <= EXACT_ZERO) {
        if (fabs(got) <= ZERO_TOLERANCE)
            return 0;
        print_error("%s on %s, %s: %.9g where PyTorch's exact figure is 0 (%.3g); at most %g\n",
                    what, isa, label, got, want, ZERO_TOLERANCE);
        return 1;
    }
    const double rel = fabs(got - want) / fabs(want);
    if (!(rel <= *worst))
        *worst = isnan(rel) ? INFINITY : rel;
    if (!(rel <= tol)) {
        print_error("%s on %s, %s: %.9g, PyTorch %.9g (%.2g relative > %g)\n", what, isa, label,
                    got, want, rel, tol);
        return 1;
    }
    return 0;
}

typedef struct {
    const char *case_name; /* in positions_expected.csv, and positions_<case>.safetensors */
    const char *const *extra; /* options beyond the file's, NULL-terminated */
} positions_case;

static void run_case(const positions_case *c, const char *isa)
{
    torch_expected *want = load_expected(c->case_name);
    char w[512], t[512], grads[512], file[96];
    snprintf(file, sizeof file, "positions_%s.safetensors", c->case_name);
    snprintf(w, sizeof w, "%s", test_data_path(file));
    snprintf(t, sizeof t, "%s", test_data_path("positions_tokens.csv"));
    snprintf(grads, sizeof grads, "%s/%s_%s.csv", test_scratch(), c->case_name, isa);
    const char *args[40];
    size_t n = 0;
    for (size_t i = 0; c->extra[i]; i++)
        args[n++] = c->extra[i];
    const char *fixed[] = {"--engine",  "forward", "--weights", w,          "--token-ids",
                           t,           "--placement", "pre-norm", "--heads", "4",
                           "--grad",    "--loss",  "copy",      "--grads-out", grads,
                           "--format",  "csv"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        args[n++] = fixed[i]; /* ends --grads-out FILE --format csv */
    args[n] = NULL;
    setenv("VARPROF_ISA", isa, 1);
    program_run run = run_varprof(args);
    unsetenv("VARPROF_ISA");
    if (run.status == 2 && strstr(run.err, "not supported by this CPU")) {
        program_run_free(&run);
        free(want);
        return;
    }
    if (run.status != 0) {
        print_error("%s on %s: exit %d: %s", c->case_name, isa, run.status, run.err);
        fail();
    }
    int bad = 0;
    double worst_stream = 0, worst_loss = 0, worst_tensor = 0, worst_gv = 0, worst_wg = 0;
    char label[96];

    args[n - 1] = "json";
    args[n - 3] = "/dev/null";
    setenv("VARPROF_ISA", isa, 1);
    program_run json = run_varprof(args);
    unsetenv("VARPROF_ISA");
    const double loss = torch_reported_loss(json.status == 0 ? json.out : NULL);
    program_run_free(&json);
    bad |= check(c->case_name, isa, "loss", loss, want->loss, GRAD_TOLERANCE, &worst_loss);

    torch_profile got;
    torch_profile_read(run.out, &got);
    assert_int_equal(got.rows, want->n_stream_norm);
    for (size_t k = 0; k < want->n_stream_norm; k++) {
        snprintf(label, sizeof label, "stream norm after sub-block %zu", k);
        bad |= check(c->case_name, isa, label, got.stream_norm[k], want->stream_norm[k],
                     STREAM_TOLERANCE, &worst_stream);
        snprintf(label, sizeof label, "grad_var at sub-block %zu", k);
        bad |= check(c->case_name, isa, label, got.grad_var[k], want->grad_var[k],
                     GRAD_TOLERANCE, &worst_gv);
        if (k == 0)
            continue;
        snprintf(label, sizeof label, "weight_grad at sub-block %zu", k);
        bad |= check(c->case_name, isa, label, got.weight_grad[k], want->weight_grad[k],
                     GRAD_TOLERANCE, &worst_wg);
    }

    torch_grads_out *g = calloc(1, sizeof *g);
    assert_non_null(g);
    torch_grads_out_read(grads, want, g);
    if (g->unknown[0]) {
        print_error("%s on %s: --grads-out names '%s', which PyTorch's model lacks\n",
                    c->case_name, isa, g->unknown);
        bad = 1;
    }
    if (g->bad_shape[0]) {
        print_error("%s on %s: shape of %s\n", c->case_name, isa, g->bad_shape);
        bad = 1;
    }
    for (size_t i = 0; i < want->n_tensors; i++) {
        const torch_tensor *r = &want->tensors[i];
        if (r->seen != 1) {
            print_error("%s on %s: --grads-out has %d rows for %s\n", c->case_name, isa, r->seen,
                        r->name);
            bad = 1;
            continue;
        }
        snprintf(label, sizeof label, "||dL/d %s||", r->name);
        bad |= check(c->case_name, isa, label, g->got_frobenius[i], r->frobenius, GRAD_TOLERANCE,
                     &worst_tensor);
        snprintf(label, sizeof label, "rms(dL/d %s)", r->name);
        bad |= check(c->case_name, isa, label, g->got_rms[i], r->rms, GRAD_TOLERANCE,
                     &worst_tensor);
    }
    print_message("  %-12s %-7s worst relative error: stream norm %.1e, loss %.1e, tensors %.1e "
                  "(%zu), grad_var %.1e, weight_grad %.1e\n",
                  c->case_name, isa, worst_stream, worst_loss, worst_tensor, want->n_tensors,
                  worst_gv, worst_wg);
    free(g);
    free(want);
    program_run_free(&run);
    if (bad)
        fail();
}

static void run_on_every_isa(const positions_case *c)
{
    for (int isa = 0; isa < VP_ISA_COUNT; isa++)
        if (vp_isa_supported((vp_isa)isa))
            run_case(c, vp_isa_name((vp_isa)isa));
}

/* pos_embed.weight in the file makes the positions learned: no option */
static const char *const no_options[] = {NULL};

static void learned_positions(void **state)
{
    (void)state;
    const positions_case d32 = {"learned_d32", no_options};
    const positions_case d64 = {"learned_d64", no_options};
    run_on_every_isa(&d32);
    run_on_every_isa(&d64);
}

static void rope_after_qk_norm(void **state)
{
    (void)state;
    static const char *const rope[] = {"--positions", "rope", NULL}; /* theta 10000 */
    const positions_case c = {"rope_d32", rope};
    run_on_every_isa(&c);
}

static void rope_without_qk_norm(void **state)
{
    (void)state;
    static const char *const rope[] = {"--positions", "rope", "--rope-theta", "500000", NULL};
    const positions_case c = {"rope_d64", rope};
    run_on_every_isa(&c);
}

/* The file's 16 positions serve 13 tokens; more tokens than that are refused
   naming both numbers. */
static void too_many_tokens_for_the_table(void **state)
{
    (void)state;
    char w[512];
    snprintf(w, sizeof w, "%s", test_data_path("positions_learned_d32.safetensors"));
    const char *args[] = {"--engine", "forward", "--weights", w, "--placement", "pre-norm",
                          "--heads",  "4",       "--tokens", "17", NULL};
    program_run run = run_varprof(args);
    assert_int_equal(run.status, 2);
    if (!strstr(run.err, "17") || !strstr(run.err, "16") || !strstr(run.err, "pos_embed")) {
        print_error("the message names not both numbers and the tensor: %s", run.err);
        fail();
    }
    program_run_free(&run);
}

/* Training's Adam takes the learned positions with the other parameters:
   --layer-stats has a row for pos_embed.weight each step, with a gradient
   and an update. */
static void train_updates_learned_positions(void **state)
{
    (void)state;
    char stats[512];
    snprintf(stats, sizeof stats, "%s/positions_layer_stats.csv", test_scratch());
    const char *args[] = {"train",       "--block",  "attn-mlp", "--heads", "4",
                          "--positions", "learned",  "--steps",  "3",       "--placement",
                          "pre-norm",    "--layers", "2",        "--layer-stats",
                          stats,         "--quiet",  NULL};
    program_run run = run_varprof(args);
    if (run.status != 0) {
        print_error("exit %d: %s", run.status, run.err);
        fail();
    }
    program_run_free(&run);
    FILE *f = fopen(stats, "r");
    assert_non_null(f);
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, ",pos_embed.weight,");
        if (!at)
            continue;
        double grad_norm = 0, weight_norm = 0, update_ratio = 0;
        assert_int_equal(sscanf(at + strlen(",pos_embed.weight,"), "%lf,%lf,%lf", &grad_norm,
                                &weight_norm, &update_ratio),
                         3);
        assert_true(grad_norm > 0 && weight_norm > 0 && update_ratio > 0);
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, 3);
}

/* Usage errors name the option and the fix. */
static void positions_usage_errors(void **state)
{
    (void)state;
    static const struct {
        const char *args[12];
        const char *says;
    } cases[] = {
        {{"--engine", "forward", "--rope-theta", "500000", NULL}, "--positions rope"},
        {{"--engine", "forward", "--positions", "rotary", NULL}, "none, learned, rope"},
        {{"--engine", "forward", "--positions", "rope", "--rope-theta", "0", NULL},
         "--rope-theta"},
        {{"--engine", "forward", "--positions", "rope", "--width", "60", "--heads", "4", NULL},
         "even"},
        {{"--engine", "forward", "--positions", "rope", "--block", "mlp", NULL}, "attention"},
        {{"--positions", "rope", NULL}, "--engine forward"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        program_run run = run_varprof(cases[i].args);
        if (run.status != 2 || !strstr(run.err, cases[i].says)) {
            print_error("case %zu: exit %d, want 2 and '%s' in: %s", i, run.status, cases[i].says,
                        run.err);
            fail();
        }
        program_run_free(&run);
    }
}

/* The text heading and the JSON say which positions ran; none goes unsaid,
   so that every output of the network without positions stands. */
static void outputs_say_the_positions(void **state)
{
    (void)state;
    static const struct {
        const char *args[16];
        const char *says, *lacks;
    } cases[] = {
        {{"--engine", "forward", "--layers", "1", "--width", "32", "--heads", "4", "--tokens", "9",
          "--positions", "rope", "--rope-theta", "500000", NULL},
         "\npositions: rope, theta 500000\n", NULL},
        {{"--engine", "forward", "--layers", "1", "--width", "32", "--heads", "4", "--tokens", "9",
          "--positions", "learned", "--format", "json", NULL},
         "\"positions\":\"learned\"", "rope_theta"},
        {{"--engine", "forward", "--layers", "1", "--width", "32", "--heads", "4", "--tokens", "9",
          "--format", "json", NULL},
         "\"qk_norm\":false}", "positions"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        program_run run = run_varprof(cases[i].args);
        if (run.status != 0 || !strstr(run.out, cases[i].says) ||
            (cases[i].lacks && strstr(run.out, cases[i].lacks))) {
            print_error("case %zu: exit %d, want '%s'%s%s in:\n%.600s\n", i, run.status,
                        cases[i].says, cases[i].lacks ? " and no " : "",
                        cases[i].lacks ? cases[i].lacks : "", run.out);
            fail();
        }
        program_run_free(&run);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(learned_positions),
        cmocka_unit_test(rope_after_qk_norm),
        cmocka_unit_test(rope_without_qk_norm),
        cmocka_unit_test(too_many_tokens_for_the_table),
        cmocka_unit_test(train_updates_learned_positions),
        cmocka_unit_test(positions_usage_errors),
        cmocka_unit_test(outputs_say_the_positions),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("positions matched to PyTorch", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
