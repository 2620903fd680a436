/* The forward pass's network, timed (network_timer.h). */
#include "network_timer.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fma_peak.h"
#include "forward/network.h"
#include "forward/workspace.h"
#include "varprof/profile.h"

/* The token ids: a small LCG, the same draws in every run */
static void draw_ids(uint32_t *ids, size_t n, size_t vocab)
{
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        ids[i] = (uint32_t)(((state >> 32) * (uint64_t)vocab) >> 32);
    }
}

int network_timer_run(const char *who, const char *name, const vp_config *cfg,
                      const vp_forward_options *o, int repeats, double min_s, double max_s,
                      network_timing *out)
{
    vp_error err = {0};
    if (vp_forward_check(cfg, o, &err) != VP_OK) {
        fprintf(stderr, "%s: %s: %s\n", who, name, err.message);
        return -1;
    }
    /* stored, as PyTorch's: the bench times passes, not the drawing */
    vp_forward_options stored = *o;
    stored.stored_weights = 1;
    fw_model *m = fw_model_alloc(cfg, &stored, kern_current());
    const size_t n = o->batch * o->tokens;
    uint32_t *ids = malloc(n * sizeof *ids);
    vp_profile *profile = vp_profile_alloc(vp_config_sub_blocks(cfg));
    fw_workspace *ws = NULL;
    int rc = -1;
    if (!m || !ids || !profile) {
        fprintf(stderr, "%s: %s: out of memory\n", who, name);
        goto done;
    }
    if (fw_model_init(m, cfg, o, &err) != VP_OK) {
        fprintf(stderr, "%s: %s: fw_model_init: %s\n", who, name, err.message);
        goto done;
    }
    /* made once, as a training loop makes it: no pass allocates */
    if (fw_workspace_create(m, o->batch, o->tokens, o->threads, &ws, &err) != VP_OK) {
        fprintf(stderr, "%s: %s: fw_workspace_create: %s\n", who, name, err.message);
        goto done;
    }
    draw_ids(ids, n, o->vocab);
    double warm = 0.0;
    for (int w = 0; w < 2; w++) { /* warm-up, then a pass to size the repeats on */
        const double t0 = bench_now();
        if (fw_run_network(m, cfg, o, ids, profile, ws, &err) != VP_OK) {
            fprintf(stderr, "%s: %s: fw_run_network: %s\n", who, name, err.message);
            goto done;
        }
        warm = bench_now() - t0;
        if (warm >= 1.0)
            break;
    }
    int passes = (int)ceil(min_s / (warm > 1e-9 ? warm : 1e-9));
    passes = passes < 1 ? 1 : passes;
    int reps = (int)(max_s / (passes * warm));
    reps = reps < 1 ? 1 : reps > repeats ? repeats : reps;
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        const double t0 = bench_now();
        for (int p = 0; p < passes; p++)
            (void)fw_run_network(m, cfg, o, ids, profile, ws, &err); /* ran once above */
        const double t = (bench_now() - t0) / passes;
        best = t < best ? t : best;
    }
    out->ms = best * 1e3;
    out->final_rms = profile->n_rows == profile->sub_blocks + 1
                         ? sqrt(profile->rows[profile->sub_blocks].stream_var)
                         : NAN;
    out->repeats = reps;
    out->passes = passes;
    rc = 0;
done:
    fw_workspace_free(ws);
    fw_model_free(m);
    free(ids);
    vp_profile_free(profile);
    return rc;
}

int network_timer_peer(const char *who, const char *python, const char *script, const char *args,
                       size_t threads, int repeats, double min_s, double max_s, const char *linear,
                       network_timing *out, peer_run *run)
{
    cJSON *json = peer_script_run(who, python, script, args, threads, repeats, min_s, (int)max_s,
                                  linear, run);
    if (!json)
        return -1;
    int ok = 1;
    out->final_rms = peer_number(json, "final_stream_rms", &ok);
    cJSON_Delete(json);
    if (!ok) {
        fprintf(stderr, "%s: the PyTorch script gave no final_stream_rms\n", who);
        return -1;
    }
    out->ms = run->ms;
    out->repeats = run->repeats;
    out->passes = run->passes;
    return 0;
}

double network_timing_gflops(const network_timing *t, double flops)
{
    return flops / (t->ms * 1e-3) * 1e-9;
}

void network_timing_print(const char *who, const network_timing *t, double flops)
{
    printf("  %-17s %11.3f ms/pass %9.1f GFLOP/s   final stream rms %.4f   (best of %d x %d "
           "pass%s)\n",
           who, t->ms, network_timing_gflops(t, flops), t->final_rms, t->repeats, t->passes,
           t->passes == 1 ? "" : "es");
}

const char *bench_verdict(int ok)
{
    return ok ? "PASS" : "MISS";
}
