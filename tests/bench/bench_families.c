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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_shapes.h"
#include "fma_peak.h"
#include "network_timer.h"
#include "peer_script.h"
#include "varprof/config.h"
#include "varprof/forward.h"
#include "varprof/isa.h"
#include "varprof/placement.h"

#define MIN_SECONDS 0.2   /* per repeat, at least */
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
static void shape_args(size_t si, char *buf, size_t size)
{
    const shape *s = &shapes[si];
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

static double pass_flops(size_t si)
{
    const shape *s = &shapes[si];
    const double n = (double)(s->batch * s->tokens), d = (double)s->width;
    const double hd = d / (double)s->heads, T = (double)s->tokens;
    double per_layer = 2.0 * (2.0 * n * d * (double)s->ffn_width);         /* up, down */
    per_layer += 4.0 * (2.0 * n * d * d);                                  /* q, k, v, o */
    per_layer += 2.0 * ((double)s->batch * (double)s->heads * T * T * hd); /* causal halves */
    return (double)s->layers * per_layer;
}

/* Builds the network once, then times fw_run_network. 0, or -1 with a
 * message on stderr. */
static int time_varprof(size_t si, const bench_options *r, network_timing *out)
{
    const shape *s = &shapes[si];
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
    o.threads = r->threads;
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
    return network_timer_run("bench_families", s->name, &cfg, &o, r->repeats, r->min_s, r->max_s,
                             out);
}

static void print_header(const bench_options *r, vp_isa isa, double peak)
{
    printf("varprof families benchmark: fw_run_network, LayerNorm (eps %g), MHA, biases, "
           "--init torch, %zu thread%s, best of %d after a warm-up\n",
           NORM_EPS, r->threads, r->threads == 1 ? "" : "s", r->repeats);
    printf("  neox:  parallel, two norms: x + attn(LN1 x) + mlp(LN2 x); rotary on a share of "
           "each head (rotate-half); GELU (erf)\n"
           "  bloom: pre-norm; LayerNorm on the embedding; ALiBi slopes on the scores; "
           "tanh-GELU\n");
    bench_print_kernels(isa);
    printf("FLOPs/pass = 2 n k m per matmul (n = B T; q, k, v, o, up, down) + causal "
           "attention's q k^T and p v\n"
           "            at B H T T hd each (half of 2 B H T T hd); norms, rotary, ALiBi, "
           "GELU, softmax, biases\n"
           "            not counted. Same count for PyTorch.\n");
    bench_print_peak_and_peer(r, isa, peak, REPEATS);
}

static const char *shape_name(size_t si)
{
    return shapes[si].name;
}

int main(int argc, char **argv)
{
    bench_options r;
    bench_options_init(&r, "tests/bench/families_torch.py", REPEATS, MIN_SECONDS);
    if (bench_options_parse(argc, argv, N_SHAPES, &r))
        return 1;
    char eps[64];
    snprintf(eps, sizeof eps, "--norm-eps %g", NORM_EPS);
    const bench_shapes b = {"bench_families", N_SHAPES,   20,         eps,
                            shape_name,       shape_args, pass_flops, time_varprof};
    const vp_isa isa = vp_isa_current();
    /* measured again at the end, the better of the two kept: a core shared
       for a moment must not make the peak */
    double peak = bench_fma_peak(isa);
    print_header(&r, isa, peak);
    static bench_timing t[N_SHAPES];
    peer_run peer = {.torch = "?", .blas = "?"};
    if (bench_time_shapes(&b, &r, t, &peer))
        return 1;
    if (peak > 0) {
        peak = bench_peak_again(isa, peak);
        bench_print_shares(&b, &r, t, isa, peak);
    }
    bench_print_share_bar(&b, &r, t, &peer, isa, peak, TARGET_RATIO, TARGET_SHARE, 1);
    return 0;
}
