/* The scaling a measured network must show (issue 13, "Checks that must
 * hold"): the real forward and backward pass, --init gain, d = 256, the
 * random loss, 6 seeds, a small batch so that it takes seconds.
 *
 *  - Post-LN's last-layer weight gradient is flat in depth, L = 6..48,
 *    within +-10 % (Xiong et al. 2020, Theorem 1: O(1) in L).
 *  - Pre-norm with a final norm: the last layer's weight gradient falls as
 *    1/sqrt(v_L), v_L the stream's variance at the top: weight_grad_K
 *    sqrt(v_K) is the same at every depth within 10 %.
 *  - With attention, Post-LN's first layer's weight gradient is attenuated
 *    relative to its last, which the idealisation (flat) misses: the tool
 *    shows it. */
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

#define SEEDS 6
#define MOST_ROWS 200

/* The column called name in a CSV header line, or -1. */
static int column_of(const char *header, const char *name)
{
    const size_t len = strlen(name);
    int col = 0;
    for (const char *p = header; *p && *p != '\n'; col++) {
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\n' || p[len] == '\0'))
            return col;
        while (*p && *p != ',' && *p != '\n')
            p++;
        if (*p == ',')
            p++;
    }
    return -1;
}

/* The cell in column col of the line at p, as a number (NAN when empty). */
static double cell_of(const char *p, int col)
{
    for (int c = 0; c < col && p; c++) {
        p = strpbrk(p, ",\n");
        if (!p || *p == '\n')
            return NAN;
        p++;
    }
    if (!p || *p == ',' || *p == '\n' || *p == '\0')
        return NAN;
    return strtod(p, NULL);
}

typedef struct {
    double stream_var[MOST_ROWS], grad_var[MOST_ROWS], weight_grad[MOST_ROWS];
    size_t rows; /* K + 1 */
} figures;

/* One run of the network: the placement, layers, MLP-only or not, a seed. */
static figures run_network(const char *placement, int layers, int mlp_only, int seed)
{
    char l[16], s[16];
    snprintf(l, sizeof l, "%d", layers);
    snprintf(s, sizeof s, "%d", seed);
    const char *args[40] = {"--engine", "forward", "--init",  "gain",   "--width", "256",
                            "--layers", l,         "--seed",  s,        "--placement", placement,
                            "--grad",   "--loss",  "random",  "--batch", "2",      "--tokens",
                            "16",       "--threads", "1",     "--format", "csv"};
    size_t n = 23;
    if (mlp_only) {
        args[n++] = "--block";
        args[n++] = "mlp";
    } else {
        args[n++] = "--heads";
        args[n++] = "4";
    }
    args[n] = NULL;
    program_run run = run_varprof(args);
    if (run.status != 0) {
        print_error("varprof --placement %s --layers %d --seed %d: exit %d: %s", placement, layers,
                    seed, run.status, run.err);
        fail();
    }
    figures f;
    memset(&f, 0, sizeof f);
    const int c_k = column_of(run.out, "sub_block"), c_v = column_of(run.out, "stream_var"),
              c_g = column_of(run.out, "grad_var"), c_w = column_of(run.out, "weight_grad");
    assert_true(c_k >= 0 && c_v >= 0 && c_g >= 0 && c_w >= 0);
    for (const char *line = strchr(run.out, '\n'); line && line[1];
         line = strchr(line + 1, '\n')) {
        const double k = cell_of(line + 1, c_k);
        if (!(k >= 0 && k < MOST_ROWS))
            continue;
        f.stream_var[(size_t)k] = cell_of(line + 1, c_v);
        f.grad_var[(size_t)k] = cell_of(line + 1, c_g);
        f.weight_grad[(size_t)k] = cell_of(line + 1, c_w);
        f.rows = (size_t)k + 1 > f.rows ? (size_t)k + 1 : f.rows;
    }
    assert_int_equal(f.rows, (size_t)(mlp_only ? layers : 2 * layers) + 1);
    program_run_free(&run);
    return f;
}

static const int depths[] = {6, 12, 24, 48};
#define N_DEPTHS (sizeof depths / sizeof depths[0])

/* Post-LN's top weight gradient, the mean over 6 seeds at each depth:
   within +-10 % of its mean over the depths. */
static void post_ln_top_weight_grad_is_flat_in_depth(void **state)
{
    (void)state;
    double top[N_DEPTHS], mean = 0.0;
    for (size_t i = 0; i < N_DEPTHS; i++) {
        top[i] = 0.0;
        for (int seed = 1; seed <= SEEDS; seed++) {
            const figures f = run_network("post-ln", depths[i], 1, seed);
            top[i] += f.weight_grad[f.rows - 1] / SEEDS;
        }
        mean += top[i] / N_DEPTHS;
    }
    for (size_t i = 0; i < N_DEPTHS; i++) {
        print_message("  post-ln L = %2d: top weight_grad %.5g (%+.1f %% of the mean over L)\n",
                      depths[i], top[i], 100.0 * (top[i] / mean - 1.0));
        assert_true(fabs(top[i] / mean - 1.0) <= 0.10);
    }
}

/* Pre-norm with a final norm: weight_grad_K sqrt(v_K), the mean over 6
   seeds at each depth, within 10 % of its mean over the depths; and the top
   weight gradient itself falls from L = 6 to L = 48. */
static void pre_norm_top_weight_grad_falls_as_one_over_sqrt_v(void **state)
{
    (void)state;
    double scaled[N_DEPTHS], top[N_DEPTHS], v[N_DEPTHS], mean = 0.0;
    for (size_t i = 0; i < N_DEPTHS; i++) {
        scaled[i] = top[i] = v[i] = 0.0;
        for (int seed = 1; seed <= SEEDS; seed++) {
            const figures f = run_network("pre-norm", depths[i], 1, seed);
            const size_t K = f.rows - 1;
            top[i] += f.weight_grad[K] / SEEDS;
            v[i] += f.stream_var[K] / SEEDS;
            scaled[i] += f.weight_grad[K] * sqrt(f.stream_var[K]) / SEEDS;
        }
        mean += scaled[i] / N_DEPTHS;
    }
    for (size_t i = 0; i < N_DEPTHS; i++) {
        print_message("  pre-norm L = %2d: v_L %.4g, top weight_grad %.5g, x sqrt(v_L) %.5g "
                      "(%+.1f %% of the mean over L)\n",
                      depths[i], v[i], top[i], scaled[i], 100.0 * (scaled[i] / mean - 1.0));
        assert_true(fabs(scaled[i] / mean - 1.0) <= 0.10);
    }
    assert_true(top[N_DEPTHS - 1] < top[0]);
}

/* With attention, Post-LN: the first layer's weight gradients (its
   attention's and its MLP's) over the last layer's, the mean over 6 seeds,
   below 1 where the closed form says exactly 1. */
static void post_ln_attention_attenuates_the_first_layer(void **state)
{
    (void)state;
    const int layers = 12;
    double first = 0.0, last = 0.0, g0 = 0.0, gK = 0.0;
    for (int seed = 1; seed <= SEEDS; seed++) {
        const figures f = run_network("post-ln", layers, 0, seed);
        const size_t K = f.rows - 1;
        first += (f.weight_grad[1] + f.weight_grad[2]) / (2.0 * SEEDS);
        last += (f.weight_grad[K - 1] + f.weight_grad[K]) / (2.0 * SEEDS);
        g0 += f.grad_var[0] / SEEDS;
        gK += f.grad_var[K] / SEEDS;
    }
    print_message("  post-ln with attention, %d layers: first layer's weight_grad %.5g, last's "
                  "%.5g (ratio %.3f); grad_size at the embedding %.3f\n",
                  layers, first, last, first / last, sqrt(g0 / gK));
    assert_true(first / last < 0.9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(post_ln_top_weight_grad_is_flat_in_depth),
        cmocka_unit_test(pre_norm_top_weight_grad_falls_as_one_over_sqrt_v),
        cmocka_unit_test(post_ln_attention_attenuates_the_first_layer),
    };
    return cmocka_run_group_tests_name("the gradient's scaling in a measured network", tests, NULL,
                                       NULL);
}
