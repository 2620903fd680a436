/* `make bench`: the Monte Carlo engine's speed on one thread, against a NumPy
 * implementation of the same model (tests/bench/mc_numpy.py) measured in the
 * same run, with issue 4's targets. See tests/bench/README.md.
 *
 * Usage: bench_mc [--no-numpy] [--python PATH] [--script PATH] [--repeats N]
 *
 * Prints PASS/MISS per target and exits 0 either way; exits 1 only when
 * something fails (the engine, the NumPy script, a bad argument). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "varprof/config.h"
#include "varprof/gauss.h"
#include "varprof/isa.h"
#include "varprof/mc.h"
#include "varprof/placement.h"
#include "varprof/profile.h"

/* The sizes and targets. */
enum { TOKENS = 1000, LAYERS = 32, WIDTH = 512, SMALL_WIDTH = 64, LARGE_WIDTH = 65536 };
#define TARGET_FULL 8.0         /* full at least 8x faster than NumPy */
#define TARGET_REDUCED 100.0    /* reduced at least 100x faster */
#define TARGET_WIDTH_GROWTH 1.5 /* reduced at d = 65536 within 1.5x of d = 64 */

/* The generator alone: ~10^7 draws, in calls of one d = 512 token's worth,
 * as the full method makes them (the buffer stays in L1). */
#define GAUSS_CHUNK 512
#define GAUSS_CALLS 19532 /* 19532 * 512 = 10,000,384 draws */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    double best_s;       /* best wall time of the repeats */
    double ns_per_coord; /* per token per sub-block per coordinate */
    double final_var;    /* mean |x_K|^2 / d, a check on the model */
} timing;

/* Best of `repeats` runs of vp_mc_profile, pre-norm, LayerNorm, one thread.
 * Returns 0, or -1 with a message on stderr. */
static int time_mc(vp_mc_method method, size_t width, int repeats, timing *out)
{
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, LAYERS);
    vp_mc_options opt;
    vp_mc_options_init(&opt);
    opt.width = width;
    opt.trials = TOKENS;
    opt.threads = 1;
    opt.norm = VP_NORM_LAYERNORM;
    opt.eps = 1e-5;
    opt.method = method;
    const size_t k_total = vp_sub_block_count(cfg.placement, cfg.layers);
    out->best_s = 1e300;
    for (int r = 0; r < repeats + 1; r++) { /* run 0 warms up, untimed */
        vp_profile *profile = NULL;
        vp_error err = {0};
        double t0 = now();
        vp_status status = vp_mc_profile(&cfg, &opt, &profile, &err);
        double t = now() - t0;
        if (status != VP_OK) {
            fprintf(stderr, "bench_mc: vp_mc_profile (%s, d = %zu): %s\n",
                    vp_mc_method_name(method), width, err.message);
            return -1;
        }
        out->final_var = profile->n_rows > k_total ? profile->rows[k_total].stream_var : -1.0;
        vp_profile_free(profile);
        if (r > 0 && t < out->best_s)
            out->best_s = t;
    }
    out->ns_per_coord = out->best_s * 1e9 / ((double)TOKENS * (double)k_total * (double)width);
    return 0;
}

/* ns per draw of the generator through one variant, best of `repeats`. */
static double time_gauss(vp_isa isa, float *buf, int repeats)
{
    double best = 1e300;
    volatile float sink = 0.0f;
    for (int r = 0; r < repeats + 1; r++) {
        double t0 = now();
        for (uint32_t c = 0; c < GAUSS_CALLS; c++)
            vp_gauss_fill_with(isa, buf, GAUSS_CHUNK, 1, c, (uint32_t)r, 0);
        double t = now() - t0;
        sink = sink + buf[GAUSS_CHUNK - 1];
        if (r > 0 && t < best)
            best = t;
    }
    return best * 1e9 / ((double)GAUSS_CALLS * GAUSS_CHUNK);
}

/* Runs the NumPy script at d = WIDTH and reads its JSON line. */
static int run_numpy(const char *python, const char *script, int repeats, timing *out)
{
    char cmd[2048];
    int n = snprintf(cmd, sizeof cmd,
                     "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 '%s' '%s' --width %d "
                     "--tokens %d --layers %d --repeats %d",
                     python, script, WIDTH, TOKENS, LAYERS, repeats);
    if (n < 0 || (size_t)n >= sizeof cmd || strchr(python, '\'') || strchr(script, '\'')) {
        fprintf(stderr, "bench_mc: bad --python or --script path\n");
        return -1;
    }
    printf("  running: %s\n", cmd);
    fflush(stdout);
    FILE *p = popen(cmd, "r");
    if (!p) {
        perror("bench_mc: popen");
        return -1;
    }
    char line[4096] = "";
    char *got = fgets(line, sizeof line, p);
    int rc = pclose(p);
    if (!got || rc != 0) {
        fprintf(stderr, "bench_mc: the NumPy script failed (exit status %d)\n", rc);
        return -1;
    }
    cJSON *json = cJSON_Parse(line);
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(json, "best_s");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(json, "ns_per_coord");
    const cJSON *var = cJSON_GetObjectItemCaseSensitive(json, "final_stream_var");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(json, "numpy");
    if (!cJSON_IsNumber(best) || !cJSON_IsNumber(ns) || !cJSON_IsNumber(var)) {
        fprintf(stderr, "bench_mc: cannot read the NumPy script's output: %s", line);
        cJSON_Delete(json);
        return -1;
    }
    out->best_s = best->valuedouble;
    out->ns_per_coord = ns->valuedouble;
    out->final_var = var->valuedouble;
    printf("  numpy %s\n", cJSON_IsString(ver) ? ver->valuestring : "?");
    cJSON_Delete(json);
    return 0;
}

static const char *verdict(int ok)
{
    return ok ? "PASS" : "MISS";
}

static void print_row(const char *what, size_t width, const timing *t)
{
    printf("  %-22s d = %-6zu %10.3f ms   %8.4f ns/coord   final stream var %.3f\n", what, width,
           t->best_s * 1e3, t->ns_per_coord, t->final_var);
}

int main(int argc, char **argv)
{
    const char *python = "/usr/bin/python3", *script = "tests/bench/mc_numpy.py";
    int numpy = 1, repeats = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-numpy") == 0)
            numpy = 0;
        else if (strcmp(argv[i], "--python") == 0 && i + 1 < argc)
            python = argv[++i];
        else if (strcmp(argv[i], "--script") == 0 && i + 1 < argc)
            script = argv[++i];
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1)
            repeats = atoi(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: %s [--no-numpy] [--python PATH] [--script PATH] "
                    "[--repeats N]\n",
                    argv[0]);
            return 1;
        }
    }

    const size_t k_total = vp_sub_block_count(VP_PRE_NORM, LAYERS);
    printf("varprof Monte Carlo benchmark: pre-norm, LayerNorm (eps 1e-5), gain 1, "
           "%d tokens, %d layers (%zu sub-blocks), 1 thread, best of %d\n",
           TOKENS, LAYERS, k_total, repeats);
    printf("Gaussian generator in use: %s (VARPROF_ISA %s)\n", vp_isa_name(vp_isa_current()),
           getenv("VARPROF_ISA") ? getenv("VARPROF_ISA") : "unset");
    printf("ns/coord = time / (tokens x sub-blocks x d); expected final stream var ~ %zu\n\n",
           k_total + 1);

    printf("Gaussian generator alone (%d calls of %d draws):\n", GAUSS_CALLS, GAUSS_CHUNK);
    float *buf = aligned_alloc(64, GAUSS_CHUNK * sizeof(float));
    if (!buf) {
        fprintf(stderr, "bench_mc: out of memory\n");
        return 1;
    }
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa)) {
            printf("  %-8s not supported on this CPU\n", vp_isa_name((vp_isa)isa));
            continue;
        }
        printf("  %-8s %8.3f ns/draw\n", vp_isa_name((vp_isa)isa),
               time_gauss((vp_isa)isa, buf, repeats));
    }
    free(buf);

    printf("\nvp_mc_profile:\n");
    timing full, reduced, small, large;
    if (time_mc(VP_MC_FULL, WIDTH, repeats, &full) != 0)
        return 1;
    print_row("(a) full", WIDTH, &full);
    if (time_mc(VP_MC_REDUCED, WIDTH, repeats, &reduced) != 0)
        return 1;
    print_row("(b) reduced", WIDTH, &reduced);
    if (time_mc(VP_MC_REDUCED, SMALL_WIDTH, repeats, &small) != 0)
        return 1;
    print_row("(c) reduced", SMALL_WIDTH, &small);
    if (time_mc(VP_MC_REDUCED, LARGE_WIDTH, repeats, &large) != 0)
        return 1;
    print_row("(c) reduced", LARGE_WIDTH, &large);

    timing np = {0};
    printf("\nNumPy (tests/bench/mc_numpy.py, same model and sizes):\n");
    if (numpy) {
        if (run_numpy(python, script, repeats < 5 ? repeats : 5, &np) != 0)
            return 1;
        print_row("numpy", WIDTH, &np);
    } else {
        printf("  skipped: numpy not available (install python3-numpy); "
               "the ratios against NumPy are not measured\n");
    }

    printf("\nTargets (issue 4, item 5):\n");
    if (numpy) {
        double r_full = np.best_s / full.best_s, r_red = np.best_s / reduced.best_s;
        printf("  full    vs NumPy, d = %d: %7.2fx faster  (target >= %gx)   %s\n", WIDTH, r_full,
               TARGET_FULL, verdict(r_full >= TARGET_FULL));
        printf("  reduced vs NumPy, d = %d: %7.2fx faster  (target >= %gx)  %s\n", WIDTH, r_red,
               TARGET_REDUCED, verdict(r_red >= TARGET_REDUCED));
    } else {
        printf("  full    vs NumPy: not measured (no numpy)\n");
        printf("  reduced vs NumPy: not measured (no numpy)\n");
    }
    double growth = large.best_s / small.best_s;
    printf("  reduced, time at d = %d / time at d = %d: %5.2fx  (target <= %gx)    %s\n",
           LARGE_WIDTH, SMALL_WIDTH, growth, TARGET_WIDTH_GROWTH,
           verdict(growth <= TARGET_WIDTH_GROWTH));
    return 0;
}
