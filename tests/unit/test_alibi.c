/* ALiBi (positions alibi): the slopes against a direct transcription of
 * transformers' build_alibi_tensor for H = 6, 8, 12 and 112 (BLOOM-176B's,
 * not a power of two), and the attention kernels with slopes, forward and
 * backward, the scalar reference against double-precision attention written
 * here with the bias as slope (s - t) (the paper's form, equal under the
 * softmax to BLOOM's slope s) and every SIMD variant this CPU runs against
 * the scalar one. Besides: the positions row alibi and the embedding norm's
 * rows by name, with the facts the engines read of them. */
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
#include "test_filter.h"
#include "varprof/architecture.h"
#include "varprof/isa.h"

static const double U = 0x1p-24; /* one float rounding, relative */
static const double H_FD = 1e-5;

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static double normal(void)
{
    double u[2];
    for (int i = 0; i < 2; i++) {
        rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
        u[i] = ((double)(rng_state >> 11) + 0.5) * 0x1p-53;
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static float *new_normal(size_t n)
{
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)normal();
    return x;
}

static double *new_doubles(size_t n)
{
    double *x = calloc(n, sizeof *x);
    assert_non_null(x);
    return x;
}

/* ---- the slopes ---- */

/* transformers' build_alibi_tensor, line by line: closest_power_of_2 =
   2 ** floor(log2(n_head)); base = 2 ** (-(2 ** -(log2(cp) - 3))) as a
   float32 tensor; slopes = base ** arange(1, 1 + cp); then, if cp !=
   n_head, extra_base = 2 ** (-(2 ** -(log2(2 cp) - 3))) and its powers
   arange(1, 1 + 2 min(cp, n_head - cp), 2) appended */
static void slopes_transcribed(double *out, size_t n_head)
{
    const double cp = pow(2.0, floor(log2((double)n_head)));
    const float base = (float)pow(2.0, -pow(2.0, -(log2(cp) - 3.0)));
    size_t n = 0;
    for (size_t p = 1; p < 1 + (size_t)cp; p++)
        out[n++] = pow((double)base, (double)p);
    if ((size_t)cp != n_head) {
        const float extra = (float)pow(2.0, -pow(2.0, -(log2(2.0 * cp) - 3.0)));
        const size_t remaining =
            (size_t)cp < n_head - (size_t)cp ? (size_t)cp : n_head - (size_t)cp;
        for (size_t p = 1; p < 1 + 2 * remaining; p += 2)
            out[n++] = pow((double)extra, (double)p);
    }
    assert_int_equal(n, n_head);
}

static void slopes_follow_transformers(void **state)
{
    (void)state;
    static const size_t heads[] = {1, 6, 8, 12, 112};
    for (size_t i = 0; i < sizeof heads / sizeof *heads; i++) {
        const size_t H = heads[i];
        float got[112];
        double want[112];
        vp_alibi_slopes(got, H);
        slopes_transcribed(want, H);
        for (size_t h = 0; h < H; h++)
            if (fabs((double)got[h] - want[h]) > U * want[h]) {
                fail_msg("H=%zu head %zu: slope %.9g, transformers' %.9g", H, h, (double)got[h],
                         want[h]);
            }
    }
    /* by hand: eight heads take 2^-1 .. 2^-8 exactly; twelve add 2^-0.5,
       2^-1.5, 2^-2.5 and 2^-3.5 */
    float s[12];
    vp_alibi_slopes(s, 8);
    for (int h = 0; h < 8; h++)
        assert_true(s[h] == ldexpf(1.0f, -(h + 1)));
    vp_alibi_slopes(s, 12);
    for (int i = 0; i < 4; i++)
        assert_float_equal(s[8 + i], pow(2.0, -0.5 - i), 1e-7);
    assert_true(s[7] == ldexpf(1.0f, -8));
}

/* ---- attention with the bias, in double ---- */

/* out[t] of head h = softmax_s<=t(q_t.k_s scale + slope_h (s - t)) . v_s */
static void attention_d(double *out, const double *q, const double *k, const double *v, size_t T,
                        size_t H, size_t hd, double scale, const float *slopes)
{
    const size_t ld = H * hd;
    double *z = new_doubles(T);
    for (size_t h = 0; h < H; h++)
        for (size_t t = 0; t < T; t++) {
            double max = -INFINITY, sum = 0.0;
            for (size_t s = 0; s <= t; s++) {
                double dot = 0.0;
                for (size_t j = 0; j < hd; j++)
                    dot += q[t * ld + h * hd + j] * k[s * ld + h * hd + j];
                z[s] = dot * scale + (double)slopes[h] * ((double)s - (double)t);
                max = z[s] > max ? z[s] : max;
            }
            for (size_t s = 0; s <= t; s++)
                sum += (z[s] = exp(z[s] - max));
            for (size_t j = 0; j < hd; j++) {
                double acc = 0.0;
                for (size_t s = 0; s <= t; s++)
                    acc += z[s] / sum * v[s * ld + h * hd + j];
                out[t * ld + h * hd + j] = acc;
            }
        }
    free(z);
}

static double max_abs_diff(const float *got, const double *want, size_t n, size_t *at)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs((double)got[i] - want[i]);
        if (d > worst || isnan(d))
            worst = d, *at = i;
    }
    return worst;
}

static void check(const char *what, const float *got, const double *want, size_t n, double tol)
{
    size_t at = 0;
    const double worst = max_abs_diff(got, want, n, &at);
    if (!(worst <= tol))
        fail_msg("%s: element %zu is %.9g, want %.9g (max difference %.3g > %.3g)", what, at,
                 (double)got[at], want[at], worst, tol);
}

/* T = 40 keys: slope 0.5 (head 0 of H = 8... here H = 6's 2^-2) times 39
   moves a score by about 10, far outside the dot products' own size */
static const size_t SHAPES[][3] = {{1, 6, 16}, {9, 6, 17}, {40, 6, 32}, {23, 3, 64}};

static void forward_matches_double_and_scalar(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof SHAPES / sizeof *SHAPES; c++) {
        const size_t T = SHAPES[c][0], H = SHAPES[c][1], hd = SHAPES[c][2], ld = H * hd;
        const float scale = (float)(1.0 / sqrt((double)hd));
        float slopes[6], *q = new_normal(T * ld), *k = new_normal(T * ld), *v = new_normal(T * ld);
        vp_alibi_slopes(slopes, H);
        double *qd = new_doubles(T * ld), *kd = new_doubles(T * ld), *vd = new_doubles(T * ld);
        double *want = new_doubles(T * ld), *ref = new_doubles(T * ld);
        for (size_t i = 0; i < T * ld; i++)
            qd[i] = q[i], kd[i] = k[i], vd[i] = v[i];
        attention_d(want, qd, kd, vd, T, H, hd, (double)scale, slopes);
        float *got = malloc(T * ld * sizeof *got), *plain = malloc(T * ld * sizeof *plain);
        float *scratch = malloc(T * sizeof *scratch);
        /* float scores of size ~10 (slope s): within (hd + T + 16) u of
           that in every output, v ~ N(0, 1) */
        const double tol = (double)(hd + T + 16) * U * (1.0 + 0.5 * (double)T) * 4.0;
        for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
            if (!vp_isa_supported((vp_isa)isa))
                continue;
            char what[96];
            snprintf(what, sizeof what, "%s alibi attention T=%zu H=%zu hd=%zu",
                     vp_isa_name((vp_isa)isa), T, H, hd);
            kern_for((vp_isa)isa)
                ->attention(got, ld, q, k, v, ld, T, H, hd, scale, 0.0f, slopes, 0, scratch);
            check(what, got, want, T * ld, tol);
            if (isa == VP_ISA_SCALAR)
                for (size_t i = 0; i < T * ld; i++)
                    ref[i] = got[i];
            else
                check(what, got, ref, T * ld, 2.0 * tol);
            /* the bias is there: without it rows past the first move */
            kern_for((vp_isa)isa)
                ->attention(plain, ld, q, k, v, ld, T, H, hd, scale, 0.0f, NULL, 0, scratch);
            if (T > 4) {
                size_t at = 0;
                assert_true(max_abs_diff(plain, want, T * ld, &at) > 100.0 * tol);
            }
        }
        free(q), free(k), free(v), free(qd), free(kd), free(vd), free(want), free(ref);
        free(got), free(plain), free(scratch);
    }
}

/* dq, dk, dv of sum dout .* attention by central differences, in double */
static void attention_fd(double *grad, const float *dout, const float *q, const float *k,
                         const float *v, size_t T, size_t H, size_t hd, double scale,
                         const float *slopes)
{
    const size_t len = T * H * hd;
    double *in = new_doubles(3 * len), *out = new_doubles(len);
    const float *src[3] = {q, k, v};
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < len; i++)
            in[a * len + i] = src[a][i];
    for (size_t i = 0; i < 3 * len; i++) {
        const double keep = in[i];
        double l[2];
        for (int side = 0; side < 2; side++) {
            in[i] = keep + (side ? -H_FD : H_FD);
            attention_d(out, in, in + len, in + 2 * len, T, H, hd, scale, slopes);
            l[side] = 0.0;
            for (size_t j = 0; j < len; j++)
                l[side] += out[j] * dout[j];
        }
        in[i] = keep;
        grad[i] = (l[0] - l[1]) / (2.0 * H_FD);
    }
    free(in), free(out);
}

static void backward_matches_differences_and_scalar(void **state)
{
    (void)state;
    for (size_t c = 0; c < 3; c++) {
        const size_t T = SHAPES[c][0], H = SHAPES[c][1], hd = SHAPES[c][2], ld = H * hd;
        const size_t len = T * ld;
        const float scale = (float)(1.0 / sqrt((double)hd));
        float slopes[6], *q = new_normal(len), *k = new_normal(len), *v = new_normal(len);
        float *dout = new_normal(len);
        vp_alibi_slopes(slopes, H);
        double *fd = new_doubles(3 * len), *ref = new_doubles(3 * len);
        attention_fd(fd, dout, q, k, v, T, H, hd, (double)scale, slopes);
        double m = 0.0;
        for (size_t i = 0; i < 3 * len; i++)
            m = fabs(fd[i]) > m ? fabs(fd[i]) : m;
        /* test_backward_kernels' bound: (T + hd + 8) u of the largest
           gradient, times 4 */
        const double tol = 4.0 * (double)(T + hd + 8) * U * m + 1e-8;
        float *g = malloc(3 * len * sizeof *g);
        float *scratch = malloc(KERN_ATTENTION_BACKWARD_SCRATCH(T, hd) * sizeof *scratch);
        for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
            if (!vp_isa_supported((vp_isa)isa))
                continue;
            char what[96];
            snprintf(what, sizeof what, "%s alibi attention backward T=%zu H=%zu hd=%zu",
                     vp_isa_name((vp_isa)isa), T, H, hd);
            kern_for((vp_isa)isa)
                ->attention_backward(g, g + len, g + 2 * len, ld, dout, ld, q, k, v, ld, T, H, hd,
                                     scale, 0.0f, slopes, 0, scratch);
            check(what, g, fd, 3 * len, tol);
            if (isa == VP_ISA_SCALAR)
                for (size_t i = 0; i < 3 * len; i++)
                    ref[i] = g[i];
            else
                check(what, g, ref, 3 * len, 2.0 * tol);
        }
        free(q), free(k), free(v), free(dout), free(fd), free(ref), free(g), free(scratch);
    }
}

/* ---- the rows ---- */

static void rows_by_name(void **state)
{
    (void)state;
    vp_positions p = VP_POSITIONS_NONE;
    assert_int_equal(vp_positions_parse("alibi", &p, NULL), VP_OK);
    assert_int_equal(p, VP_POSITIONS_ALIBI);
    const vp_positions_traits *t = vp_positions_traits_of(p);
    assert_true(t->score_bias && !t->rotary && !t->table);
    for (int i = 0; i < VP_POSITIONS_COUNT; i++) /* ALiBi's alone biases the scores */
        assert_int_equal(vp_positions_traits_of((vp_positions)i)->score_bias,
                         i == VP_POSITIONS_ALIBI);
    vp_embedding_norm n = VP_EMBEDDING_NORM_NONE;
    assert_int_equal(vp_embedding_norm_parse("layernorm", &n, NULL), VP_OK);
    assert_int_equal(n, VP_EMBEDDING_NORM_LAYERNORM);
    assert_string_equal(vp_embedding_norm_name(n), "layernorm");
    assert_string_equal(vp_embedding_norm_traits_of(n)->prefix, "embed_norm");
    assert_false(vp_embedding_norm_traits_of(VP_EMBEDDING_NORM_NONE)->norm);
    assert_null(vp_embedding_norm_traits_of(VP_EMBEDDING_NORM_COUNT));
    assert_null(vp_embedding_norm_name(VP_EMBEDDING_NORM_COUNT));
    vp_error err;
    assert_int_equal(vp_embedding_norm_parse("rmsnorm", &n, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "none, layernorm"));
    assert_int_equal(vp_embedding_norm_check(VP_EMBEDDING_NORM_LAYERNORM, NULL), VP_OK);
    assert_int_equal(vp_embedding_norm_check((vp_embedding_norm)7, &err), VP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slopes_follow_transformers),
        cmocka_unit_test(rows_by_name),
        cmocka_unit_test(forward_matches_double_and_scalar),
        cmocka_unit_test(backward_matches_differences_and_scalar),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
