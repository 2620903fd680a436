/* The gradient arena (src/forward/grads.h): one slot per tensor of the
 * model in fw_model_tensors' order, each found from its tensor's address;
 * and a backward pass that makes its gradients in the arena gives the same
 * bits as one that hands them out from its own buffers, on 1 and 2
 * threads, for MLP-only and attention models, tied and untied, with
 * learned positions, QK-norm, gated MLPs and grouped-query attention. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "forward/grads.h"
#include "forward/network.h"
#include "forward/workspace.h"
#include "test_filter.h"
#include "varprof/varprof.h"

#define MAX_TENSORS 64

typedef struct {
    char name[FW_TENSOR_NAME_MAX];
    size_t n;
    float *data; /* the tensor's values, or the gradient handed out */
} tensor;

typedef struct {
    tensor t[MAX_TENSORS];
    size_t count;
} tensors;

static vp_status list_tensor(void *ctx, const fw_tensor *t)
{
    tensors *ts = ctx;
    assert_true(ts->count < MAX_TENSORS);
    tensor *e = &ts->t[ts->count++];
    snprintf(e->name, sizeof e->name, "%s", t->name);
    e->n = t->rows * (t->cols ? t->cols : 1);
    e->data = t->data;
    return VP_OK;
}

/* Each gradient handed out, copied, in the order it came. */
static void copy_grad(void *ctx, const vp_param_grad *g)
{
    tensors *ts = ctx;
    assert_true(ts->count < MAX_TENSORS);
    tensor *e = &ts->t[ts->count++];
    snprintf(e->name, sizeof e->name, "%s", g->name);
    e->n = g->shape[0] * (g->rank == 2 ? g->shape[1] : 1);
    e->data = malloc(e->n * sizeof *e->data);
    assert_non_null(e->data);
    memcpy(e->data, g->gradient, e->n * sizeof *e->data);
}

static void free_copies(tensors *ts)
{
    for (size_t i = 0; i < ts->count; i++)
        free(ts->t[i].data);
}

typedef struct {
    const char *what;
    vp_placement placement;
    int mlp_only;
    vp_norm norm;
    vp_mlp mlp;
    vp_bias bias;
    vp_positions positions;
    int qk_norm, tied;
    size_t kv_heads;
} shape;

static const shape shapes[] = {
    {"pre-norm MLP", VP_PRE_NORM, 1, VP_NORM_LAYERNORM, VP_MLP_GELU, VP_BIAS_ALL, VP_POSITIONS_NONE,
     0, 0, 0},
    {"post-ln MLP", VP_POST_LN, 1, VP_NORM_LAYERNORM, VP_MLP_GELU, VP_BIAS_ALL, VP_POSITIONS_NONE,
     0, 0, 0},
    {"Llama-like", VP_PRE_NORM, 0, VP_NORM_RMSNORM, VP_MLP_SWIGLU, VP_BIAS_QKV, VP_POSITIONS_ROPE,
     VP_QK_NORM_HEAD, 0, 1},
    {"GPT-2-like, tied", VP_PRE_NORM, 0, VP_NORM_LAYERNORM, VP_MLP_GELU_TANH, VP_BIAS_ALL,
     VP_POSITIONS_LEARNED, 0, 1, 0},
    {"sandwich", VP_SANDWICH, 0, VP_NORM_LAYERNORM, VP_MLP_GEGLU, VP_BIAS_NONE, VP_POSITIONS_NONE,
     0, 0, 0},
    {"parallel", VP_PARALLEL, 0, VP_NORM_LAYERNORM, VP_MLP_RELU, VP_BIAS_ALL, VP_POSITIONS_NONE, 0,
     0, 0},
};

typedef struct {
    vp_config cfg;
    vp_forward_options o;
    fw_model *m;
    uint32_t ids[16];
} net;

static void net_make(net *n, const shape *s, size_t threads)
{
    memset(n, 0, sizeof *n);
    vp_config_init(&n->cfg, s->placement, 2);
    n->cfg.mlp_only = s->mlp_only;
    n->cfg.grad = 1;
    vp_forward_options_init(&n->o);
    n->o.width = 8;
    n->o.heads = 2;
    n->o.kv_heads = s->kv_heads;
    n->o.ffn_mult = 2;
    n->o.vocab = 11;
    n->o.batch = 2;
    n->o.tokens = 4;
    n->o.threads = threads;
    n->o.norm = s->norm;
    n->o.mlp = s->mlp;
    n->o.bias = s->bias;
    n->o.positions = s->positions;
    n->o.qk_norm = s->qk_norm;
    n->o.tie_embeddings = s->tied;
    n->o.seed = 3;
    n->m = fw_model_alloc_trainable(&n->cfg, &n->o, kern_current());
    assert_non_null(n->m);
    vp_error err;
    assert_int_equal(fw_model_init(n->m, &n->cfg, &n->o, &err), VP_OK);
    for (size_t i = 0; i < n->o.batch * n->o.tokens; i++)
        n->ids[i] = (uint32_t)((i * 7 + 2) % n->o.vocab);
}

/* One forward and backward, the gradients handed to ts; in grads when it
 * is not NULL. */
static void net_run(net *n, tensors *ts, const fw_grads *grads)
{
    vp_profile *p = vp_profile_alloc(vp_config_sub_blocks(&n->cfg));
    assert_non_null(p);
    p->sub_blocks = vp_config_sub_blocks(&n->cfg);
    p->n_rows = p->sub_blocks + 1;
    vp_forward_options o = n->o;
    o.on_param_grad = copy_grad;
    o.param_grad_ctx = ts;
    vp_error err;
    fw_workspace *ws = NULL;
    assert_int_equal(fw_workspace_create(n->m, o.batch, o.tokens, o.threads, &ws, &err), VP_OK);
    fw_workspace_set_grads(ws, grads);
    if (fw_run_network(n->m, &n->cfg, &o, n->ids, p, ws, &err) != VP_OK) {
        print_error("fw_run_network: %s\n", err.message);
        fail();
    }
    fw_workspace_free(ws);
    vp_profile_free(p);
}

/* The slots are the model's tensors, in order, each at its own 64-byte
   aligned place in the block, found by its values' address and by no
   other. */
static void slots_mirror_the_tensors(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        net n;
        net_make(&n, &shapes[k], 1);
        tensors want = {0};
        assert_int_equal(fw_model_tensors(n.m, list_tensor, &want), VP_OK);
        fw_grads *g = NULL;
        vp_error err;
        assert_int_equal(fw_grads_create(n.m, &g, &err), VP_OK);
        assert_int_equal(fw_grads_count(g), want.count);
        const fw_grad_slot *s = fw_grads_slots(g);
        size_t end = 0;
        for (size_t i = 0; i < want.count; i++) {
            assert_string_equal(s[i].name, want.t[i].name);
            assert_int_equal(s[i].n, want.t[i].n);
            assert_ptr_equal(s[i].param, want.t[i].data);
            assert_ptr_equal(s[i].grad, fw_grads_block(g) + s[i].offset);
            assert_int_equal(s[i].offset % 16, 0);
            assert_true(s[i].offset >= end); /* after the last slot: none overlap */
            end = s[i].offset + s[i].n;
            assert_ptr_equal(fw_grads_slot_of(g, want.t[i].data), &s[i]);
            if (want.t[i].n > 1) /* inside a tensor starts no slot */
                assert_null(fw_grads_slot_of(g, want.t[i].data + 1));
            for (size_t j = 0; j < s[i].n; j++)
                assert_true(s[i].grad[j] == 0.0f);
        }
        assert_true(end <= fw_grads_floats(g));
        fw_grads_free(g);
        fw_model_free(n.m);
    }
    fw_grads_free(NULL);
}

/* The arena's gradients are the bits the backward hands out without it,
   each handed out from its slot, on 1 and 2 threads. */
static void arena_changes_no_gradient(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        for (size_t threads = 1; threads <= 2; threads++) {
            net n;
            net_make(&n, &shapes[k], threads);
            tensors plain = {0}, got = {0};
            net_run(&n, &plain, NULL);
            fw_grads *g = NULL;
            vp_error err;
            assert_int_equal(fw_grads_create(n.m, &g, &err), VP_OK);
            net_run(&n, &got, g);
            const fw_grad_slot *s = fw_grads_slots(g);
            assert_int_equal(got.count, fw_grads_count(g));
            assert_int_equal(plain.count, got.count);
            for (size_t i = 0; i < got.count; i++) {
                assert_string_equal(got.t[i].name, plain.t[i].name);
                const fw_grad_slot *slot = NULL;
                for (size_t j = 0; j < fw_grads_count(g); j++)
                    if (strcmp(s[j].name, got.t[i].name) == 0)
                        slot = &s[j];
                assert_non_null(slot);
                assert_int_equal(slot->n, got.t[i].n);
                if (memcmp(slot->grad, plain.t[i].data, slot->n * sizeof(float)) != 0 ||
                    memcmp(got.t[i].data, plain.t[i].data, slot->n * sizeof(float)) != 0) {
                    print_error("%s, %zu threads: %s differs with the arena\n", shapes[k].what,
                                threads, slot->name);
                    fail();
                }
            }
            free_copies(&plain);
            free_copies(&got);
            fw_grads_free(g);
            fw_model_free(n.m);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slots_mirror_the_tensors),
        cmocka_unit_test(arena_changes_no_gradient),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
