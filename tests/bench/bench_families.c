/* `make bench`, two of the families' blocks: fw_run_network on one thread
 * for a GPT-NeoX-style parallel-residual stack and a BLOOM-style ALiBi
 * stack, against the same blocks in plain PyTorch
 * (tests/bench/families_torch.py) measured in the same run, and against
 * this core's FMA peak measured here. See tests/bench/README.md, section 9.
 *
 * Usage: bench_families [--no-torch] [--no-onednn] [--python PATH]
 *                       [--script PATH] [--repeats N] [--threads T]
 *                       [--shape I] [--quick]
 *
 * bench_arch.c's twin (the same timer, network_timer.c, the same peer
 * protocol and the same bar), for the blocks issue 30 added:
 *   neox:  the parallel placement with two norms, x + attn(LN1 x) +
 *          mlp(LN2 x) (GPT-NeoX's use_parallel_residual), rotary on the
 *          first quarter of each head (rotary_pct 0.25, rotate-half, theta
 *          10000), GELU (erf) MLP, biases on every projection, none on the
 *          head (embed_out);
 *   bloom: pre-norm, a LayerNorm on the embedding (word_embeddings_layernorm),
 *          ALiBi (BLOOM's slopes, key position times slope added to the
 *          scores), tanh-GELU MLP, biases on every projection, the head tied
 *          without a bias.
 * Both LayerNorm (eps 1e-5), MHA, --init torch. The network and its
 * workspace are built once; the timed call is fw_run_network (embedding
 * through the last block; without cfg.grad neither the final norm nor the
 * head runs, so families_torch.py runs neither).
 *
 * FLOPs per pass, the same count as families_torch.py: 2 n k m per matmul
 * of n = B T rows, k inputs, m outputs (q, k, v, o [d -> d], the MLP's up
 * [d -> F] and down [F -> d]); plus attention's q k^T and p v at 2 B H T T
 * hd each, HALVED for causality. The norms, rotary, ALiBi's adds, GELU,
 * softmax, the biases and the residual adds are not counted.
 *
 * The bar, bench_arch's: PASS when varprof is at least TARGET_RATIO faster
 * than stock PyTorch AND runs at least TARGET_SHARE of the FMA peak; MISS
 * otherwise. Exits 0 either way; 1 only when something fails. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fma_peak.h"
#include "network_timer.h"
#include "peer_script.h"
#include "varprof/config.h"
#include "varprof/forward.h"
#include "varprof/isa.h"
#include "varprof/mc.h"
#include "varprof/placement.h"

#define MIN_SECONDS 0.2   /* per repeat, at least */
#define MAX_SECONDS 30    /* the timed repeats of one shape in all, about */
#define REPEATS 5         /* best of */
#define NORM_EPS 1e-5     /* LayerNorm's eps, both sides (GPT-NeoX's and BLOOM's) */
#define TARGET_RATIO 1.1  /* PyTorch time / varprof time, at least */
#define TARGET_SHARE 0.50 /* varprof's GFLOP/s / the FMA peak, at least */

typedef enum { NEOX, BLOOM } family;

typedef struct {
    const char *name;
    family kind;
    size_t vocab, width, heads, ffn_width, layers, batch, tokens;
    double rotary_pct; /* neox: the share of each head rotated */
} shape;

/* d 1024, 128 tokens, 4 layers: a pass of a few hundred milliseconds */
static const shape shapes[] = {
    {"neox d1024 parallel", NEOX, 1024, 1024, 16, 4096, 4, 1, 128, 0.25},
    {"bloom d1024 ALiBi", BLOOM, 1024, 1024, 16, 4096, 4, 1, 128, 0.0},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* The shape as families_torch.py's options; the rest is fixed by --family
   on both sides. */
static void shape_args(const shape *s, char *buf, size_t size)
{
    snprintf(buf, size,
             "--family %s --vocab %zu --width %zu --heads %zu --ffn-width %zu --layers %zu "
             "--batch %zu --tokens %zu",
             s->kind == NEOX ? "neox" : "bloom", s->vocab, s->width, s->heads, s->ffn_width,
             s->layers, s->batch, s->tokens);
    if (s->kind == NEOX) {
        const size_t at = strlen(buf);
        snprintf(buf + at, size - at, " --rotary-pct %g", s->rotary_pct);
    }
}

static double pass_flops(const shape *s)
{
    const double n = (double)(s->batch * s->tokens), d = (double)s->width;
    const double hd = d / (double)s->heads, T = (double)s->tokens;
    double per_layer = 2.0 * (2.0 * n * d * (double)s->ffn_width);         /* up, down */
    per_layer += 4.0 * (2.0 * n * d * d);                                  /* q, k, v, o */
    per_layer += 2.0 * ((double)s->batch * (double)s->heads * T * T * hd); /* causal halves */
    return (double)s->layers * per_layer;
}

static int time_varprof(const shape *s, size_t threads, int repeats, double min_s,
                        network_timing *out)
{
    vp_config cfg;
    vp_config_init(&cfg, s->kind == NEOX ? VP_PARALLEL : VP_PRE_NORM, s->layers);
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.width = s->width;
    o.heads = s->heads;
    o.kv_heads = s->heads;
    o.ffn_width = s->ffn_width;
    o.bias = VP_BIAS_ALL;
    o.head_unbiased = 1;
    o.vocab = s->vocab;
    o.batch = s->batch;
    o.tokens = s->tokens;
    o.threads = threads;
    o.norm = VP_NORM_LAYERNORM;
    o.eps = NORM_EPS;
    o.init = VP_INIT_TORCH;
    if (s->kind == NEOX) {
        o.residual = VP_RESIDUAL_PARALLEL_TWO_NORMS;
        o.mlp = VP_MLP_GELU;
        o.positions = VP_POSITIONS_ROPE;
        o.rope_theta = 10000.0;
        o.rope_fraction = s->rotary_pct;
    } else {
        o.mlp = VP_MLP_GELU_TANH;
        o.positions = VP_POSITIONS_ALIBI;
        o.embedding_norm = VP_EMBEDDING_NORM_LAYERNORM;
        o.tie_embeddings = 1;
    }
    return network_timer_run("bench_families", s->name, &cfg, &o, repeats, min_s, MAX_SECONDS, out);
}

static int time_torch(const char *python, const char *script, const shape *s, size_t threads,
                      int repeats, double min_s, const char *linear, network_timing *out,
                      peer_run *run)
{
    char args[512], more[600];
    shape_args(s, args, sizeof args);
    snprintf(more, sizeof more, "%s --norm-eps %g", args, NORM_EPS);
    return network_timer_peer("bench_families", python, script, more, threads, repeats, min_s,
                              MAX_SECONDS, linear, out, run);
}

/* A whole number 1 .. max, all of text, into *out: 1, or 0. */
static int count_arg(const char *text, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > max)
        return 0;
    *out = v;
    return 1;
}

typedef struct {
    const char *python, *script;
    int torch, onednn, repeats, only;
    size_t threads;
    double min_s;
} run_options;

/* 0, or 1 after printing the usage. */
static int parse(int argc, char **argv, run_options *r)
{
    long value = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-torch") == 0)
            r->torch = 0;
        else if (strcmp(argv[i], "--no-onednn") == 0)
            r->onednn = 0;
        else if (strcmp(argv[i], "--python") == 0 && i + 1 < argc)
            r->python = argv[++i];
        else if (strcmp(argv[i], "--script") == 0 && i + 1 < argc)
            r->script = argv[++i];
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc &&
                 count_arg(argv[i + 1], 1000000, &value))
            r->repeats = (int)value, i++;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc &&
                 count_arg(argv[i + 1], VP_MC_MAX_THREADS, &value))
            r->threads = (size_t)value, i++;
        else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc &&
                 count_arg(argv[i + 1], (long)N_SHAPES, &value))
            r->only = (int)value - 1, i++;
        else if (strcmp(argv[i], "--quick") == 0)
            r->repeats = 1, r->min_s = 0.02;
        else {
            fprintf(stderr,
                    "usage: %s [--no-torch] [--no-onednn] [--python PATH] [--script PATH] "
                    "[--repeats N] [--threads T] [--shape 1..%zu] [--quick]\n",
                    argv[0], N_SHAPES);
            return 1;
        }
    }
    return 0;
}

static void print_header(const run_options *r, vp_isa isa, double peak)
{
    printf("varprof families benchmark: fw_run_network, LayerNorm (eps %g), MHA, biases, "
           "--init torch, %zu thread%s, best of %d after a warm-up\n",
           NORM_EPS, r->threads, r->threads == 1 ? "" : "s", r->repeats);
    printf("  neox:  parallel, two norms: x + attn(LN1 x) + mlp(LN2 x); rotary on a share of "
           "each head (rotate-half); GELU (erf)\n"
           "  bloom: pre-norm; LayerNorm on the embedding; ALiBi slopes on the scores; "
           "tanh-GELU\n");
    printf("kernels in use: %s (VARPROF_ISA %s)\n", vp_isa_name(isa),
           getenv("VARPROF_ISA") ? getenv("VARPROF_ISA") : "unset");
    printf("FLOPs/pass = 2 n k m per matmul (n = B T; q, k, v, o, up, down) + causal "
           "attention's q k^T and p v\n"
           "            at B H T T hd each (half of 2 B H T T hd); norms, rotary, ALiBi, "
           "GELU, softmax, biases\n"
           "            not counted. Same count for PyTorch.\n");
    if (peak > 0)
        printf("single-core FMA peak (%s, independent FMAs on registers, best of %d): "
               "%.1f GFLOP/s\n",
               vp_isa_name(isa), REPEATS, peak);
    else
        printf("single-core FMA peak: not measured for %s\n", vp_isa_name(isa));
    if (r->torch)
        printf("PyTorch: %s %s, torch.set_num_threads(%zu), float32, eval, no_grad; "
               "\"stock\" = its own nn.Linear (its BLAS),\n"
               "         \"oneDNN\" = nn.Linear through torch.utils.mkldnn.to_mkldnn "
               "(informative; the targets use stock)\n",
               r->python, r->script, r->threads);
    else
        printf("PyTorch: skipped (--no-torch); the ratios are not measured\n");
}

typedef struct {
    network_timing vp[N_SHAPES], stock[N_SHAPES], dnn[N_SHAPES];
    int have_dnn[N_SHAPES];
    peer_run peer;
} timings;

/* Times every shape asked for: 0, or 1 when something failed. */
static int time_shapes(const run_options *r, timings *t)
{
    for (size_t si = 0; si < N_SHAPES; si++) {
        if (r->only >= 0 && (size_t)r->only != si)
            continue;
        const shape *s = &shapes[si];
        char args[512];
        shape_args(s, args, sizeof args);
        const double flops = pass_flops(s);
        printf("\n[%zu] %s: %s  (%.4g GFLOP/pass)\n", si + 1, s->name, args, flops * 1e-9);
        if (time_varprof(s, r->threads, r->repeats, r->min_s, &t->vp[si]) != 0)
            return 1;
        network_timing_print("varprof", &t->vp[si], flops);
        if (!r->torch)
            continue;
        if (time_torch(r->python, r->script, s, r->threads, r->repeats, r->min_s, "dense",
                       &t->stock[si], &t->peer) != 0)
            return 1;
        network_timing_print("PyTorch (stock)", &t->stock[si], flops);
        if (r->onednn) {
            if (time_torch(r->python, r->script, s, r->threads, r->repeats, r->min_s, "onednn",
                           &t->dnn[si], &t->peer) != 0)
                return 1;
            t->have_dnn[si] = 1;
            network_timing_print("PyTorch (oneDNN)", &t->dnn[si], flops);
        }
    }
    if (r->torch)
        printf("\nPyTorch %s, BLAS_INFO=%s (torch.__config__.show())\n", t->peer.torch,
               t->peer.blas);
    return 0;
}

static void print_shares(const run_options *r, const timings *t, vp_isa isa, double peak)
{
    printf("\nShare of the single-core FMA peak (%s, %.1f GFLOP/s, the better of the two):\n",
           vp_isa_name(isa), peak);
    for (size_t si = 0; si < N_SHAPES; si++) {
        if (r->only >= 0 && (size_t)r->only != si)
            continue;
        const double flops = pass_flops(&shapes[si]);
        printf("  [%zu] %-20s varprof %5.1f %%", si + 1, shapes[si].name,
               100.0 * network_timing_gflops(&t->vp[si], flops) / peak);
        if (r->torch)
            printf("   PyTorch stock %5.1f %%",
                   100.0 * network_timing_gflops(&t->stock[si], flops) / peak);
        if (t->have_dnn[si])
            printf("   PyTorch oneDNN %5.1f %%",
                   100.0 * network_timing_gflops(&t->dnn[si], flops) / peak);
        printf("\n");
    }
}

/* The bar (see the head of this file), and each peer's limit. */
static void print_targets(const run_options *r, const timings *t, vp_isa isa, double peak)
{
    printf("\nTargets (%zu thread%s; ratio = PyTorch ms / varprof ms; PASS needs >= %gx and "
           ">= %.0f %% of the FMA peak):\n",
           r->threads, r->threads == 1 ? "" : "s", TARGET_RATIO, 100.0 * TARGET_SHARE);
    for (size_t si = 0; si < N_SHAPES; si++) {
        if (r->only >= 0 && (size_t)r->only != si)
            continue;
        const shape *s = &shapes[si];
        const double flops = pass_flops(s);
        const double share = peak > 0 ? network_timing_gflops(&t->vp[si], flops) / peak : 0.0;
        const int share_ok = peak > 0 && share >= TARGET_SHARE;
        char share_text[64];
        if (peak > 0)
            snprintf(share_text, sizeof share_text, "%.1f %% of the FMA peak", 100.0 * share);
        else
            snprintf(share_text, sizeof share_text, "no FMA peak for %s", vp_isa_name(isa));
        if (!r->torch) {
            printf("  [%zu] %-20s vs PyTorch: not measured (--no-torch); %s\n", si + 1, s->name,
                   share_text);
            continue;
        }
        const double ratio = t->stock[si].ms / t->vp[si].ms;
        printf("  [%zu] %-20s vs PyTorch %s (stock): %8.2fx faster, %s  %s\n", si + 1, s->name,
               t->peer.torch, ratio, share_text, bench_verdict(ratio >= TARGET_RATIO && share_ok));
        if (peak > 0)
            printf("      %-20s limit set by stock PyTorch's speed: %.2fx (the FMA peak over "
                   "its GFLOP/s)\n",
                   "", peak / network_timing_gflops(&t->stock[si], flops));
        if (t->have_dnn[si]) {
            const double rd = t->dnn[si].ms / t->vp[si].ms;
            printf("      %-20s vs PyTorch with oneDNN linears: %8.2fx faster  (same bar, "
                   "informative)  %s\n",
                   "", rd, bench_verdict(rd >= TARGET_RATIO && share_ok));
        }
    }
}

int main(int argc, char **argv)
{
    run_options r = {.python = "/usr/bin/python3",
                     .script = "tests/bench/families_torch.py",
                     .torch = 1,
                     .onednn = 1,
                     .repeats = REPEATS,
                     .only = -1,
                     .threads = 1,
                     .min_s = MIN_SECONDS};
    if (parse(argc, argv, &r))
        return 1;
    const vp_isa isa = vp_isa_current();
    /* measured again at the end, the better of the two kept: a core shared
       for a moment must not make the peak */
    double peak = bench_fma_peak(isa);
    print_header(&r, isa, peak);
    static timings t = {.peer = {.torch = "?", .blas = "?"}};
    if (time_shapes(&r, &t))
        return 1;
    if (peak > 0) {
        const double peak_end = bench_fma_peak(isa);
        printf("\nFMA peak measured again at the end: %.1f GFLOP/s (start %.1f)%s\n", peak_end,
               peak,
               fabs(peak_end - peak) > 0.05 * (peak > peak_end ? peak : peak_end)
                   ? "; they differ by more than 5 %: the core was not the bench's "
                     "alone, the figures are noisy"
                   : "");
        peak = peak > peak_end ? peak : peak_end;
        print_shares(&r, &t, isa, peak);
    }
    print_targets(&r, &t, isa, peak);
    return 0;
}
