/* The closed form's backward half (vp_closed_grad) held against an
 * independent reference, the figures of issue 13 and varprof-maths(7),
 * GRADIENTS, and its refusals.
 *
 * tests/data/closed_grad_reference.csv is computed by
 * gen_closed_grad_reference.py from the manual's table, written per placement
 * (the library reads placement traits), in exact rational arithmetic from the
 * very doubles this test parses back. Each case runs vp_closed_profile and
 * then vp_closed_grad at the case's width and norm (infinite, any: the
 * finite width is the Monte Carlo's expectation, held to it in
 * test_mc_grad.c).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/closed.h"
#include "varprof/config.h"
#include "varprof/placement.h"
#include "varprof/profile.h"

#include "../support/reference.h"

#define REF_FILE "closed_grad_reference.csv"

/* What gen_closed_grad_reference.py prints to stderr ("192 cases"). */
#define REF_EXPECTED_CASES 192u

/* The reference rounds once from exact rationals; the engine rounds at each
 * of up to 64 steps of a recursion of sums of positives, products, quotients
 * and one square root, so its error is a few hundred ulp at worst, about
 * 1e-13. 1e-12 relative leaves room for that and no more. */
#define REL_TOL 1e-12

/* The closed-form figures of the issue, computed by formulas of a line or
 * two from the same doubles: a few ulp apart at most. */
#define FIGURE_TOL (16 * DBL_EPSILON)

#define MAX_FIELDS 17
#define MAX_GAINS 64
#define MAX_PRINTED 30

typedef struct {
    char name[96];
    char placement[24];
    size_t layers, width, k;
    int mlp_only, final_norm, has_gain;
    double gain, gamma, alpha, beta, embedding_var;
    double gains[MAX_GAINS];
    size_t n_gains;
    vp_norm norm;
    double stream_var, grad_var, weight_grad; /* weight_grad NaN at k = 0 */
} grad_ref_row;

typedef struct {
    grad_ref_row *rows;
    size_t n_rows;
} grad_ref;

static double rel_diff(double a, double b)
{
    if (isnan(a) || isnan(b))
        return INFINITY;
    if (a == b)
        return 0.0;
    return fabs(a - b) / fmax(fabs(a), fabs(b));
}

static double number(const char *s)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end)
        fail_msg("%s: \"%s\" is not a number", REF_FILE, s);
    return x;
}

static vp_norm norm_of(const char *s)
{
    if (strcmp(s, "layernorm") == 0)
        return VP_NORM_LAYERNORM;
    if (strcmp(s, "rmsnorm") == 0)
        return VP_NORM_RMSNORM;
    if (strcmp(s, "any") != 0)
        fail_msg("%s: norm \"%s\"", REF_FILE, s);
    return VP_NORM_ANY;
}

static void parse_gains(grad_ref_row *row, char *field)
{
    row->n_gains = 0;
    for (char *save = NULL, *g = strtok_r(field, ";", &save); g; g = strtok_r(NULL, ";", &save)) {
        if (row->n_gains == MAX_GAINS)
            fail_msg("%s: case %s has more than %d gains", REF_FILE, row->name, MAX_GAINS);
        row->gains[row->n_gains++] = number(g);
    }
}

/* Splits a line at commas (no field is quoted or holds one). */
static size_t split(char *line, char **fields)
{
    size_t n = 0;
    for (char *p = line;; p++) {
        if (n == MAX_FIELDS)
            return n + 1;
        fields[n++] = p;
        p = strchr(p, ',');
        if (!p)
            return n;
        *p = '\0';
    }
}

static void parse_row(char *line, grad_ref_row *row)
{
    char *f[MAX_FIELDS + 1];
    line[strcspn(line, "\r\n")] = '\0';
    if (split(line, f) != MAX_FIELDS)
        fail_msg("%s: a row without %d fields: %s", REF_FILE, MAX_FIELDS, line);
    snprintf(row->name, sizeof row->name, "%s", f[0]);
    snprintf(row->placement, sizeof row->placement, "%s", f[1]);
    row->layers = (size_t)number(f[2]);
    row->mlp_only = strcmp(f[3], "1") == 0;
    row->has_gain = f[4][0] != '\0';
    row->gain = row->has_gain ? number(f[4]) : 0.0;
    row->gamma = number(f[5]);
    row->alpha = number(f[6]);
    row->beta = number(f[7]);
    row->embedding_var = number(f[8]);
    row->final_norm = strcmp(f[9], "yes") == 0;
    row->width = (size_t)number(f[10]);
    row->norm = norm_of(f[11]);
    parse_gains(row, f[12]);
    row->k = (size_t)number(f[13]);
    row->stream_var = number(f[14]);
    row->grad_var = number(f[15]);
    row->weight_grad = f[16][0] ? number(f[16]) : NAN;
}

static void load(grad_ref *ref)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", ref_testdata_dir(), REF_FILE);
    FILE *in = fopen(path, "r");
    if (!in)
        fail_msg("cannot open %s", path);
    char line[8192];
    size_t cap = 8192;
    *ref = (grad_ref){calloc(cap, sizeof(grad_ref_row)), 0};
    assert_non_null(ref->rows);
    if (!fgets(line, sizeof line, in) || strncmp(line, "case,placement,", 15) != 0)
        fail_msg("%s: no header", path);
    while (fgets(line, sizeof line, in)) {
        if (ref->n_rows == cap) {
            cap *= 2;
            ref->rows = realloc(ref->rows, cap * sizeof(grad_ref_row));
            assert_non_null(ref->rows);
        }
        parse_row(line, &ref->rows[ref->n_rows++]);
    }
    fclose(in);
}

/* The config a case's first row describes. */
static vp_config case_config(const grad_ref_row *head)
{
    vp_placement placement;
    vp_error err;
    if (vp_placement_parse(head->placement, &placement, &err) != VP_OK)
        fail_msg("case %s: placement %s", head->name, head->placement);
    vp_config cfg;
    vp_config_init(&cfg, placement, head->layers);
    cfg.mlp_only = head->mlp_only;
    cfg.gain = head->gain;
    if (!head->has_gain) {
        cfg.gains = head->gains;
        cfg.n_gains = head->n_gains;
    }
    cfg.gamma = head->gamma;
    cfg.alpha = head->alpha;
    cfg.beta = head->beta;
    cfg.embedding_var = head->embedding_var;
    cfg.final_norm = head->final_norm ? VP_FINAL_NORM_YES : VP_FINAL_NORM_NO;
    return cfg;
}

typedef struct {
    size_t cases, compared, mismatches;
    double max_diff;
    bool placements[VP_PLACEMENT_COUNT][2]; /* [placement][final norm] */
} tally;

static void compare(tally *t, const grad_ref_row *want, const char *what, double got,
                    double expected)
{
    /* infinity (a silent branch under an output norm) must be met exactly */
    const double d = isinf(expected) ? (got == expected ? 0.0 : INFINITY) : rel_diff(got, expected);
    t->compared++;
    t->max_diff = isinf(d) || d > t->max_diff ? fmax(d, t->max_diff) : t->max_diff;
    /* REL_TOL = 1e-12 relative: see its definition */
    if (d > REL_TOL && t->mismatches++ < MAX_PRINTED)
        print_error("case %s k %zu %s: engine %.17g reference %.17g (relative %.3g)\n", want->name,
                    want->k, what, got, expected, d);
}

/* Runs one case, starting at rows[0]; returns its row count. */
static size_t run_case(const grad_ref_row *rows, size_t available, tally *t)
{
    vp_config cfg = case_config(rows);
    const size_t n = vp_config_sub_blocks(&cfg) + 1;
    if (n > available)
        fail_msg("case %s: %zu rows, %zu left in the file", rows->name, n, available);
    vp_profile *profile = NULL;
    vp_error err = {0};
    assert_int_equal(vp_closed_profile(&cfg, &profile, &err), VP_OK);
    assert_int_equal(vp_closed_grad(profile, rows->width, rows->norm, &err), VP_OK);
    assert_true(profile->fields & VP_HAS_GRAD);
    assert_int_equal(profile->n_rows, n);
    for (size_t k = 0; k < n; k++) {
        const grad_ref_row *want = &rows[k];
        if (want->k != k || strcmp(want->name, rows->name) != 0)
            fail_msg("case %s: row %zu is k %zu of case %s", rows->name, k, want->k, want->name);
        compare(t, want, "stream_var", profile->rows[k].stream_var, want->stream_var);
        compare(t, want, "grad_var", profile->rows[k].grad_var, want->grad_var);
        if (k > 0)
            compare(t, want, "weight_grad", profile->rows[k].weight_grad, want->weight_grad);
    }
    t->cases++;
    t->placements[cfg.placement][rows->final_norm] = true;
    vp_profile_free(profile);
    return n;
}

static void test_engine_matches_reference(void **state)
{
    (void)state;
    grad_ref ref;
    load(&ref);
    tally t = {0};
    for (size_t i = 0; i < ref.n_rows;)
        i += run_case(&ref.rows[i], ref.n_rows - i, &t);
    free(ref.rows);
    print_message("compared %zu figures of %zu cases: %zu beyond %g relative, max %.3g\n",
                  t.compared, t.cases, t.mismatches, REL_TOL, t.max_diff);
    assert_int_equal(t.cases, REF_EXPECTED_CASES);
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
        if (!t.placements[p][0] || !t.placements[p][1])
            fail_msg("no case for %s with and without a final norm",
                     vp_placement_name((vp_placement)p));
    assert_int_equal(t.mismatches, 0);
}

static vp_profile *closed_with_grad(vp_placement placement, size_t layers, double gain)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.gain = gain;
    cfg.grad = 1;
    vp_profile *profile = NULL;
    vp_error err;
    assert_int_equal(vp_closed_profile(&cfg, &profile, &err), VP_OK);
    assert_true(profile->fields & VP_HAS_GRAD);
    return profile;
}

static void assert_close(const char *what, double got, double expected)
{
    /* FIGURE_TOL = 16 DBL_EPSILON relative: see its definition */
    if (rel_diff(got, expected) > FIGURE_TOL)
        fail_msg("%s: %.17g, expected %.17g", what, got, expected);
}

/* Issue 13's figures, 32 layers, g = 1: pre-norm with its final norm
 * telescopes to grad_size_0 = sqrt(65) and weight_grad 1/sqrt(65) at the
 * top, 1/sqrt(2) at the bottom; Post-LN is flat, grad_size 1 and weight_grad
 * 1/sqrt(2) everywhere; their top weight_grads differ by sqrt(65/2). */
static void test_issue_figures(void **state)
{
    (void)state;
    vp_profile *pre = closed_with_grad(VP_PRE_NORM, 32, 1.0);
    vp_profile *post = closed_with_grad(VP_POST_LN, 32, 1.0);
    assert_close("pre-norm grad_size_0", vp_profile_grad_size(pre, 0), sqrt(65.0));
    assert_close("pre-norm weight_grad_64", pre->rows[64].weight_grad, 1.0 / sqrt(65.0));
    assert_close("pre-norm weight_grad_1", pre->rows[1].weight_grad, 1.0 / sqrt(2.0));
    for (size_t k = 0; k <= 64; k++) {
        assert_close("post-ln grad_size", vp_profile_grad_size(post, k), 1.0);
        if (k > 0)
            assert_close("post-ln weight_grad", post->rows[k].weight_grad, 1.0 / sqrt(2.0));
    }
    assert_close("Xiong's ratio", post->rows[64].weight_grad / pre->rows[64].weight_grad,
                 sqrt(65.0 / 2.0));
    vp_profile_free(pre);
    vp_profile_free(post);
    /* and it grows as sqrt(L): sqrt((2L + 1) / 2) */
    for (size_t layers = 1; layers <= 4096; layers *= 8) {
        pre = closed_with_grad(VP_PRE_NORM, layers, 1.0);
        post = closed_with_grad(VP_POST_LN, layers, 1.0);
        const size_t top = 2 * layers;
        assert_close("Xiong's ratio at L", post->rows[top].weight_grad / pre->rows[top].weight_grad,
                     sqrt((2.0 * (double)layers + 1.0) / 2.0));
        vp_profile_free(pre);
        vp_profile_free(post);
    }
}

/* The common mistake: the seed's pre-norm stack without a final norm. Its
 * gradient at the top is 1, so every branch's weight_grad is 1 and the
 * stream's gradient grows to v_K / v_0 = 65 at the bottom, in mean square,
 * the same telescoping; the stack's own scale never reaches the head. */
static void test_pre_norm_without_final_norm(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 32);
    cfg.grad = 1;
    cfg.final_norm = VP_FINAL_NORM_NO;
    vp_profile *p = NULL;
    vp_error err;
    assert_int_equal(vp_closed_profile(&cfg, &p, &err), VP_OK);
    assert_close("grad_var_64", p->rows[64].grad_var, 1.0);
    assert_close("grad_var_0", p->rows[0].grad_var, 65.0);
    assert_close("weight_grad_64", p->rows[64].weight_grad, 1.0);
    assert_close("weight_grad_1", p->rows[1].weight_grad, sqrt(65.0 / 2.0));
    vp_profile_free(p);
}

/* Finite width: properties the derivation must have whatever it is. As d
 * grows every figure tends to the infinite width's, within about K / d;
 * without any norm the width changes nothing; and Post-LN's gradient grows
 * toward the bottom, G_0 / G_K = 1.231 at d = 64 (8 layers, gain 1,
 * RMSNorm), where the (1 - p/d) per norm of an older version decayed to
 * (1 - 1/64)^16 = 0.78 and the Monte Carlo finds 1.230 (varprof-maths(7)). */
static void test_finite_width_properties(void **state)
{
    (void)state;
    vp_error err;
    const size_t wide = 1u << 16;
    for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++)
        for (int nm = VP_NORM_LAYERNORM; nm <= VP_NORM_RMSNORM; nm++) {
            vp_profile *inf = closed_with_grad((vp_placement)pl, 8, 1.0);
            vp_profile *fin = closed_with_grad((vp_placement)pl, 8, 1.0);
            assert_int_equal(vp_closed_grad(fin, wide, (vp_norm)nm, &err), VP_OK);
            const double bound = 4.0 * (double)fin->n_rows / (double)wide;
            for (size_t k = 0; k < fin->n_rows; k++) {
                if (!(rel_diff(fin->rows[k].grad_var, inf->rows[k].grad_var) < bound)) {
                    print_error("%s, %s, d = %zu, sub-block %zu: grad_var %.17g against %.17g "
                                "at infinite width\n",
                                vp_placement_name((vp_placement)pl), vp_norm_name((vp_norm)nm),
                                wide, k, fin->rows[k].grad_var, inf->rows[k].grad_var);
                    fail();
                }
                if (k > 0)
                    assert_true(rel_diff(fin->rows[k].weight_grad, inf->rows[k].weight_grad) <
                                bound);
            }
            vp_profile_free(inf);
            vp_profile_free(fin);
        }
    /* no norm and no final norm: the gradient never meets the forward */
    vp_profile *none = closed_with_grad(VP_NO_NORM, 3, 0.7);
    vp_profile *none_inf = closed_with_grad(VP_NO_NORM, 3, 0.7);
    assert_int_equal(vp_closed_grad(none, 8, VP_NORM_LAYERNORM, &err), VP_OK);
    assert_memory_equal(none->rows, none_inf->rows, none->n_rows * sizeof(vp_row));
    vp_profile_free(none);
    vp_profile_free(none_inf);
    /* Post-LN grows toward the bottom */
    vp_profile *inf = closed_with_grad(VP_POST_LN, 8, 1.0);
    vp_profile *narrow = closed_with_grad(VP_POST_LN, 8, 1.0);
    assert_int_equal(vp_closed_grad(narrow, 64, VP_NORM_RMSNORM, &err), VP_OK);
    const double ratio = narrow->rows[0].grad_var / narrow->rows[16].grad_var;
    print_message("Post-LN, RMSNorm, d = 64: G_0 / G_K = %.4f\n", ratio);
    assert_true(fabs(ratio - 1.231) < 1e-3);
    /* the same width with no norm (VP_NORM_ANY) is infinite width */
    assert_int_equal(vp_closed_grad(narrow, 64, VP_NORM_ANY, &err), VP_OK);
    assert_close("width with norm any", narrow->rows[0].grad_var, inf->rows[0].grad_var);
    vp_profile_free(inf);
    vp_profile_free(narrow);
}

/* A silent branch under an output norm: the idealisation divides by its zero
 * output, so weight_grad is infinite; the stream's gradient is not. */
static void test_silent_normalised_branch(void **state)
{
    (void)state;
    vp_profile *p = closed_with_grad(VP_OUTPUT_NORM, 2, 0.0);
    for (size_t k = 1; k <= 4; k++) {
        assert_true(isinf(p->rows[k].weight_grad) && p->rows[k].weight_grad > 0);
        assert_true(isfinite(p->rows[k - 1].grad_var));
    }
    assert_int_equal(p->overflowed, VP_OVERFLOW_NONE);
    vp_profile_free(p);
}

/* A gradient beyond double: Post-LN divides by v_0 on the way into the
 * embedding, so v_0 = 1e-310 makes G_0 about 1e310. The forward rows stay
 * whole, the overflow is named, the out-of-range figure is HUGE_VAL. */
static void test_overflow(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_POST_LN, 2);
    cfg.grad = 1;
    cfg.embedding_var = 1e-310;
    vp_profile *p = NULL;
    vp_error err;
    assert_int_equal(vp_closed_profile(&cfg, &p, &err), VP_OK);
    assert_int_equal(p->n_rows, 5);
    assert_int_equal(p->overflow_at, 0);
    assert_int_equal(p->overflowed, VP_OVERFLOW_GRAD_VAR);
    assert_true(isinf(p->rows[0].grad_var));
    assert_close("grad_var_1", p->rows[1].grad_var, 1.0);
    /* the weight gradient beside it is finite, 1/sqrt(2): G_1 / (v_0 (1 + g^2))
       overflows on the way, v_0 G_1 / (v_0 (1 + g^2)) does not */
    assert_close("weight_grad_1", p->rows[1].weight_grad, sqrt(0.5));
    vp_profile_free(p);
    /* where the forward stopped first, the gradient runs from its last row */
    vp_config_init(&cfg, VP_NO_NORM, 600);
    cfg.grad = 1;
    cfg.gain = 1.0;
    assert_int_equal(vp_closed_profile(&cfg, &p, &err), VP_OK);
    assert_int_equal(p->overflowed, VP_OVERFLOW_STREAM_VAR);
    assert_close("none's top grad_var", p->rows[p->n_rows - 1].grad_var, 1.0);
    /* 2^(n-1) below the top, n - 1 sub-blocks of (1 + g^2) */
    assert_close("none's bottom grad_var", p->rows[0].grad_var, ldexp(1.0, (int)p->n_rows - 1));
    vp_profile_free(p);
}

static void test_refusals(void **state)
{
    (void)state;
    vp_error err = {0};
    assert_int_equal(vp_closed_grad(NULL, 0, VP_NORM_ANY, &err), VP_EINVAL);
    vp_profile *p = closed_with_grad(VP_PRE_NORM, 2, 1.0);
    p->fields = 0;
    assert_int_equal(vp_closed_grad(p, 1, VP_NORM_LAYERNORM, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "width 1 with layernorm under pre-norm"));
    assert_non_null(strstr(err.message, "width 0 (infinite) or 6 up"));
    assert_int_equal(vp_closed_grad(p, 4, VP_NORM_RMSNORM, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "or 5 up"));
    assert_int_equal(vp_closed_grad(p, 64, (vp_norm)7, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "norm is 7"));
    p->rows[2].stream_var = 0.0;
    assert_int_equal(vp_closed_grad(p, 0, VP_NORM_ANY, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "sub-block 2"));
    p->rows[2].stream_var = 3.0;
    p->rows[3].gain = NAN;
    assert_int_equal(vp_closed_grad(p, 0, VP_NORM_ANY, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "gain nan at sub-block 3"));
    assert_int_equal(p->fields & VP_HAS_GRAD, 0); /* untouched on failure */
    p->rows[3].gain = 1.0;
    p->config.final_norm = (vp_final_norm)9;
    assert_int_equal(vp_closed_grad(p, 0, VP_NORM_ANY, &err), VP_EINVAL);
    p->config.final_norm = VP_FINAL_NORM_DEFAULT;
    /* the narrowest widths allowed: p + 4, and 16 under an output norm */
    assert_int_equal(vp_closed_grad(p, 5, VP_NORM_RMSNORM, &err), VP_OK);
    assert_int_equal(vp_closed_grad(p, 6, VP_NORM_LAYERNORM, &err), VP_OK);
    assert_true(isfinite(p->rows[0].grad_var) && p->rows[0].grad_var > 0.0);
    vp_profile *sandwich = closed_with_grad(VP_SANDWICH, 2, 1.0);
    assert_int_equal(vp_closed_grad(sandwich, 15, VP_NORM_RMSNORM, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "under sandwich"));
    assert_non_null(strstr(err.message, "or 16 up"));
    assert_int_equal(vp_closed_grad(sandwich, 16, VP_NORM_RMSNORM, &err), VP_OK);
    vp_profile_free(sandwich);
    vp_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_matches_reference),
        cmocka_unit_test(test_issue_figures),
        cmocka_unit_test(test_pre_norm_without_final_norm),
        cmocka_unit_test(test_finite_width_properties),
        cmocka_unit_test(test_silent_normalised_branch),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_refusals),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
