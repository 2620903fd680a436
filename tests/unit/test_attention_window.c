/* The attention kernels' sliding window (kern_list.h: query t sees keys s
 * with t - window < s <= t, transformers' sliding_window_overlay): the
 * scalar reference, forward and backward, against double-precision attention
 * written here over exactly those keys, for windows of 1, 3, 6 and 20 keys
 * over 37 tokens (the backward's blocks of 16 query rows straddled); every
 * SIMD variant this CPU runs against the scalar one, with Gemma-2's soft cap
 * and ALiBi's slopes on as well, at every window from 1 to 38; and a window
 * as long as the sequence (or longer) gives the bits of no window, on every
 * variant. Besides: vp_forward_check names a layer kind out of range, a
 * window over MLP-only layers, a bad second RoPE table and a bad window
 * pattern; and a pattern picks the layers a list of kinds picks, to the bit
 * of every figure, RoPE's two tables included. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/kern_table.h"
#include "kernels/kern_variants.h"
#include "test_filter.h"
#include "varprof/isa.h"
#include "varprof/varprof.h"

enum { T = 37, H = 2 }; /* over two of the backward's blocks of 16 query rows */
static const size_t WINDOWS[] = {1, 3, 6, 20};
static const size_t HEAD_DIMS[] = {8, 24};
/* relative to the largest magnitude of each output: float sums of up to
   T + hd terms of order 1, far above their rounding, far below a key too many */
#define TOLERANCE 2e-5

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float *new_normal(size_t n)
{
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++) {
        double u[2];
        for (int j = 0; j < 2; j++) {
            rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
            u[j] = ((double)(rng_state >> 11) + 0.5) * 0x1p-53;
        }
        x[i] = (float)(sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]));
    }
    return x;
}

/* out, dq, dk, dv of attention in double over the window's keys alone */
static void reference(double *out, double *dq, double *dk, double *dv, const float *q,
                      const float *k, const float *v, const float *dout, size_t ld, size_t hd,
                      double scale, size_t window)
{
    memset(dk, 0, T * ld * sizeof *dk);
    memset(dv, 0, T * ld * sizeof *dv);
    for (size_t h = 0; h < H; h++)
        for (size_t t = 0; t < T; t++) {
            const size_t s0 = t + 1 > window ? t + 1 - window : 0, c = h * hd;
            double p[T], dp[T], max = -HUGE_VAL, sum = 0.0, mix = 0.0;
            for (size_t s = s0; s <= t; s++) {
                p[s] = 0.0;
                for (size_t j = 0; j < hd; j++)
                    p[s] += (double)q[t * ld + c + j] * k[s * ld + c + j];
                p[s] *= scale;
                max = p[s] > max ? p[s] : max;
            }
            for (size_t s = s0; s <= t; s++)
                sum += p[s] = exp(p[s] - max);
            for (size_t s = s0; s <= t; s++) {
                p[s] /= sum;
                dp[s] = 0.0;
                for (size_t j = 0; j < hd; j++)
                    dp[s] += (double)dout[t * ld + c + j] * v[s * ld + c + j];
                mix += p[s] * dp[s];
            }
            for (size_t j = 0; j < hd; j++)
                out[t * ld + c + j] = dq[t * ld + c + j] = 0.0;
            for (size_t s = s0; s <= t; s++) {
                const double ds = p[s] * (dp[s] - mix);
                for (size_t j = 0; j < hd; j++) {
                    out[t * ld + c + j] += p[s] * v[s * ld + c + j];
                    dq[t * ld + c + j] += scale * ds * k[s * ld + c + j];
                    dk[s * ld + c + j] += scale * ds * q[t * ld + c + j];
                    dv[s * ld + c + j] += p[s] * dout[t * ld + c + j];
                }
            }
        }
}

/* the worst of |got - want| / max |want| */
static double worst(const float *got, const double *want, size_t n)
{
    double scale = 0.0, err = 0.0;
    for (size_t i = 0; i < n; i++)
        scale = fabs(want[i]) > scale ? fabs(want[i]) : scale;
    for (size_t i = 0; i < n; i++)
        err = fabs(got[i] - want[i]) > err ? fabs(got[i] - want[i]) : err;
    return err / (scale > 0.0 ? scale : 1.0);
}

static void scalar_matches_double(void **state)
{
    (void)state;
    for (size_t di = 0; di < sizeof HEAD_DIMS / sizeof *HEAD_DIMS; di++)
        for (size_t wi = 0; wi < sizeof WINDOWS / sizeof *WINDOWS; wi++) {
            const size_t hd = HEAD_DIMS[di], ld = H * hd, n = T * ld, w = WINDOWS[wi];
            const float scale = (float)(1.0 / sqrt((double)hd));
            float *q = new_normal(n), *k = new_normal(n), *v = new_normal(n);
            float *dout = new_normal(n), *got = malloc(4 * n * sizeof *got);
            float *scratch = malloc(KERN_ATTENTION_BACKWARD_SCRATCH(T, hd) * sizeof *scratch);
            double *want = malloc(4 * n * sizeof *want);
            assert_true(got && scratch && want);
            reference(want, want + n, want + 2 * n, want + 3 * n, q, k, v, dout, ld, hd, scale, w);
            kern_attention_scalar(got, ld, q, k, v, ld, T, H, hd, scale, 0.0f, NULL, w, scratch);
            kern_attention_backward_scalar(got + n, got + 2 * n, got + 3 * n, ld, dout, ld, q, k, v,
                                           ld, T, H, hd, scale, 0.0f, NULL, w, scratch);
            static const char *const what[4] = {"out", "dq", "dk", "dv"};
            for (int a = 0; a < 4; a++) {
                const double e = worst(got + a * n, want + a * n, n);
                print_message("  hd %2zu window %zu %s: %.1e relative\n", hd, w, what[a], e);
                assert_true(e <= TOLERANCE);
            }
            free(q), free(k), free(v), free(dout), free(got), free(scratch), free(want);
        }
}

/* forward then backward into o (4 n floats: out, dq, dk, dv), soft cap and
   slopes on */
static void run(int isa, float *o, const float *q, const float *k, const float *v,
                const float *dout, size_t hd, size_t w, float *scratch)
{
    static const float slopes[H] = {0.25f, 0.0625f};
    const size_t ld = H * hd, n = T * ld;
    kern_for((vp_isa)isa)->attention(o, ld, q, k, v, ld, T, H, hd, 0.3f, 2.0f, slopes, w, scratch);
    kern_for((vp_isa)isa)
        ->attention_backward(o + n, o + 2 * n, o + 3 * n, ld, dout, ld, q, k, v, ld, T, H, hd, 0.3f,
                             2.0f, slopes, w, scratch);
}

/* every variant against the scalar one, soft cap and slopes on; and a window
   of T or more gives the bits of window 0 */
static void variants_match_scalar(void **state)
{
    (void)state;
    for (size_t di = 0; di < sizeof HEAD_DIMS / sizeof *HEAD_DIMS; di++) {
        const size_t hd = HEAD_DIMS[di], n = T * H * hd;
        float *q = new_normal(n), *k = new_normal(n), *v = new_normal(n), *dout = new_normal(n);
        float *want = malloc(4 * n * sizeof *want), *got = malloc(4 * n * sizeof *got);
        float *scratch = malloc(KERN_ATTENTION_BACKWARD_SCRATCH(T, hd) * sizeof *scratch);
        assert_true(want && got && scratch);
        for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
            if (!vp_isa_supported((vp_isa)isa))
                continue;
            for (size_t w = 1; w <= T + 1; w++) {
                run(0, want, q, k, v, dout, hd, w, scratch);
                run(isa, got, q, k, v, dout, hd, w, scratch);
                double e = 0.0;
                for (size_t i = 0; i < 4 * n; i++)
                    e = fmax(e, fabs(got[i] - want[i]) / (1.0 + fabs(want[i])));
                if (!(e <= TOLERANCE))
                    fail_msg("%s hd %zu window %zu: %.1e from the scalar kernel",
                             vp_isa_name((vp_isa)isa), hd, w, e);
                if (w < T)
                    continue;
                /* no key outside the window: window 0's bits */
                run(isa, want, q, k, v, dout, hd, 0, scratch);
                assert_memory_equal(got, want, 4 * n * sizeof *got);
            }
        }
        free(q), free(k), free(v), free(dout), free(want), free(got), free(scratch);
    }
}

/* vp_forward_check holds the options' window and RoPE tables, naming what
   is wrong */
static void options_are_checked(void **state)
{
    (void)state;
    static const struct {
        size_t layer_kind, mlp_only;
        double local, linear, llama3;
        const char *says;
    } cases[] = {
        {7, 0, 0.0, 0.0, 0.0, "layer 1's kind is 7"},
        {VP_LAYER_SLIDING, 1, 0.0, 0.0, 0.0, "MLPs alone"},
        {VP_LAYER_SLIDING, 0, -1.0, 0.0, 0.0, "sliding layers' rope theta -1"},
        {VP_LAYER_SLIDING, 0, 0.0, 0.5, 0.0, "linear rope scaling factor 0.5"},
        {VP_LAYER_SLIDING, 0, 0.0, 8.0, 8.0, "beside Llama 3's factor 8"},
        {VP_LAYER_SLIDING, 0, 1e4, 8.0, 0.0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        vp_config cfg;
        vp_config_init(&cfg, VP_PRE_NORM, 2);
        cfg.mlp_only = (int)cases[i].mlp_only;
        vp_forward_options o;
        vp_forward_options_init(&o);
        o.width = 64;
        o.positions = cases[i].mlp_only ? VP_POSITIONS_NONE : VP_POSITIONS_ROPE;
        const unsigned char kinds[2] = {VP_LAYER_FULL, (unsigned char)cases[i].layer_kind};
        o.sliding_window = 4;
        o.layer_kinds = kinds;
        o.rope_local_theta = cases[i].local;
        o.rope_linear = cases[i].linear;
        if (cases[i].llama3 > 0.0)
            o.rope_scaling = (vp_rope_scaling){cases[i].llama3, 1.0, 4.0, 8192.0};
        vp_error err = {0};
        const vp_status s = vp_forward_check(&cfg, &o, &err);
        if (!cases[i].says) {
            assert_int_equal(s, VP_OK);
            continue;
        }
        assert_int_equal(s, VP_EINVAL);
        if (!strstr(err.message, cases[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, err.message, cases[i].says);
    }
}

/* a pattern of 1 (no layer would slide) and a pattern beside a list */
static void bad_patterns_are_refused(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 2);
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.width = 64;
    o.sliding_window = 4;
    o.window_pattern = 1;
    vp_error err;
    assert_int_equal(vp_forward_check(&cfg, &o, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "a window pattern of 1"));
    const unsigned char kinds[2] = {VP_LAYER_SLIDING, VP_LAYER_FULL};
    o.window_pattern = 2;
    o.layer_kinds = kinds;
    assert_int_equal(vp_forward_check(&cfg, &o, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "beside a list of the layers' kinds"));
    o.layer_kinds = NULL;
    assert_int_equal(vp_forward_check(&cfg, &o, &err), VP_OK);
}

/* The figures of a 7-layer stack whose window is W tokens on the layers
   kinds (a list) or pattern (a rule) say, with Gemma 3's two RoPE tables */
static vp_profile *windowed(const unsigned char *kinds, size_t pattern, size_t window)
{
    vp_config cfg;
    vp_config_init(&cfg, VP_SANDWICH, 7);
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.width = 32;
    o.heads = 4;
    o.vocab = 50;
    o.tokens = 13;
    o.batch = 2;
    o.positions = VP_POSITIONS_ROPE;
    o.rope_theta = 1e6;
    o.rope_local_theta = 1e4;
    o.rope_linear = 8.0;
    o.sliding_window = window;
    o.layer_kinds = kinds;
    o.window_pattern = pattern;
    vp_profile *p = NULL;
    vp_error err;
    if (vp_forward_profile(&cfg, &o, &p, &err) != VP_OK)
        fail_msg("%s", err.message);
    return p;
}

static int same_figures(const vp_profile *a, const vp_profile *b)
{
    if (a->n_rows != b->n_rows)
        return 0;
    for (size_t k = 0; k < a->n_rows; k++)
        if (a->rows[k].stream_var != b->rows[k].stream_var ||
            a->rows[k].update_ratio != b->rows[k].update_ratio ||
            a->rows[k].embedding_share != b->rows[k].embedding_share)
            return 0;
    return 1;
}

/* pattern 3 over 7 layers: layers 2 and 5 full, the others sliding */
static void a_pattern_is_its_list_of_kinds(void **state)
{
    (void)state;
    const unsigned char kinds[7] = {VP_LAYER_SLIDING, VP_LAYER_SLIDING, VP_LAYER_FULL,
                                    VP_LAYER_SLIDING, VP_LAYER_SLIDING, VP_LAYER_FULL,
                                    VP_LAYER_SLIDING};
    const unsigned char all_slide[7] = {VP_LAYER_SLIDING, VP_LAYER_SLIDING, VP_LAYER_SLIDING,
                                        VP_LAYER_SLIDING, VP_LAYER_SLIDING, VP_LAYER_SLIDING,
                                        VP_LAYER_SLIDING};
    vp_profile *by_list = windowed(kinds, 0, 4), *by_rule = windowed(NULL, 3, 4),
               *sliding = windowed(all_slide, 0, 4), *no_full = windowed(NULL, 8, 4);
    assert_true(same_figures(by_list, by_rule));
    /* not vacuous: every layer sliding gives other figures; a pattern longer
       than the stack leaves every layer sliding */
    assert_false(same_figures(by_list, sliding));
    assert_true(same_figures(sliding, no_full));
    vp_profile_free(by_list);
    vp_profile_free(by_rule);
    vp_profile_free(sliding);
    vp_profile_free(no_full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalar_matches_double),
        cmocka_unit_test(variants_match_scalar),
        cmocka_unit_test(options_are_checked),
        cmocka_unit_test(bad_patterns_are_refused),
        cmocka_unit_test(a_pattern_is_its_list_of_kinds),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
