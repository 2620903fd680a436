/* Timing the forward pass's network as bench_forward, bench_arch and
 * bench_families do: built once (fw_model_alloc, fw_model_init, one
 * workspace, as a training loop makes them), then fw_run_network timed. */
#ifndef VARPROF_BENCH_NETWORK_TIMER_H
#define VARPROF_BENCH_NETWORK_TIMER_H

#include <stddef.h>

#include "peer_script.h"
#include "varprof/config.h"
#include "varprof/forward.h"

typedef struct {
    double ms;        /* a pass, the best repeat's mean */
    double final_rms; /* sqrt of the last sub-block's stream variance; NAN if it stopped */
    int repeats, passes;
} network_timing;

/* Times the network of cfg and o on tokens drawn below o->vocab by a fixed
 * generator (the same draws for the same sizes): an untimed warm-up (a
 * second when the first is short, to size the repeats on), passes that
 * fill min_s a repeat, the best of up to `repeats` within max_s. 0, or -1
 * after saying why on stderr, `who: name:` first. */
int network_timer_run(const char *who, const char *name, const vp_config *cfg,
                      const vp_forward_options *o, int repeats, double min_s, double max_s,
                      network_timing *out);

/* The peer script's timing of the same network (peer_script_run, the args
 * its shape's options), with its final stream RMS; the torch version and
 * BLAS into run. 0, or -1 after saying why on stderr. */
int network_timer_peer(const char *who, const char *python, const char *script, const char *args,
                       size_t threads, int repeats, double min_s, double max_s, const char *linear,
                       network_timing *out, peer_run *run);

/* GFLOP/s of a pass of `flops` at t's time. */
double network_timing_gflops(const network_timing *t, double flops);

/* One line: who, ms a pass, GFLOP/s, the final stream RMS, repeats and
 * passes. */
void network_timing_print(const char *who, const network_timing *t, double flops);

/* "PASS" or "MISS". */
const char *bench_verdict(int ok);

#endif
