/* What bench_forward, bench_arch and bench_families share beyond the timer
 * (network_timer.h): their options, the loop that times each shape on
 * varprof and on the PyTorch peer (stock and oneDNN linears), and the
 * header, share-of-the-peak and target lines. Each bench keeps its shapes,
 * its FLOP count and how it builds varprof's network, as callbacks. */
#ifndef VARPROF_BENCH_SHAPES_H
#define VARPROF_BENCH_SHAPES_H

#include <stddef.h>

#include "network_timer.h"
#include "peer_script.h"
#include "varprof/isa.h"

typedef struct {
    const char *python, *script;
    int torch, onednn; /* run the peer; also with oneDNN linears */
    int repeats;       /* best of */
    int only;          /* the one shape's index, or -1 for all */
    size_t threads;
    double min_s; /* a repeat's seconds, at least */
    double max_s; /* the timed repeats of one shape in all, about */
} bench_options;

/* The defaults: script under /usr/bin/python3, stock and oneDNN, every
 * shape, one thread, 30 s of repeats a shape at most. */
void bench_options_init(bench_options *r, const char *script, int repeats, double min_s);

/* --no-torch, --no-onednn, --python PATH, --script PATH, --repeats N,
 * --threads T (1 .. VP_MC_MAX_THREADS), --shape 1..n_shapes, --quick (one
 * repeat of 0.02 s) into r: 0, or 1 after printing the usage on stderr. */
int bench_options_parse(int argc, char **argv, size_t n_shapes, bench_options *r);

/* A bench's shapes, by index. */
typedef struct {
    const char *who; /* "bench_arch": the first word of its messages */
    size_t n_shapes;
    int name_width;        /* the names' column in the summaries */
    const char *peer_more; /* the peer's options after the shape's, or "" */
    const char *(*name)(size_t si);
    void (*args)(size_t si, char *buf, size_t size); /* the shape as the peer's options */
    double (*flops)(size_t si);                      /* a pass's */
    int (*time_varprof)(size_t si, const bench_options *r, network_timing *out); /* 0, or -1 */
} bench_shapes;

typedef struct {
    network_timing vp, stock, dnn;
    int have_dnn;
} bench_timing;

/* "kernels in use: ISA (VARPROF_ISA ...)". */
void bench_print_kernels(vp_isa isa);

/* The FMA peak's line (best of peak_best_of) and the peer's. */
void bench_print_peak_and_peer(const bench_options *r, vp_isa isa, double peak, int peak_best_of);

/* Times each shape r asks for into t[si], a line per side, then the peer's
 * torch and BLAS: 0, or 1 when a side failed (it said why on stderr). */
int bench_time_shapes(const bench_shapes *b, const bench_options *r, bench_timing *t,
                      peer_run *peer);

/* Measures the peak again and says when the two differ by more than 5 %
 * (the core was shared); the better of the two. Only when peak > 0. */
double bench_peak_again(vp_isa isa, double peak);

/* Each shape's share of the peak (> 0), varprof's and the peer's. */
void bench_print_shares(const bench_shapes *b, const bench_options *r, const bench_timing *t,
                        vp_isa isa, double peak);

/* The bar of bench_arch and bench_families: PASS when varprof is at least
 * ratio times faster than stock PyTorch and runs at least share of the
 * peak; with peer_limit, the limit stock PyTorch's speed sets. */
void bench_print_share_bar(const bench_shapes *b, const bench_options *r, const bench_timing *t,
                           const peer_run *peer, vp_isa isa, double peak, double ratio,
                           double share, int peer_limit);

#endif
