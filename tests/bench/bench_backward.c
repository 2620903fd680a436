/* `make bench`, forward plus backward (issue 13): fw_run_network with
 * cfg.grad on one thread for three shapes, against the same networks in
 * PyTorch autograd (tests/bench/backward_torch.py) measured in the same
 * run, and against this core's FMA peak measured here. See
 * tests/bench/README.md, section 4.
 *
 * Usage: bench_backward [--no-torch] [--no-onednn] [--python PATH] [--script PATH]
 *                       [--repeats N] [--threads T] [--shape I] [--quick]
 *
 * The network is pre-norm, LayerNorm (eps 1e-5), --init torch, a final
 * LayerNorm (pre-norm's default) and the head, the copy loss; built once
 * with its workspace (fw_model_alloc + fw_model_init + fw_workspace_create,
 * not timed), as a training loop builds them. Timed, each the mean of
 * enough passes to last MIN_SECONDS, the best of REPEATS after a warm-up:
 *   fwd+bwd   fw_run_network with cfg.grad: the forward, the head and the
 *             loss, the backward to every parameter and the embedding,
 *             grad_var and weight_grad of every sub-block (no parameter
 *             callback: --grads-out's norms are not part of it)
 *   forward   fw_run_network without cfg.grad on the same model: the
 *             stack alone, with its measurements
 * backward = fwd+bwd - forward: it includes the head, the loss and
 * keeping the activations, so the backward/forward ratio is an upper bound.
 *
 * FLOPs per pass, the same count as backward_torch.py: 3 (F + 2 n d V), F
 * the forward's matmul FLOPs as bench_forward.c counts them (causal
 * attention halved), 2 n d V the head's; the backward does each matmul's dX
 * and dW, twice the forward's.
 *
 * Prints PASS/MISS for the targets (fwd+bwd >= 10x faster than PyTorch on
 * the seed stack, >= 1.5x on the other two; backward <= 2.2x forward at
 * d = 512) and, beside each ratio, the most any program could reach against
 * that peer: the FMA peak over the peer's GFLOP/s. Exits 0 either way; exits
 * 1 only when something fails. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_shapes.h"
#include "fma_peak.h"
#include "peer_script.h"
#include "forward/network.h"
#include "forward/workspace.h"
#include "varprof/config.h"
#include "varprof/forward.h"
#include "varprof/isa.h"
#include "varprof/placement.h"
#include "varprof/profile.h"

#define MIN_SECONDS 0.2 /* per repeat, at least */
#define MAX_SECONDS 30  /* the timed repeats of one shape in all, about */
#define REPEATS 5       /* best of */

typedef struct {
    const char *name;
    int mlp_only;
    size_t vocab, width, heads, ffn_mult, layers, batch, tokens;
    double target;      /* PyTorch fwd+bwd time / varprof's, at least */
    double max_bwd_fwd; /* backward / forward, at most (0: no target) */
} shape;

/* The forward bench's widths, batches and sequence lengths; fewer layers
   (8 and 4 instead of 32), so that a fwd+bwd pass of varprof takes ~0.3 s
   and stock PyTorch's no more than ~10 s even on the reference BLAS
   (~6 GFLOP/s; make bench installs OpenBLAS, on which it takes ~0.6 s).
   The seed stack is the seed's training batch, 16 x 12. */
static const shape shapes[] = {
    {"seed stack", 1, 24, 48, 8, 2, 24, 16, 12, 10.0, 0},
    {"MLP d=512", 1, 512, 512, 8, 4, 8, 4, 128, 1.5, 2.2},
    {"attn+MLP d=1024", 0, 512, 1024, 16, 4, 4, 1, 256, 1.5, 0},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static void shape_args(const shape *s, char *buf, size_t size)
{
    if (s->mlp_only)
        snprintf(buf, size,
                 "--block mlp --vocab %zu --width %zu --ffn-mult %zu --layers %zu "
                 "--batch %zu --tokens %zu",
                 s->vocab, s->width, s->ffn_mult, s->layers, s->batch, s->tokens);
    else
        snprintf(buf, size,
                 "--vocab %zu --width %zu --heads %zu --ffn-mult %zu --layers %zu "
                 "--batch %zu --tokens %zu",
                 s->vocab, s->width, s->heads, s->ffn_mult, s->layers, s->batch, s->tokens);
}

/* The forward's matmul FLOPs (bench_forward.c's count) and the head's. */
static double forward_flops(const shape *s)
{
    const double n = (double)(s->batch * s->tokens), d = (double)s->width;
    const double hidden = (double)(s->ffn_mult * s->width);
    double per_layer = 2.0 * (2.0 * n * d * hidden);
    if (!s->mlp_only) {
        const double hd = d / (double)s->heads, T = (double)s->tokens;
        per_layer += 4.0 * (2.0 * n * d * d);
        per_layer += 2.0 * ((double)s->batch * (double)s->heads * T * T * hd);
    }
    return (double)s->layers * per_layer + 2.0 * n * d * (double)s->vocab;
}

static double pass_flops(const shape *s)
{
    return 3.0 * forward_flops(s);
}

typedef struct {
    double ms, forward_ms, backward_ms; /* per pass, the best repeat */
    double loss;
    int repeats, passes;
} timing;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t token_below(size_t vocab)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(((rng_state >> 32) * (uint64_t)vocab) >> 32);
}

/* Where the parameter gradients go: a sum of one entry each, so that the
 * callback reads what it is handed. */
static double param_checksum;

static void keep_param_grad(void *ctx, const vp_param_grad *grad)
{
    *(double *)ctx += grad->gradient[0];
}

/* Mean seconds per pass of fw_run_network, best of reps repeats of passes. */
static int time_runs(const fw_model *m, const vp_config *cfg, const vp_forward_options *o,
                     const uint32_t *ids, vp_profile *profile, fw_workspace *ws, int reps,
                     int passes, double *best, vp_error *err)
{
    *best = 1e300;
    for (int r = 0; r < reps; r++) {
        const double t0 = bench_now();
        for (int p = 0; p < passes; p++)
            if (fw_run_network(m, cfg, o, ids, profile, ws, err) != VP_OK)
                return -1;
        const double t = (bench_now() - t0) / passes;
        *best = t < *best ? t : *best;
    }
    return 0;
}

static int time_varprof(const shape *s, size_t threads, int repeats, double min_s, timing *out)
{
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, s->layers);
    cfg.mlp_only = s->mlp_only;
    cfg.grad = 1;
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.width = s->width;
    o.heads = s->heads;
    o.ffn_mult = s->ffn_mult;
    o.vocab = s->vocab;
    o.batch = s->batch;
    o.tokens = s->tokens;
    o.threads = threads;
    o.norm = VP_NORM_LAYERNORM;
    o.eps = 1e-5;
    o.init = VP_INIT_TORCH;
    o.loss = VP_LOSS_COPY;
    /* every parameter's gradient, as PyTorch's loss.backward() makes them:
       without a consumer the network skips dW, db and the norms' (the
       profile's figures do not need them), a third of the backward */
    o.on_param_grad = keep_param_grad;
    o.param_grad_ctx = &param_checksum;
    vp_error err = {0};
    if (vp_forward_check(&cfg, &o, &err) != VP_OK) {
        fprintf(stderr, "bench_backward: %s: %s\n", s->name, err.message);
        return -1;
    }
    o.stored_weights = 1; /* as PyTorch's: the bench times passes */
    fw_model *m = fw_model_alloc(&cfg, &o, kern_current());
    uint32_t *ids = malloc(s->batch * s->tokens * sizeof *ids);
    vp_profile *profile = vp_profile_alloc(vp_config_sub_blocks(&cfg));
    fw_workspace *ws = NULL;
    int rc = -1;
    if (!m || !ids || !profile) {
        fprintf(stderr, "bench_backward: %s: out of memory\n", s->name);
        goto done;
    }
    if (fw_model_init(m, &cfg, &o, &err) != VP_OK) {
        fprintf(stderr, "bench_backward: %s: fw_model_init: %s\n", s->name, err.message);
        goto done;
    }
    /* made once, as a training loop makes it: no pass allocates */
    if (fw_workspace_create(m, o.batch, o.tokens, o.threads, &ws, &err) != VP_OK) {
        fprintf(stderr, "bench_backward: %s: fw_workspace_create: %s\n", s->name, err.message);
        goto done;
    }
    for (size_t i = 0; i < s->batch * s->tokens; i++)
        ids[i] = token_below(s->vocab);

    double warm = 0.0;
    for (int w = 0; w < 2; w++) {
        const double t0 = bench_now();
        if (fw_run_network(m, &cfg, &o, ids, profile, ws, &err) != VP_OK) {
            fprintf(stderr, "bench_backward: %s: fw_run_network: %s\n", s->name, err.message);
            goto done;
        }
        warm = bench_now() - t0;
        if (warm >= 1.0)
            break;
    }
    out->loss = profile->loss;
    int passes = (int)ceil(min_s / (warm > 1e-9 ? warm : 1e-9));
    passes = passes < 1 ? 1 : passes;
    int reps = (int)(MAX_SECONDS / (passes * warm));
    reps = reps < 1 ? 1 : reps > repeats ? repeats : reps;
    double both, fwd;
    if (time_runs(m, &cfg, &o, ids, profile, ws, reps, passes, &both, &err) != 0)
        goto failed;
    vp_config fwd_cfg = cfg; /* the same model, the forward alone */
    fwd_cfg.grad = 0;
    if (time_runs(m, &fwd_cfg, &o, ids, profile, ws, 1, 1, &fwd, &err) != 0 || /* warm-up */
        time_runs(m, &fwd_cfg, &o, ids, profile, ws, reps, passes * 2, &fwd, &err) != 0)
        goto failed;
    out->ms = both * 1e3;
    out->forward_ms = fwd * 1e3;
    out->backward_ms = (both - fwd) * 1e3;
    out->repeats = reps;
    out->passes = passes;
    rc = 0;
    goto done;
failed:
    fprintf(stderr, "bench_backward: %s: fw_run_network: %s\n", s->name, err.message);
done:
    fw_workspace_free(ws);
    fw_model_free(m);
    free(ids);
    vp_profile_free(profile);
    return rc;
}

/* Runs backward_torch.py on the shape and reads its JSON line. 0, or -1. */
static int time_torch(const char *python, const char *script, const shape *s, size_t threads,
                      int repeats, double min_s, const char *linear, timing *out, char *version,
                      size_t version_size, char *blas, size_t blas_size)
{
    char args[512];
    shape_args(s, args, sizeof args);
    peer_run run;
    cJSON *json = peer_script_run("bench_backward", python, script, args, threads, repeats, min_s,
                                  MAX_SECONDS, linear, &run);
    if (!json)
        return -1;
    int ok = 1;
    out->forward_ms = peer_number(json, "forward_ms", &ok);
    out->backward_ms = peer_number(json, "backward_ms", &ok);
    out->loss = peer_number(json, "loss", &ok);
    cJSON_Delete(json);
    if (!ok) {
        fprintf(stderr, "bench_backward: the PyTorch script gave no forward_ms, backward_ms or "
                        "loss\n");
        return -1;
    }
    out->ms = run.ms;
    out->repeats = run.repeats;
    out->passes = run.passes;
    snprintf(version, version_size, "%s", run.torch);
    snprintf(blas, blas_size, "%s", run.blas);
    return 0;
}

static const char *verdict(int ok)
{
    return ok ? "PASS" : "MISS";
}

static double gflops_of(const timing *t, double flops)
{
    return flops / (t->ms * 1e-3) * 1e-9;
}

static void print_timing(const char *who, const timing *t, double flops)
{
    printf("  %-17s fwd+bwd %10.3f ms (fwd %9.3f, bwd %9.3f; bwd/fwd %.2f) %7.1f GFLOP/s  "
           "loss %.4f  (best of %d x %d)\n",
           who, t->ms, t->forward_ms, t->backward_ms, t->backward_ms / t->forward_ms,
           gflops_of(t, flops), t->loss, t->repeats, t->passes);
}

int main(int argc, char **argv)
{
    bench_options opt;
    bench_options_init(&opt, "tests/bench/backward_torch.py", REPEATS, MIN_SECONDS);
    if (bench_options_parse(argc, argv, N_SHAPES, &opt))
        return 1;
    const char *python = opt.python, *script = opt.script;
    const int torch = opt.torch, onednn = opt.onednn, repeats = opt.repeats, only = opt.only;
    const size_t threads = opt.threads;
    const double min_s = opt.min_s;

    const vp_isa isa = vp_isa_current();
    printf("varprof forward+backward benchmark: fw_run_network --grad, pre-norm, LayerNorm "
           "(eps 1e-5), final norm, head, loss copy, --init torch, %zu thread%s, best of %d\n",
           threads, threads == 1 ? "" : "s", repeats);
    bench_print_kernels(isa);
    printf("FLOPs/pass = 3 x (the forward's matmuls, causal attention halved, + the head's "
           "2 n d V); same count for PyTorch.\n"
           "varprof's bwd = fwd+bwd - the forward alone (head, loss and kept activations "
           "included: an upper bound).\n");
    double peak = bench_fma_peak(isa);
    if (peak > 0)
        printf("single-core FMA peak (%s, independent FMAs on registers): %.1f GFLOP/s\n",
               vp_isa_name(isa), peak);
    else
        printf("single-core FMA peak: not measured for %s\n", vp_isa_name(isa));
    if (torch)
        printf("PyTorch: %s %s, autograd, torch.set_num_threads(%zu), float32; \"stock\" = its "
               "own nn.Linear (its BLAS),\n         \"oneDNN\" = each Linear's three matmuls "
               "through oneDNN (informative; the targets use stock)\n",
               python, script, threads);
    else
        printf("PyTorch: skipped (--no-torch); the ratios are not measured\n");

    timing vp[N_SHAPES] = {{0}}, stock[N_SHAPES] = {{0}}, dnn[N_SHAPES] = {{0}};
    int have_dnn[N_SHAPES] = {0};
    char version[64] = "?", blas[256] = "?";
    for (size_t si = 0; si < N_SHAPES; si++) {
        if (only >= 0 && (size_t)only != si)
            continue;
        const shape *s = &shapes[si];
        char args[512];
        shape_args(s, args, sizeof args);
        const double flops = pass_flops(s);
        printf("\n[%zu] %s: %s  (%.4g GFLOP/pass fwd+bwd)\n", si + 1, s->name, args, flops * 1e-9);
        if (time_varprof(s, threads, repeats, min_s, &vp[si]) != 0)
            return 1;
        print_timing("varprof", &vp[si], flops);
        if (!torch)
            continue;
        if (time_torch(python, script, s, threads, repeats, min_s, "dense", &stock[si], version,
                       sizeof version, blas, sizeof blas) != 0)
            return 1;
        print_timing("PyTorch (stock)", &stock[si], flops);
        if (onednn) {
            if (time_torch(python, script, s, threads, repeats, min_s, "onednn", &dnn[si], version,
                           sizeof version, blas, sizeof blas) != 0)
                return 1;
            have_dnn[si] = 1;
            print_timing("PyTorch (oneDNN)", &dnn[si], flops);
        }
    }
    if (torch)
        printf("\nPyTorch %s, BLAS_INFO=%s (torch.__config__.show())\n", version, blas);

    const double peak_end = bench_fma_peak(isa);
    if (peak > 0) {
        printf("\nFMA peak measured again at the end: %.1f GFLOP/s (start %.1f)%s\n", peak_end,
               peak,
               fabs(peak_end - peak) > 0.05 * (peak > peak_end ? peak : peak_end)
                   ? "; they differ by more than 5 %: the core was not the bench's alone"
                   : "");
        peak = peak > peak_end ? peak : peak_end;
        printf("Share of the single-core FMA peak (%s, %.1f GFLOP/s), fwd+bwd:\n", vp_isa_name(isa),
               peak);
        for (size_t si = 0; si < N_SHAPES; si++) {
            if (only >= 0 && (size_t)only != si)
                continue;
            const double flops = pass_flops(&shapes[si]);
            printf("  [%zu] %-16s varprof %5.1f %%", si + 1, shapes[si].name,
                   100.0 * gflops_of(&vp[si], flops) / peak);
            if (torch)
                printf("   PyTorch stock %5.1f %%", 100.0 * gflops_of(&stock[si], flops) / peak);
            if (have_dnn[si])
                printf("   PyTorch oneDNN %5.1f %%", 100.0 * gflops_of(&dnn[si], flops) / peak);
            printf("\n");
        }
    }

    printf("\nTargets (issue 13, Speed; %zu thread%s; ratio = PyTorch fwd+bwd ms / varprof's):\n",
           threads, threads == 1 ? "" : "s");
    for (size_t si = 0; si < N_SHAPES; si++) {
        if (only >= 0 && (size_t)only != si)
            continue;
        const shape *s = &shapes[si];
        if (s->max_bwd_fwd > 0) {
            const double r = vp[si].backward_ms / vp[si].forward_ms;
            printf("  [%zu] %-16s varprof backward / forward: %.2f  (target <= %g)  %s\n", si + 1,
                   s->name, r, s->max_bwd_fwd, verdict(r <= s->max_bwd_fwd));
        }
        if (!torch) {
            printf("  [%zu] %-16s vs PyTorch: not measured (--no-torch)\n", si + 1, s->name);
            continue;
        }
        const double r = stock[si].ms / vp[si].ms;
        printf("  [%zu] %-16s vs PyTorch %s (stock): %8.2fx faster  (target >= %gx)  %s\n", si + 1,
               s->name, version, r, s->target, verdict(r >= s->target));
        bench_print_peer_limit(23, peak, gflops_of(&stock[si], pass_flops(s)), s->target);
        if (have_dnn[si]) {
            const double rd = dnn[si].ms / vp[si].ms;
            printf("      %-16s vs PyTorch with oneDNN linears: %8.2fx faster  (same bar, "
                   "informative)  %s\n",
                   "", rd, verdict(rd >= s->target));
        }
    }
    return 0;
}
