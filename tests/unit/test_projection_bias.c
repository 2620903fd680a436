/* --bias (issue 15): a projection without a bias is the same projection
 * with a zero bias. From tests/data/attn_grads_pre_norm.safetensors (every
 * projection biased, attention with QK-norm, a head), two files are made in
 * memory: one with the chosen biases set to zero, one without those tensors.
 * Both must give the same profile to the bit, forward and backward, and the
 * same gradient for every tensor they share; the one without the biases has
 * no gradient for them, and vp_forward_infer reads its setting from the
 * names. The command line's refusals are tests/program/test_cli_projection_bias.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "renamed_case.h"
#include "run_program.h"
#include "test_filter.h"
#include "varprof/varprof.h"

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The projections' biases, q, k and v apart from the others (o, the MLP's,
   the head's); the norms' biases are not projections'. */
static int is_qkv_bias(const char *name)
{
    return ends_with(name, ".attn.q.bias") || ends_with(name, ".attn.k.bias") ||
           ends_with(name, ".attn.v.bias");
}

static int is_other_bias(const char *name)
{
    return ends_with(name, ".attn.o.bias") || ends_with(name, ".mlp.fc1.bias") ||
           ends_with(name, ".mlp.fc2.bias") || strcmp(name, "head.bias") == 0;
}

typedef int (*name_test)(const char *name);

static int is_any_bias(const char *name)
{
    return is_qkv_bias(name) || is_other_bias(name);
}

/* A copy of the file whose tensors that `chosen` names are zero. */
static vp_safetensors zeroed(const vp_safetensors *file, name_test chosen)
{
    vp_safetensors z = *file;
    z.data = malloc(file->data_size);
    assert_non_null(z.data);
    memcpy(z.data, file->data, file->data_size);
    for (size_t t = 0; t < file->count; t++)
        if (chosen(file->tensors[t].name)) {
            assert_int_equal(file->tensors[t].dtype, VP_DTYPE_F32); /* 0x00000000 is +0.0f */
            memset(z.data + file->tensors[t].begin, 0,
                   file->tensors[t].end - file->tensors[t].begin);
        }
    return z;
}

/* The file without the tensors `chosen` names: the same data, fewer entries. */
static vp_safetensors without(const vp_safetensors *file, name_test chosen)
{
    vp_safetensors w = *file;
    w.tensors = calloc(file->count, sizeof *w.tensors);
    assert_non_null(w.tensors);
    w.count = 0;
    for (size_t t = 0; t < file->count; t++)
        if (!chosen(file->tensors[t].name))
            w.tensors[w.count++] = file->tensors[t];
    return w;
}

/* The file's network, its loss's backward included, on 2 x 7 tokens. */
static vp_profile *run(const vp_safetensors *file, vp_bias *bias_seen, case_gradients *grads)
{
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 1);
    cfg.grad = 1;
    vp_forward_options o;
    vp_forward_options_init(&o);
    vp_error err;
    if (vp_forward_infer(file, &cfg, &o, &err) != VP_OK)
        fail_msg("vp_forward_infer: %s", err.message);
    *bias_seen = o.bias;
    o.weights = file;
    o.batch = 2;
    o.tokens = 7;
    o.threads = 2;
    o.loss = VP_LOSS_COPY;
    o.on_param_grad = case_gradients_collect;
    o.param_grad_ctx = grads;
    vp_profile *p = NULL;
    if (vp_forward_profile(&cfg, &o, &p, &err) != VP_OK)
        fail_msg("vp_forward_profile: %s", err.message);
    return p;
}

/* The zeroed file and the one without those biases: the same figures to the
   bit, the same gradients for every tensor both have, and none for the
   missing biases. */
static void check_same(const vp_safetensors *file, name_test dropped, vp_bias want)
{
    vp_safetensors z = zeroed(file, dropped), w = without(file, dropped);
    case_gradients gz = {0}, gw = {0};
    vp_bias bias_z, bias_w;
    vp_profile *pz = run(&z, &bias_z, &gz), *pw = run(&w, &bias_w, &gw);
    assert_int_equal(bias_z, VP_BIAS_ALL);
    assert_int_equal(bias_w, want);
    assert_int_equal(pz->n_rows, pw->n_rows);
    assert_true(pz->loss == pw->loss);
    for (size_t k = 0; k < pz->n_rows; k++) {
        const vp_row *a = &pz->rows[k], *b = &pw->rows[k];
        if (a->stream_var != b->stream_var || a->grad_var != b->grad_var ||
            a->weight_grad != b->weight_grad || a->update_ratio != b->update_ratio)
            fail_msg("sub-block %zu: zero biases give stream_var %.17g, grad_var %.17g, "
                     "weight_grad %.17g; no biases %.17g, %.17g, %.17g",
                     k, a->stream_var, a->grad_var, a->weight_grad, b->stream_var, b->grad_var,
                     b->weight_grad);
    }
    size_t missing = 0;
    for (size_t i = 0; i < gz.count; i++) {
        const double *other = case_gradient_find(&gw, gz.name[i]);
        if (dropped(gz.name[i])) {
            assert_null(other);
            missing++;
            continue;
        }
        if (!other)
            fail_msg("no gradient for %s without the biases", gz.name[i]);
        if (*other != gz.frobenius[i])
            fail_msg("%s: |grad| %.17g with zero biases, %.17g without", gz.name[i],
                     gz.frobenius[i], *other);
    }
    assert_int_equal(gw.count + missing, gz.count);
    print_message("  --bias %s: %zu sub-blocks the same to the bit, %zu gradients the same, "
                  "%zu bias tensors absent; loss %.6g\n",
                  vp_bias_name(want), pz->n_rows, gw.count, missing, pw->loss);
    vp_profile_free(pz);
    vp_profile_free(pw);
    free(z.data);
    free(w.tensors);
}

static vp_safetensors read_data(void)
{
    vp_safetensors file;
    vp_error err;
    if (vp_safetensors_read(test_data_path("attn_grads_pre_norm.safetensors"), &file, &err) !=
        VP_OK)
        fail_msg("%s", err.message);
    return file;
}

static void no_bias_is_a_zero_bias(void **state)
{
    (void)state;
    vp_safetensors file = read_data();
    check_same(&file, is_any_bias, VP_BIAS_NONE);
    vp_safetensors_free(&file);
}

static void qkv_alone_is_the_others_zero(void **state)
{
    (void)state;
    vp_safetensors file = read_data();
    check_same(&file, is_other_bias, VP_BIAS_QKV);
    vp_safetensors_free(&file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_bias_is_a_zero_bias),
        cmocka_unit_test(qkv_alone_is_the_others_zero),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
