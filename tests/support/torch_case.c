#include "torch_case.h"

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
#include "torch_expected.h"
#include "varprof/isa.h"

typedef struct {
    const torch_case *c;
    const char *isa;
    double stream, loss, tensors, grad_var, weight_grad; /* the worst relative errors */
    int bad;
} comparison;

/* got against want within tol relative (want exactly zero: the case's
   absolute bound); the worst relative error into *worst. */
static void check(comparison *cmp, const char *label, double got, double want, double tol,
                  double *worst)
{
    const torch_case *c = cmp->c;
    if (fabs(want) <= c->exact_zero) {
        if (fabs(got) <= c->zero_tolerance)
            return;
        print_error("%s on %s, %s: %.9g where PyTorch's exact figure is 0 (%.3g); at most %g\n",
                    c->case_name, cmp->isa, label, got, want, c->zero_tolerance);
        cmp->bad = 1;
        return;
    }
    const double rel = fabs(got - want) / fabs(want);
    if (!(rel <= *worst))
        *worst = isnan(rel) ? INFINITY : rel;
    if (!(rel <= tol)) {
        print_error("%s on %s, %s: %.9g, PyTorch %.9g (%.2g relative > %g)\n", c->case_name,
                    cmp->isa, label, got, want, rel, tol);
        cmp->bad = 1;
    }
}

static torch_expected *load(const torch_case *c)
{
    torch_expected *e = torch_expected_load(c->expected, c->case_name, c->exact_zero);
    if (!e->have_loss || e->n_tensors == 0 || e->n_grad_var < 2 ||
        e->n_weight_grad != e->n_grad_var ||
        (e->n_stream_norm != 0 && e->n_stream_norm != e->n_grad_var))
        fail_msg("%s: case %s is missing or incomplete", c->expected, c->case_name);
    if (e->worst_noise > c->data_noise)
        fail_msg("%s: case %s's float32 and float64 differ by %.2g", c->expected, c->case_name,
                 e->worst_noise);
    return e;
}

static void check_profile(comparison *cmp, const torch_expected *want, const char *csv)
{
    torch_profile got;
    torch_profile_read(csv, &got);
    assert_int_equal(got.rows, want->n_grad_var);
    char label[96];
    for (size_t k = 0; k < want->n_grad_var; k++) {
        if (want->n_stream_norm) {
            snprintf(label, sizeof label, "stream norm after sub-block %zu", k);
            check(cmp, label, got.stream_norm[k], want->stream_norm[k], cmp->c->stream_tolerance,
                  &cmp->stream);
        }
        snprintf(label, sizeof label, "grad_var at sub-block %zu", k);
        check(cmp, label, got.grad_var[k], want->grad_var[k], cmp->c->grad_tolerance,
              &cmp->grad_var);
        if (k == 0) {
            assert_true(isnan(got.weight_grad[0])); /* the embedding has no branch */
            continue;
        }
        snprintf(label, sizeof label, "weight_grad at sub-block %zu", k);
        check(cmp, label, got.weight_grad[k], want->weight_grad[k], cmp->c->grad_tolerance,
              &cmp->weight_grad);
    }
}

static void check_tensors(comparison *cmp, torch_expected *want, const char *path)
{
    torch_grads_out *g = calloc(1, sizeof *g);
    assert_non_null(g);
    torch_grads_out_read(path, want, g);
    const char *name = cmp->c->case_name, *isa = cmp->isa;
    if (!g->header_ok) {
        print_error("%s: the header is not name,shape,frobenius,rms\n", path);
        cmp->bad = 1;
    }
    if (g->unknown[0]) {
        print_error("%s on %s: --grads-out names '%s', which PyTorch's model lacks\n", name, isa,
                    g->unknown);
        cmp->bad = 1;
    }
    if (g->bad_shape[0]) {
        print_error("%s on %s: shape of %s\n", name, isa, g->bad_shape);
        cmp->bad = 1;
    }
    char label[160];
    for (size_t i = 0; i < want->n_tensors; i++) {
        const torch_tensor *r = &want->tensors[i];
        if (r->seen != 1) {
            print_error("%s on %s: --grads-out has %d rows for %s\n", name, isa, r->seen, r->name);
            cmp->bad = 1;
            continue;
        }
        snprintf(label, sizeof label, "||dL/d %s||", r->name);
        check(cmp, label, g->got_frobenius[i], r->frobenius, cmp->c->grad_tolerance, &cmp->tensors);
        snprintf(label, sizeof label, "rms(dL/d %s)", r->name);
        check(cmp, label, g->got_rms[i], r->rms, cmp->c->grad_tolerance, &cmp->tensors);
    }
    free(g);
}

void torch_case_run(const torch_case *c, const char *isa)
{
    torch_expected *want = load(c);
    char w[512], t[512], grads[512];
    snprintf(w, sizeof w, "%s", test_data_path(c->weights));
    snprintf(t, sizeof t, "%s", test_data_path(c->tokens));
    snprintf(grads, sizeof grads, "%s/%s_%s.csv", test_scratch(), c->case_name, isa);
    const char *args[48];
    size_t n = 0;
    const char *const head[] = {"--engine", "forward", "--weights", w, "--token-ids", t};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        args[n++] = head[i];
    for (size_t i = 0; c->args && c->args[i] && n < 40; i++)
        args[n++] = c->args[i];
    const char *const tail[] = {"--grad", "--grads-out", grads, "--format", "csv"};
    for (size_t i = 0; i < sizeof tail / sizeof *tail; i++)
        args[n++] = tail[i]; /* ends --grads-out FILE --format csv */
    args[n] = NULL;
    setenv("VARPROF_ISA", isa, 1);
    program_run run = run_varprof(args);
    if (run.status == 2 && strstr(run.err, "not supported by this CPU")) {
        unsetenv("VARPROF_ISA"); /* under valgrind the CPU it emulates lacks AVX-512 */
        program_run_free(&run);
        free(want);
        return;
    }
    if (run.status != 0)
        fail_msg("%s on %s: exit %d: %s", c->case_name, isa, run.status, run.err);
    /* the loss, from the same command line in JSON */
    args[n - 1] = "json";
    args[n - 3] = "/dev/null";
    program_run json = run_varprof(args);
    unsetenv("VARPROF_ISA");
    comparison cmp = {.c = c, .isa = isa};
    const double loss = torch_reported_loss(json.status == 0 ? json.out : NULL);
    program_run_free(&json);
    if (isnan(loss)) {
        print_error("%s on %s: no \"loss_value\" in the program's JSON\n", c->case_name, isa);
        cmp.bad = 1;
    } else
        check(&cmp, "loss", loss, want->loss, c->grad_tolerance, &cmp.loss);
    check_profile(&cmp, want, run.out);
    check_tensors(&cmp, want, grads);
    char stream[16] = "-"; /* the data may hold no stream norms */
    if (want->n_stream_norm)
        snprintf(stream, sizeof stream, "%.1e", cmp.stream);
    print_message("  %-20s %-7s worst relative error: stream norm %s, loss %.1e, tensors %.1e "
                  "(%zu), grad_var %.1e, weight_grad %.1e\n",
                  c->case_name, isa, stream, cmp.loss, cmp.tensors, want->n_tensors, cmp.grad_var,
                  cmp.weight_grad);
    free(want);
    program_run_free(&run);
    if (cmp.bad)
        fail();
}

void torch_case_run_every_isa(const torch_case *c)
{
    for (int isa = 0; isa < VP_ISA_COUNT; isa++)
        if (vp_isa_supported((vp_isa)isa))
            torch_case_run(c, vp_isa_name((vp_isa)isa));
}

/* The float64 of the case's row `quantity`, NaN where it has none. */
static double expected_figure(const torch_case *c, const char *quantity)
{
    FILE *f = fopen(test_data_path(c->expected), "r");
    assert_non_null(f);
    char line[1024], prefix[160];
    snprintf(prefix, sizeof prefix, "%s,%s,", c->case_name, quantity);
    double value = NAN;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, prefix, strlen(prefix)) == 0 && strrchr(line, ','))
            value = strtod(strrchr(line, ',') + 1, NULL);
    fclose(f);
    return value;
}

/* tokens' batch TORCH_TRAIN_STEPS times over, one step each, into the
   scratch folder as NAME_stream.csv: the stream train reads */
static const char *token_stream(const char *name, const char *tokens, size_t *batch, size_t *length)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s_stream.csv", test_scratch(), name);
    FILE *in = fopen(test_data_path(tokens), "r"), *out = fopen(path, "w");
    assert_true(in && out);
    static char text[65536];
    const size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    *batch = 0;
    for (const char *at = text; *at; at += strcspn(at, "\n") + (at[strcspn(at, "\n")] != 0))
        *batch += 1;
    *length = 1;
    for (const char *at = text; *at && *at != '\n'; at++)
        *length += *at == ',';
    for (int step = 0; step < TORCH_TRAIN_STEPS; step++)
        fputs(text, out);
    assert_int_equal(fclose(out), 0);
    return path;
}

/* train's CSV rows placement,layers,base_lr,warmup,seed,step,lr,loss,grad_norm:
   the last two of each step into loss and norm; the steps read */
static int train_rows(const char *out, double *loss, double *norm)
{
    int steps = 0;
    for (const char *line = strchr(out, '\n'); line && line[1] && steps < TORCH_TRAIN_STEPS;
         line = strchr(line + 1, '\n')) {
        char row[512];
        snprintf(row, sizeof row, "%.*s", (int)strcspn(line + 1, "\n"), line + 1);
        char *last = strrchr(row, ',');
        assert_non_null(last);
        norm[steps] = strtod(last + 1, NULL);
        *last = '\0';
        assert_non_null(strrchr(row, ','));
        loss[steps++] = strtod(strrchr(row, ',') + 1, NULL);
    }
    return steps;
}

void train_step0_check(const char *name, const char *weights, const char *tokens, double want_loss,
                       double want_norm, double tol)
{
    char w[512], batch_text[32], tokens_text[32];
    size_t batch, length;
    snprintf(w, sizeof w, "%s", test_data_path(weights));
    const char *stream = token_stream(name, tokens, &batch, &length);
    snprintf(batch_text, sizeof batch_text, "%zu", batch);
    snprintf(tokens_text, sizeof tokens_text, "%zu", length);
    const char *args[] = {"train",     "--weights", w,          "--token-stream",
                          stream,      "--steps",   "3",        "--task",
                          "next",      "--batch",   batch_text, "--tokens",
                          tokens_text, "--format",  "csv",      NULL};
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        setenv("VARPROF_ISA", vp_isa_name((vp_isa)isa), 1);
        program_run run = run_varprof(args);
        unsetenv("VARPROF_ISA");
        if (run.status == 2 && strstr(run.err, "not supported by this CPU")) {
            program_run_free(&run);
            continue;
        }
        if (run.status != 0)
            fail_msg("%s train on %s: exit %d: %s", name, vp_isa_name((vp_isa)isa), run.status,
                     run.err);
        double loss[TORCH_TRAIN_STEPS] = {0}, norm[TORCH_TRAIN_STEPS] = {0};
        const int steps = train_rows(run.out, loss, norm);
        program_run_free(&run);
        assert_int_equal(steps, TORCH_TRAIN_STEPS);
        const double rel_loss = fabs(loss[0] - want_loss) / fabs(want_loss);
        const double rel_norm = fabs(norm[0] - want_norm) / fabs(want_norm);
        print_message("  %-20s %-7s train step 0: loss %.1e, global gradient norm %.1e relative; "
                      "loss %.6g, %.6g, %.6g\n",
                      name, vp_isa_name((vp_isa)isa), rel_loss, rel_norm, loss[0], loss[1],
                      loss[2]);
        if (!(rel_loss <= tol && rel_norm <= tol))
            fail_msg("%s train on %s, step 0: loss %.9g (reference %.9g), global gradient norm "
                     "%.9g (reference %.9g), beyond %g relative",
                     name, vp_isa_name((vp_isa)isa), loss[0], want_loss, norm[0], want_norm, tol);
        if (!(loss[1] < loss[0] && loss[2] < loss[1]))
            fail_msg("%s train on %s: the loss %.9g, %.9g, %.9g does not fall", name,
                     vp_isa_name((vp_isa)isa), loss[0], loss[1], loss[2]);
    }
}

void torch_case_check_train(const torch_case *c, double tol)
{
    const double want_loss = expected_figure(c, "loss"),
                 want_norm = expected_figure(c, "grad_norm");
    if (isnan(want_loss) || isnan(want_norm))
        fail_msg("%s: case %s has no loss or no grad_norm row", c->expected, c->case_name);
    train_step0_check(c->case_name, c->weights, c->tokens, want_loss, want_norm, tol);
}
