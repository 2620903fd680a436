/* The options, shape loop and summary lines of the PyTorch-peer benches. */
#include "bench_shapes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fma_peak.h"
#include "varprof/mc.h"

void bench_options_init(bench_options *r, const char *script, int repeats, double min_s)
{
    *r = (bench_options){.python = "/usr/bin/python3",
                         .script = script,
                         .torch = 1,
                         .onednn = 1,
                         .repeats = repeats,
                         .only = -1,
                         .threads = 1,
                         .min_s = min_s,
                         .max_s = 30};
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

int bench_options_parse(int argc, char **argv, size_t n_shapes, bench_options *r)
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
                 count_arg(argv[i + 1], (long)n_shapes, &value))
            r->only = (int)value - 1, i++;
        else if (strcmp(argv[i], "--quick") == 0)
            r->repeats = 1, r->min_s = 0.02;
        else {
            fprintf(stderr,
                    "usage: %s [--no-torch] [--no-onednn] [--python PATH] [--script PATH] "
                    "[--repeats N] [--threads T] [--shape 1..%zu] [--quick]\n",
                    argv[0], n_shapes);
            return 1;
        }
    }
    return 0;
}

void bench_print_kernels(vp_isa isa)
{
    printf("kernels in use: %s (VARPROF_ISA %s)\n", vp_isa_name(isa),
           getenv("VARPROF_ISA") ? getenv("VARPROF_ISA") : "unset");
}

void bench_print_peak_and_peer(const bench_options *r, vp_isa isa, double peak, int peak_best_of)
{
    if (peak > 0)
        printf("single-core FMA peak (%s, independent FMAs on registers, best of %d): "
               "%.1f GFLOP/s\n",
               vp_isa_name(isa), peak_best_of, peak);
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

/* The peer on shape si with linear "dense" or "onednn": 0, or -1. */
static int time_peer(const bench_shapes *b, const bench_options *r, size_t si, const char *linear,
                     network_timing *out, peer_run *peer)
{
    char args[512], all[1024];
    b->args(si, args, sizeof args);
    snprintf(all, sizeof all, "%s%s%s", args, *b->peer_more ? " " : "", b->peer_more);
    return network_timer_peer(b->who, r->python, r->script, all, r->threads, r->repeats, r->min_s,
                              r->max_s, linear, out, peer);
}

int bench_time_shapes(const bench_shapes *b, const bench_options *r, bench_timing *t,
                      peer_run *peer)
{
    for (size_t si = 0; si < b->n_shapes; si++) {
        if (r->only >= 0 && (size_t)r->only != si)
            continue;
        char args[512];
        b->args(si, args, sizeof args);
        const double flops = b->flops(si);
        printf("\n[%zu] %s: %s  (%.4g GFLOP/pass)\n", si + 1, b->name(si), args, flops * 1e-9);
        if (b->time_varprof(si, r, &t[si].vp) != 0)
            return 1;
        network_timing_print("varprof", &t[si].vp, flops);
        if (!r->torch)
            continue;
        if (time_peer(b, r, si, "dense", &t[si].stock, peer) != 0)
            return 1;
        network_timing_print("PyTorch (stock)", &t[si].stock, flops);
        if (r->onednn) {
            if (time_peer(b, r, si, "onednn", &t[si].dnn, peer) != 0)
                return 1;
            t[si].have_dnn = 1;
            network_timing_print("PyTorch (oneDNN)", &t[si].dnn, flops);
        }
    }
    if (r->torch) /* the peer's BLAS: an optimised one, or the ratios flatter varprof */
        printf("\nPyTorch %s, BLAS_INFO=%s (torch.__config__.show())\n", peer->torch, peer->blas);
    return 0;
}

double bench_peak_again(vp_isa isa, double peak)
{
    const double peak_end = bench_fma_peak(isa);
    printf("\nFMA peak measured again at the end: %.1f GFLOP/s (start %.1f)%s\n", peak_end, peak,
           fabs(peak_end - peak) > 0.05 * (peak > peak_end ? peak : peak_end)
               ? "; they differ by more than 5 %: the core was not the bench's "
                 "alone, the figures are noisy"
               : "");
    return peak > peak_end ? peak : peak_end;
}

void bench_print_shares(const bench_shapes *b, const bench_options *r, const bench_timing *t,
                        vp_isa isa, double peak)
{
    printf("\nShare of the single-core FMA peak (%s, %.1f GFLOP/s, the better of the two):\n",
           vp_isa_name(isa), peak);
    for (size_t si = 0; si < b->n_shapes; si++) {
        if (r->only >= 0 && (size_t)r->only != si)
            continue;
        const double flops = b->flops(si);
        printf("  [%zu] %-*s varprof %5.1f %%", si + 1, b->name_width, b->name(si),
               100.0 * network_timing_gflops(&t[si].vp, flops) / peak);
        if (r->torch)
            printf("   PyTorch stock %5.1f %%",
                   100.0 * network_timing_gflops(&t[si].stock, flops) / peak);
        if (t[si].have_dnn)
            printf("   PyTorch oneDNN %5.1f %%",
                   100.0 * network_timing_gflops(&t[si].dnn, flops) / peak);
        printf("\n");
    }
}

/* One shape's bar line(s); share_text says its share of the peak. */
static void print_bar_shape(const bench_shapes *b, const bench_timing *t, size_t si,
                            const peer_run *peer, double peak, double ratio, int share_ok,
                            const char *share_text, int peer_limit)
{
    const int w = b->name_width;
    const double r = t->stock.ms / t->vp.ms;
    printf("  [%zu] %-*s vs PyTorch %s (stock): %8.2fx faster, %s  %s\n", si + 1, w, b->name(si),
           peer->torch, r, share_text, bench_verdict(r >= ratio && share_ok));
    if (peer_limit && peak > 0)
        printf("      %-*s limit set by stock PyTorch's speed: %.2fx (the FMA peak over "
               "its GFLOP/s)\n",
               w, "", peak / network_timing_gflops(&t->stock, b->flops(si)));
    if (t->have_dnn) {
        const double rd = t->dnn.ms / t->vp.ms;
        printf("      %-*s vs PyTorch with oneDNN linears: %8.2fx faster  (same bar, "
               "informative)  %s\n",
               w, "", rd, bench_verdict(rd >= ratio && share_ok));
    }
}

void bench_print_share_bar(const bench_shapes *b, const bench_options *r, const bench_timing *t,
                           const peer_run *peer, vp_isa isa, double peak, double ratio,
                           double share, int peer_limit)
{
    printf("\nTargets (%zu thread%s; ratio = PyTorch ms / varprof ms; PASS needs >= %gx and "
           ">= %.0f %% of the FMA peak):\n",
           r->threads, r->threads == 1 ? "" : "s", ratio, 100.0 * share);
    for (size_t si = 0; si < b->n_shapes; si++) {
        if (r->only >= 0 && (size_t)r->only != si)
            continue;
        const double got = peak > 0 ? network_timing_gflops(&t[si].vp, b->flops(si)) / peak : 0.0;
        char share_text[64];
        if (peak > 0)
            snprintf(share_text, sizeof share_text, "%.1f %% of the FMA peak", 100.0 * got);
        else
            snprintf(share_text, sizeof share_text, "no FMA peak for %s", vp_isa_name(isa));
        if (!r->torch)
            printf("  [%zu] %-*s vs PyTorch: not measured (--no-torch); %s\n", si + 1,
                   b->name_width, b->name(si), share_text);
        else
            print_bar_shape(b, &t[si], si, peer, peak, ratio, peak > 0 && got >= share, share_text,
                            peer_limit);
    }
}
