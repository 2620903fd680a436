/* The architecture's axis tables (varprof/architecture.h) and the name
 * tables behind them (core/name_table.h): every row's name parses back to
 * its value, unknown names are refused with the "one of" list built from
 * the table, the static facts say what the kinds are, and each activation's
 * second moment matches an independent numeric integral of act(z)^2. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h> /* M_PI, which C11 does not define */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/name_table.h"
#include "test_filter.h"
#include "varprof/varprof.h"

/* ---- the name-table helper ---- */

static const char *const colours[] = {"red", "green", "blue"};

static const struct {
    const char *name;
    const char *gloss;
    int weight;
} glossed[] = {{"yes", "all of them", 1}, {"no", "none", 0}};

static void name_table_names_and_finds(void **state)
{
    (void)state;
    const name_table t = NAME_LIST(colours);
    assert_int_equal(t.count, 3);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(name_table_name(t, i), colours[i]);
        assert_int_equal(name_table_find(t, colours[i]), i);
    }
    assert_null(name_table_name(t, -1));
    assert_null(name_table_name(t, 3));
    assert_int_equal(name_table_find(t, "Red"), -1);
    assert_int_equal(name_table_find(t, ""), -1);
    assert_int_equal(name_table_find(t, NULL), -1);
    const name_table rows = NAME_ROWS(glossed);
    assert_int_equal(rows.count, 2);
    assert_string_equal(name_table_name(rows, 1), "no");
    assert_int_equal(name_table_find(rows, "no"), 1);
}

static void name_table_lists_and_refuses(void **state)
{
    (void)state;
    char buf[64];
    name_table_list(NAME_LIST(colours), buf, sizeof buf);
    assert_string_equal(buf, "red, green, blue");
    name_table_list(NAME_LIST(colours), buf, 8); /* truncated, still a string */
    assert_string_equal(buf, "red, gr");
    name_table t = NAME_ROWS(glossed);
    t.gloss = &glossed[0].gloss;
    name_table_list(t, buf, sizeof buf);
    assert_string_equal(buf, "yes (all of them), no (none)");
    int value = -1;
    assert_int_equal(name_table_parse(NAME_LIST(colours), "colour", "blue", &value, NULL), VP_OK);
    assert_int_equal(value, 2);
    vp_error err = {0};
    value = 7;
    assert_int_equal(name_table_parse(NAME_LIST(colours), "colour", "mauve", &value, &err),
                     VP_EINVAL);
    assert_int_equal(value, 7); /* left as it was */
    assert_string_equal(err.message, "colour 'mauve' is not one of: red, green, blue");
}

/* ---- every axis: names both ways, and the messages the manual quotes ---- */

typedef struct {
    int count;
    const char *(*name)(int value);
    vp_status (*parse)(const char *name, int *out, vp_error *err);
    const char *refusal; /* the message for the name "bogus" */
} axis;

static const char *mlp_name(int v)
{
    return vp_mlp_name((vp_mlp)v);
}
static vp_status mlp_parse(const char *n, int *out, vp_error *err)
{
    vp_mlp m = VP_MLP_COUNT;
    const vp_status s = vp_mlp_parse(n, &m, err);
    *out = (int)m;
    return s;
}
static const char *bias_name(int v)
{
    return vp_bias_name((vp_bias)v);
}
static vp_status bias_parse(const char *n, int *out, vp_error *err)
{
    vp_bias b = VP_BIAS_COUNT;
    const vp_status s = vp_bias_parse(n, &b, err);
    *out = (int)b;
    return s;
}
static const char *loss_name(int v)
{
    return vp_loss_name((vp_loss)v);
}
static vp_status loss_parse(const char *n, int *out, vp_error *err)
{
    vp_loss l = VP_LOSS_COUNT;
    const vp_status s = vp_loss_parse(n, &l, err);
    *out = (int)l;
    return s;
}
static const char *positions_name(int v)
{
    return vp_positions_name((vp_positions)v);
}
static vp_status positions_parse(const char *n, int *out, vp_error *err)
{
    vp_positions p = VP_POSITIONS_COUNT;
    const vp_status s = vp_positions_parse(n, &p, err);
    *out = (int)p;
    return s;
}
static const char *placement_name(int v)
{
    return vp_placement_name((vp_placement)v);
}
static vp_status placement_parse(const char *n, int *out, vp_error *err)
{
    vp_placement p = VP_PLACEMENT_COUNT;
    const vp_status s = vp_placement_parse(n, &p, err);
    *out = (int)p;
    return s;
}
static const char *task_name(int v)
{
    return vp_task_name((vp_task)v);
}
static vp_status task_parse(const char *n, int *out, vp_error *err)
{
    vp_task t = VP_TASK_COUNT;
    const vp_status s = vp_task_parse(n, &t, err);
    *out = (int)t;
    return s;
}
static const char *schedule_name(int v)
{
    return vp_schedule_name((vp_schedule)v);
}
static vp_status schedule_parse(const char *n, int *out, vp_error *err)
{
    vp_schedule t = VP_SCHEDULE_COUNT;
    const vp_status s = vp_schedule_parse(n, &t, err);
    *out = (int)t;
    return s;
}

static const axis axes[] = {
    {VP_MLP_COUNT, mlp_name, mlp_parse,
     "MLP 'bogus' is not one of: gelu, gelu-tanh, relu, swiglu, geglu, geglu-tanh"},
    {VP_BIAS_COUNT, bias_name, bias_parse,
     "bias 'bogus' is not one of: yes (every projection), no (none), qkv (the attention's q, "
     "k and v alone), mlp (the MLP's and the head's alone)"},
    {VP_LOSS_COUNT, loss_name, loss_parse, "loss 'bogus' is not one of: copy, next, random"},
    {VP_POSITIONS_COUNT, positions_name, positions_parse,
     "positions 'bogus' is not one of: none, learned, rope, rope-interleaved, alibi"},
    {VP_PLACEMENT_COUNT, placement_name, placement_parse,
     "unknown placement 'bogus'; valid: post-ln, pre-norm (or pre-ln), sandwich (or "
     "peri-norm), output-norm, deepnorm, parallel, none, all"},
    {VP_TASK_COUNT, task_name, task_parse, "task 'bogus' is not one of: copy, next"},
    {VP_SCHEDULE_COUNT, schedule_name, schedule_parse,
     "schedule 'bogus' is not one of: constant, cosine"},
};

static void every_row_round_trips(void **state)
{
    (void)state;
    for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++) {
        for (int v = 0; v < axes[a].count; v++) {
            const char *name = axes[a].name(v);
            assert_non_null(name);
            int back = -1;
            assert_int_equal(axes[a].parse(name, &back, NULL), VP_OK);
            assert_int_equal(back, v);
            for (int w = 0; w < v; w++) /* no two rows share a name */
                assert_string_not_equal(axes[a].name(w), name);
        }
        vp_error err = {0};
        int back = -1;
        assert_int_equal(axes[a].parse("bogus", &back, &err), VP_EINVAL);
        assert_string_equal(err.message, axes[a].refusal);
    }
    /* out of range: NULL for the architecture's axes */
    assert_null(vp_mlp_name(VP_MLP_COUNT));
    assert_null(vp_bias_name(VP_BIAS_COUNT));
    assert_null(vp_loss_name(VP_LOSS_COUNT));
    assert_null(vp_positions_name(VP_POSITIONS_COUNT));
    assert_null(vp_activation_name(VP_ACTIVATION_COUNT));
    assert_null(vp_placement_name(VP_PLACEMENT_COUNT));
}

/* The profile's enums keep the words the outputs have always written. */
/* An enum filled in by hand is checked against its table: each value in
   range passes, one past the end is refused with the whole list, as a
   reader would type it. */
static void hand_set_values_are_checked(void **state)
{
    (void)state;
    vp_error err = {0};
    for (int i = 0; i < VP_MLP_COUNT; i++)
        assert_int_equal(vp_mlp_check((vp_mlp)i, &err), VP_OK);
    for (int i = 0; i < VP_BIAS_COUNT; i++)
        assert_int_equal(vp_bias_check((vp_bias)i, &err), VP_OK);
    for (int i = 0; i < VP_LOSS_COUNT; i++)
        assert_int_equal(vp_loss_check((vp_loss)i, &err), VP_OK);
    for (int i = 0; i < VP_POSITIONS_COUNT; i++)
        assert_int_equal(vp_positions_check((vp_positions)i, &err), VP_OK);
    assert_int_equal(vp_mlp_check(VP_MLP_COUNT, &err), VP_EINVAL);
    assert_string_equal(
        err.message, "MLP kind 6 is not one of: gelu, gelu-tanh, relu, swiglu, geglu, geglu-tanh");
    assert_int_equal(vp_bias_check((vp_bias)-1, &err), VP_EINVAL);
    assert_string_equal(err.message, "bias setting -1 is not one of: yes, no, qkv, mlp");
    assert_int_equal(vp_loss_check(VP_LOSS_COUNT, &err), VP_EINVAL);
    assert_string_equal(err.message, "loss 3 is not one of: copy, next, random");
    assert_int_equal(vp_positions_check(VP_POSITIONS_COUNT, &err), VP_EINVAL);
    assert_non_null(strstr(err.message, "is not one of: none, learned, rope"));
}

static void profile_names_are_the_outputs_words(void **state)
{
    (void)state;
    assert_string_equal(vp_engine_name(VP_ENGINE_MC), "mc");
    assert_string_equal(vp_engine_name(VP_ENGINE_COUNT), "");
    assert_string_equal(vp_engine_title(VP_ENGINE_FORWARD), "forward pass");
    assert_string_equal(vp_norm_name(VP_NORM_ANY), "");
    assert_string_equal(vp_norm_name(VP_NORM_RMSNORM), "rmsnorm");
    assert_string_equal(vp_sampling_method_name(VP_SAMPLING_NONE), "");
    assert_string_equal(vp_sampling_method_name(VP_SAMPLING_LOADED), "loaded weights");
    assert_string_equal(vp_overflow_name(VP_OVERFLOW_NONE), "");
    assert_string_equal(vp_overflow_name(VP_OVERFLOW_FLOAT_GRAD),
                        "gradient (float gradients out of range)");
    assert_string_equal(vp_dtype_name(VP_DTYPE_BF16), "BF16");
    assert_string_equal(vp_dtype_name((vp_dtype)3), "?");
    assert_string_equal(vp_isa_name(VP_ISA_AVX2), "avx2");
    assert_string_equal(vp_isa_name(VP_ISA_COUNT), "unknown");
    assert_string_equal(vp_part_name(VP_PART_BLOCK), "block");
    assert_string_equal(vp_task_name(VP_TASK_COUNT), "unknown");
}

/* ---- the static facts ---- */

static void the_rows_say_what_the_kinds_are(void **state)
{
    (void)state;
    for (int m = 0; m < VP_MLP_COUNT; m++) {
        const vp_mlp_traits *t = vp_mlp_traits_of((vp_mlp)m);
        assert_non_null(t);
        assert_string_equal(t->name, vp_mlp_name((vp_mlp)m));
        const int gated = m == VP_MLP_SWIGLU || m == VP_MLP_GEGLU || m == VP_MLP_GEGLU_TANH;
        assert_int_equal(t->gated, gated);
        assert_int_equal(vp_mlp_gated((vp_mlp)m), gated);
        /* only the two-matrix erf GELU keeps Phi for its backward */
        assert_int_equal(t->keeps_cdf, m == VP_MLP_GELU);
        assert_non_null(vp_activation_traits_of(t->activation));
    }
    assert_int_equal(vp_mlp_gated(VP_MLP_COUNT), 0);
    assert_null(vp_mlp_traits_of(VP_MLP_COUNT));
    assert_int_equal(vp_mlp_traits_of(VP_MLP_SWIGLU)->activation, VP_ACTIVATION_SILU);
    assert_int_equal(vp_mlp_traits_of(VP_MLP_GEGLU)->activation, VP_ACTIVATION_GELU_ERF);
    assert_int_equal(vp_mlp_traits_of(VP_MLP_GEGLU_TANH)->activation, VP_ACTIVATION_GELU_TANH);
    assert_int_equal(vp_mlp_traits_of(VP_MLP_RELU)->activation, VP_ACTIVATION_RELU);
    /* positions: a table for learned, a rotation for rope, neither for none */
    assert_int_equal(vp_positions_traits_of(VP_POSITIONS_NONE)->table +
                         vp_positions_traits_of(VP_POSITIONS_NONE)->rotary,
                     0);
    assert_true(vp_positions_traits_of(VP_POSITIONS_LEARNED)->table);
    assert_true(vp_positions_traits_of(VP_POSITIONS_ROPE)->rotary);
    assert_null(vp_positions_traits_of(VP_POSITIONS_COUNT));
    /* biases: all, none, q k v alone */
    assert_true(vp_bias_traits_of(VP_BIAS_ALL)->qkv && vp_bias_traits_of(VP_BIAS_ALL)->others);
    assert_false(vp_bias_traits_of(VP_BIAS_NONE)->qkv || vp_bias_traits_of(VP_BIAS_NONE)->others);
    assert_true(vp_bias_traits_of(VP_BIAS_QKV)->qkv && !vp_bias_traits_of(VP_BIAS_QKV)->others);
    /* GPT-J's: the MLP's and the head's, none of the attention's */
    assert_true(vp_bias_traits_of(VP_BIAS_MLP)->others && !vp_bias_traits_of(VP_BIAS_MLP)->qkv &&
                !vp_bias_traits_of(VP_BIAS_MLP)->attn_out);
    assert_true(vp_bias_traits_of(VP_BIAS_ALL)->attn_out &&
                !vp_bias_traits_of(VP_BIAS_QKV)->attn_out);
    /* losses: random alone needs no head and draws from the seed */
    for (int l = 0; l < VP_LOSS_COUNT; l++) {
        assert_int_equal(vp_loss_traits_of((vp_loss)l)->needs_head, l != VP_LOSS_RANDOM);
        assert_int_equal(vp_loss_traits_of((vp_loss)l)->seeded, l == VP_LOSS_RANDOM);
    }
    assert_null(vp_loss_traits_of(VP_LOSS_COUNT));
    assert_null(vp_bias_traits_of(VP_BIAS_COUNT));
}

/* ---- the second moments, against act(z)^2 integrated as written ---- */

/* the activations from their definitions, not from the table's ratios */
static double act(vp_activation a, double z)
{
    switch (a) {
    case VP_ACTIVATION_GELU_ERF: return 0.5 * z * (1.0 + erf(z / sqrt(2.0)));
    case VP_ACTIVATION_GELU_TANH:
        return 0.5 * z * (1.0 + tanh(sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z)));
    case VP_ACTIVATION_RELU: return z > 0.0 ? z : 0.0;
    case VP_ACTIVATION_SILU: return z / (1.0 + exp(-z));
    case VP_ACTIVATION_COUNT: break;
    }
    return NAN;
}

typedef struct {
    vp_activation a;
    double s;
} moment_args;

/* act(z)^2 times z's density, z ~ N(0, s^2) */
static double direct(double z, void *params)
{
    const moment_args *m = params;
    const double f = act(m->a, z), u = z / m->s;
    return f * f * exp(-0.5 * u * u) / (m->s * sqrt(2.0 * M_PI));
}

/* the table's form: s^2 times t^2 ratio(s t)^2 phi(t) */
static double by_ratio(double t, void *params)
{
    const moment_args *m = params;
    const double r = vp_activation_traits_of(m->a)->ratio(m->s * t);
    return m->s * m->s * t * t * r * r * exp(-0.5 * t * t) / sqrt(2.0 * M_PI);
}

static double integrate(double (*f)(double, void *), moment_args *args)
{
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(400);
    assert_non_null(w);
    gsl_function fn = {f, args};
    double result = NAN, abserr = NAN;
    assert_int_equal(gsl_integration_qagi(&fn, 1e-14, 1e-11, 400, w, &result, &abserr),
                     GSL_SUCCESS);
    gsl_integration_workspace_free(w);
    return result;
}

/* 1e-8 relative: both integrals converge to 1e-11, and the two forms
   differ in rounding alone */
#define MOMENT_TOLERANCE 1e-8

static void second_moments_match_the_integral(void **state)
{
    (void)state;
    gsl_set_error_handler_off();
    const double scales[] = {0.05, 0.5, 1.0, 2.0, 7.0};
    for (int a = 0; a < VP_ACTIVATION_COUNT; a++) {
        const vp_activation_traits *t = vp_activation_traits_of((vp_activation)a);
        assert_non_null(t);
        assert_non_null(t->ratio);
        assert_string_equal(t->name, vp_activation_name((vp_activation)a));
        for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
            moment_args args = {(vp_activation)a, scales[i]};
            const double want = integrate(direct, &args);
            const double got = t->exact_moment > 0.0 ? t->exact_moment * scales[i] * scales[i]
                                                     : integrate(by_ratio, &args);
            const double rel = fabs(got - want) / want;
            if (!(rel <= MOMENT_TOLERANCE)) {
                print_error("%s at s = %g: E[act^2] %.12g, the integral of act^2 %.12g "
                            "(%.2g relative)\n",
                            t->name, scales[i], got, want, rel);
                fail();
            }
        }
    }
    assert_null(vp_activation_traits_of(VP_ACTIVATION_COUNT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(name_table_names_and_finds),
        cmocka_unit_test(name_table_lists_and_refuses),
        cmocka_unit_test(every_row_round_trips),
        cmocka_unit_test(hand_set_values_are_checked),
        cmocka_unit_test(profile_names_are_the_outputs_words),
        cmocka_unit_test(the_rows_say_what_the_kinds_are),
        cmocka_unit_test(second_moments_match_the_integral),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
