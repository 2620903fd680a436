/* Weights drawn on the fly (src/forward/weight_draw.c and the matmul's
 * drawn path, matmul_internal.h): a weight is a pure function of (seed,
 * tensor, row, column), made panel by panel inside the matmul and dropped.
 * The generators' panels (gauss_panel and uniform_panel, every ISA) hold
 * the scalar draws (vp_gauss_fill, fw_draw_values) where the packed layout
 * puts them.
 * The reference for the rest is the stored path: the same tensor drawn whole
 * (fw_draw_values from 0), packed, and multiplied. Checked bit for bit:
 * - the matmul, on every ISA this CPU runs, for normal and uniform draws, W
 *   and W^T (the backward's), random column cuts (how threads share it) and
 *   three block-size settings (this CPU's caches, a small core's, a large
 *   one's), with k across several blocks so that x is packed;
 * - whole networks, drawn against stored (vp_forward_options.stored_weights),
 *   on 1, 2 and 3 threads, on every ISA, with every tensor kind (q, k, v, o,
 *   gate, up, down, fc1, fc2, the embedding, the head, tied or not) and the
 *   backward pass: every profile figure and every parameter gradient.
 * The command line's side is tests/program/test_cli_drawn_weights.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "forward/network.h"
#include "forward/weight_draw.h"
#include "kernels/kern_variants.h"
#include "test_filter.h"
#include "varprof/gauss.h"
#include "varprof/isa.h"

typedef struct {
    void (*reblock)(size_t l1, size_t l2);
} reblock_fn;

static const reblock_fn reblocks[VP_ISA_COUNT] = {
    {kern_matmul_reblock_scalar},
#if defined(__x86_64__)
    {kern_matmul_reblock_avx2},
    {kern_matmul_reblock_avx512},
#endif
};

/* out of the stored path: W (or W^T) drawn whole, packed, multiplied */
static float *stored_product(const kern_table *kn, const fw_draw *d, const float *x, size_t n,
                             const float *bias)
{
    const size_t k = d->transposed ? d->rows : d->cols, m = d->transposed ? d->cols : d->rows;
    float *w = malloc(d->rows * d->cols * sizeof *w);
    float *wt = malloc(d->rows * d->cols * sizeof *wt);
    float *packed = malloc(kn->matmul_packed_floats(k, m) * sizeof *packed);
    float *ws = malloc((kn->matmul_workspace_floats(n, k, m) + 1) * sizeof *ws);
    float *out = malloc(n * m * sizeof *out);
    assert_true(w && wt && packed && ws && out);
    fw_draw whole = *d;
    whole.transposed = 0;
    fw_draw_values(&whole, w, d->rows * d->cols, 0);
    if (d->transposed) { /* W^T [cols][rows] as a matrix of its own */
        for (size_t r = 0; r < d->rows; r++)
            for (size_t c = 0; c < d->cols; c++)
                wt[c * d->rows + r] = w[r * d->cols + c];
        kn->matmul_pack(packed, wt, k, m);
    } else {
        kn->matmul_pack(packed, w, k, m);
    }
    kn->matmul(out, m, x, k, packed, bias, n, k, m, ws);
    free(w), free(wt), free(packed), free(ws);
    return out;
}

/* out of the drawn path, its columns in cuts of 1..3 column blocks */
static float *drawn_product(const kern_table *kn, const fw_draw *d, const float *x, size_t n,
                            const float *bias, unsigned cut_seed)
{
    const size_t k = d->transposed ? d->rows : d->cols, m = d->transposed ? d->cols : d->rows;
    float *ws = malloc((kn->matmul_drawn_workspace_floats(n, k, m) + 1) * sizeof *ws);
    float *out = malloc(n * m * sizeof *out);
    assert_true(ws && out);
    const kern_panel_source src = fw_draw_source(d);
    const size_t block = kn->matmul_column_block(m);
    for (size_t j0 = 0, j1; j0 < m; j0 = j1) {
        cut_seed = cut_seed * 1103515245u + 12345u;
        j1 = j0 + block * (1 + (cut_seed >> 16) % 3);
        j1 = j1 < m ? j1 : m;
        kn->matmul_drawn_columns(out, m, x, k, &src, bias, n, k, m, j0, j1, ws);
    }
    free(ws);
    return out;
}

static void check_shape(vp_isa isa, const char *setting, size_t n, size_t in, size_t out,
                        fw_draw_kind kind, int transposed, unsigned seed)
{
    const kern_table *kn = kern_for(isa);
    fw_draw d = {kind,
                 7 + seed,
                 3 + seed,
                 kind == FW_DRAW_NORMAL ? 0.3 : 0.05,
                 kind == FW_DRAW_UNIFORM ? 0.7 : 1.0,
                 out,
                 in,
                 transposed};
    const size_t k = transposed ? out : in, m = transposed ? in : out;
    float *x = malloc(n * k * sizeof *x), *bias = malloc(m * sizeof *bias);
    assert_true(x && bias);
    for (size_t i = 0; i < n * k; i++)
        x[i] = (float)sin(0.37 * (double)i + seed);
    for (size_t j = 0; j < m; j++)
        bias[j] = (float)cos(0.11 * (double)j);
    float *want = stored_product(kn, &d, x, n, seed & 1 ? bias : NULL);
    float *got = drawn_product(kn, &d, x, n, seed & 1 ? bias : NULL, seed);
    if (memcmp(want, got, n * m * sizeof *got) != 0)
        fail_msg("%s (%s): %s %s of %zu x %zu on %zu rows: drawn differs from stored",
                 vp_isa_name(isa), setting, kind == FW_DRAW_NORMAL ? "normal" : "uniform",
                 transposed ? "W^T" : "W", out, in, n);
    free(x), free(bias), free(want), free(got);
}

static void test_matmul_drawn_equals_stored(void **state)
{
    (void)state;
    static const size_t caches[][2] = {{0, 0}, {32 * 1024, 256 * 1024}, {64 * 1024, 2048 * 1024}};
    static const char *const names[] = {"this CPU's caches", "32 KiB L1, 256 KiB L2",
                                        "64 KiB L1, 2 MiB L2"};
    /* rows, in, out: edges of tiles and blocks, k over several KC, m over
       several MC */
    static const size_t shapes[][3] = {{1, 1, 1},      {5, 17, 33},   {13, 96, 48},
                                       {7, 1030, 130}, {3, 300, 700}, {2, 2100, 65}};
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        for (size_t c = 0; c < 3; c++) {
            reblocks[isa].reblock(caches[c][0], caches[c][1]);
            for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
                for (int t = 0; t < 2; t++)
                    for (int kind = FW_DRAW_NORMAL; kind <= FW_DRAW_UNIFORM; kind++)
                        check_shape((vp_isa)isa, names[c], shapes[s][0], shapes[s][1], shapes[s][2],
                                    (fw_draw_kind)kind, t, (unsigned)(s + c));
        }
        reblocks[isa].reblock(0, 0);
    }
}

/* ---- the generator's panels ---- */

typedef void (*gauss_panel_fn)(float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed,
                               uint32_t token, uint32_t sub_block, uint64_t first,
                               uint64_t row_stride, double scale);

static const gauss_panel_fn gauss_panels[VP_ISA_COUNT] = {
    kern_gauss_panel_scalar,
#if defined(__x86_64__)
    kern_gauss_panel_avx2,
    kern_gauss_panel_avx512,
#endif
};

/* Every variant's panel holds the scalar generator's draws, scaled in
   double, where gauss_panel's contract puts them, and zeros past the rows:
   panel widths of the tiles (and odd ones), rows short of them, blocks of k
   from 4 to 520, counters up to the 2^32 blocks bound. */
static void test_gauss_panel_equals_fill(void **state)
{
    (void)state;
    static const size_t widths[] = {1, 8, 16, 24, 40, 48, 64};
    static const size_t kcs[] = {4, 16, 12, 520};
    static const uint64_t firsts[] = {0, 4096, ((uint64_t)1 << 34) - 4 * 600 * 64};
    const double scale = 0.0441941738241592; /* 1 / sqrt(512) */
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
            for (size_t k = 0; k < sizeof kcs / sizeof *kcs; k++)
                for (size_t f = 0; f < sizeof firsts / sizeof *firsts; f++) {
                    const size_t nr = widths[w], kc = kcs[k];
                    const size_t rows = (w + k + f) % 3 == 0 ? nr : nr / 2 + 1 > nr ? nr : nr / 2;
                    const uint64_t stride = 4 * (kc + 7 * f);
                    float *got = malloc(nr * kc * sizeof *got);
                    float *row = malloc(kc * sizeof *row);
                    assert_true(got && row);
                    gauss_panels[isa](got, nr, rows, kc, 99, 17, 0xFFFFFF00u, firsts[f], stride,
                                      scale);
                    for (size_t c = 0; c < nr; c++) {
                        if (c < rows)
                            vp_gauss_fill_with(VP_ISA_SCALAR, row, kc, 99, 17, 0xFFFFFF00u,
                                               firsts[f] + c * stride);
                        for (size_t p = 0; p < kc; p++) {
                            const float want = c < rows ? (float)(scale * row[p]) : 0.0f;
                            if (memcmp(&got[p * nr + c], &want, sizeof want) != 0)
                                fail_msg("%s: panel %zu wide, %zu rows, kc %zu, first %llu: "
                                         "[%zu][%zu] = %.9g, want %.9g",
                                         vp_isa_name((vp_isa)isa), nr, rows, kc,
                                         (unsigned long long)firsts[f], p, c, got[p * nr + c],
                                         want);
                        }
                    }
                    free(got), free(row);
                }
    }
}

typedef void (*uniform_panel_fn)(float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed,
                                 uint32_t stream, uint32_t word, uint64_t first,
                                 uint64_t row_stride, double bound, double factor);

static const uniform_panel_fn uniform_panels[VP_ISA_COUNT] = {
    kern_uniform_panel_scalar,
#if defined(__x86_64__)
    kern_uniform_panel_avx2,
    kern_uniform_panel_avx512,
#endif
};

/* The uniform panels (--init torch) of every variant hold fw_draw's
   uniforms, the whole-tensor path, bit for bit: with and without a factor,
   rows short of the panel, counters up to the bound. */
static void test_uniform_panel_equals_values(void **state)
{
    (void)state;
    static const size_t widths[] = {1, 8, 24, 48, 64};
    static const size_t kcs[] = {4, 12, 520};
    static const uint64_t firsts[] = {0, 8192, ((uint64_t)1 << 34) - 4 * 600 * 64};
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
            for (size_t k = 0; k < sizeof kcs / sizeof *kcs; k++)
                for (size_t f = 0; f < sizeof firsts / sizeof *firsts; f++) {
                    const size_t nr = widths[w], kc = kcs[k], rows = (w + k) % 2 ? nr : nr / 2;
                    const uint64_t stride = 4 * (kc + 3 * f);
                    const fw_draw d = {FW_DRAW_UNIFORM,
                                       5,
                                       33,
                                       0.0220970869120796,
                                       f == 1 ? 0.7071067811865476 : 1.0,
                                       1u << 30,
                                       stride,
                                       0};
                    float *got = malloc(nr * kc * sizeof *got), *row = malloc(kc * sizeof *row);
                    assert_true(got && row);
                    uniform_panels[isa](got, nr, rows, kc, d.seed, d.stream, 0xFFFFFF01u, firsts[f],
                                        stride, d.scale, d.factor);
                    for (size_t c = 0; c < nr; c++) {
                        if (c < rows)
                            fw_draw_values(&d, row, kc, firsts[f] + c * stride);
                        for (size_t p = 0; p < kc; p++) {
                            const float want = c < rows ? row[p] : 0.0f;
                            if (memcmp(&got[p * nr + c], &want, sizeof want) != 0)
                                fail_msg("%s: uniform panel %zu wide, %zu rows, kc %zu: "
                                         "[%zu][%zu] = %.9g, want %.9g",
                                         vp_isa_name((vp_isa)isa), nr, rows, kc, p, c,
                                         got[p * nr + c], want);
                        }
                    }
                    free(got), free(row);
                }
    }
}

/* ---- whole networks ---- */

#define MAX_GRADS 64
typedef struct {
    size_t count;
    char names[MAX_GRADS][FW_TENSOR_NAME_MAX];
    double frobenius[MAX_GRADS];
} grads;

static void on_grad(void *ctx, const vp_param_grad *g)
{
    grads *gs = ctx;
    assert_true(gs->count < MAX_GRADS);
    size_t n = g->shape[0] * (g->rank == 2 ? g->shape[1] : 1);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += (double)g->gradient[i] * g->gradient[i];
    snprintf(gs->names[gs->count], FW_TENSOR_NAME_MAX, "%s", g->name);
    gs->frobenius[gs->count++] = sqrt(sum);
}

static vp_profile *run_network(vp_isa isa, const vp_config *cfg, vp_forward_options o, int stored,
                               size_t threads, grads *gs)
{
    if (!o.stored_weights) /* stored_weights 1 asks for drawn, recomputed */
        o.stored_weights = stored;
    else
        o.stored_weights = 0,
        o.activations = stored ? VP_ACTIVATIONS_KEEP : VP_ACTIVATIONS_RECOMPUTE;
    o.threads = threads;
    o.on_param_grad = cfg->grad ? on_grad : NULL;
    o.param_grad_ctx = gs;
    fw_model *m = fw_model_alloc(cfg, &o, kern_for(isa));
    assert_non_null(m);
    assert_int_equal(m->drawn, !o.stored_weights);
    assert_int_equal(m->recompute, o.activations == VP_ACTIVATIONS_RECOMPUTE);
    assert_int_equal(fw_model_init(m, cfg, &o, NULL), VP_OK);
    uint32_t ids[64];
    assert_true(o.batch * o.tokens <= 64);
    for (size_t i = 0; i < o.batch * o.tokens; i++)
        ids[i] = (uint32_t)((i * 37 + 5) % o.vocab);
    vp_profile *p = vp_profile_alloc(vp_config_sub_blocks(cfg));
    assert_non_null(p);
    fw_set_header(p, cfg, &o);
    vp_error err = {0};
    assert_int_equal(fw_run_network(m, cfg, &o, ids, p, NULL, &err), VP_OK);
    fw_model_free(m);
    return p;
}

/* The network of cfg and o run stored (or, o->stored_weights set, drawn
   keeping every activation) on one thread, against drawn (recomputing) on
   1, 2 and 3: every row, gradient and the loss the same bits. */
static void compare_networks(const char *what, const vp_config *cfg, const vp_forward_options *o)
{
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        grads want_g = {0};
        vp_profile *want = run_network((vp_isa)isa, cfg, *o, 1, 1, &want_g);
        for (size_t threads = 1; threads <= 3; threads++) {
            grads got_g = {0};
            vp_profile *got = run_network((vp_isa)isa, cfg, *o, 0, threads, &got_g);
            for (size_t k = 0; k < want->sub_blocks; k++)
                if (memcmp(&want->rows[k], &got->rows[k], sizeof got->rows[k]) != 0)
                    fail_msg("%s, %s, %zu threads: row %zu differs drawn from stored", what,
                             vp_isa_name((vp_isa)isa), threads, k);
            assert_int_equal(got_g.count, want_g.count);
            for (size_t i = 0; i < got_g.count; i++) {
                assert_string_equal(got_g.names[i], want_g.names[i]);
                if (got_g.frobenius[i] != want_g.frobenius[i])
                    fail_msg("%s, %s, %zu threads: %s's gradient differs", what,
                             vp_isa_name((vp_isa)isa), threads, got_g.names[i]);
            }
            assert_memory_equal(&got->loss, &want->loss, sizeof got->loss);
            vp_profile_free(got);
        }
        vp_profile_free(want);
    }
}

/* o with Llama's block: SwiGLU, no biases, RMSNorm, width d, h query and
   kv key-value heads, vocab v. */
static void llama_options(vp_forward_options *o, size_t d, size_t h, size_t kv, size_t v)
{
    vp_forward_options_init(o);
    o->width = d;
    o->heads = h;
    o->kv_heads = kv;
    o->mlp = VP_MLP_SWIGLU;
    o->bias = VP_BIAS_NONE;
    o->norm = VP_NORM_RMSNORM;
    o->vocab = v;
}

static void networks_drawn_equal_stored(void);

/* Whole networks drawn against stored, at this CPU's block sizes and at a
   small core's (32 KiB L1, 256 KiB L2), on every ISA. */
static void test_networks_drawn_equal_stored(void **state)
{
    (void)state;
    networks_drawn_equal_stored();
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++)
        if (vp_isa_supported((vp_isa)isa))
            reblocks[isa].reblock(32 * 1024, 256 * 1024);
    networks_drawn_equal_stored();
    for (int isa = VP_ISA_SCALAR; isa < VP_ISA_COUNT; isa++)
        if (vp_isa_supported((vp_isa)isa))
            reblocks[isa].reblock(0, 0);
}

static void networks_drawn_equal_stored(void)
{
    vp_config cfg;
    vp_forward_options o;
    /* GPT-style: q, k, v, o, fc1, fc2 with biases, torch init, a head */
    vp_config_init(&cfg, VP_POST_LN, 2);
    cfg.grad = 1;
    vp_forward_options_init(&o);
    o.width = 40;
    o.heads = 4;
    o.vocab = 70;
    o.batch = 2;
    o.tokens = 9;
    o.init = VP_INIT_TORCH;
    o.positions = VP_POSITIONS_LEARNED;
    compare_networks("post-ln, torch init, learned positions", &cfg, &o);
    /* Llama-style: gate, up, down, GQA, RoPE, a tied head, gain init */
    vp_config_init(&cfg, VP_PRE_NORM, 2);
    cfg.grad = 1;
    cfg.final_norm = VP_FINAL_NORM_YES;
    llama_options(&o, 64, 4, 2, 300);
    o.positions = VP_POSITIONS_ROPE;
    o.batch = 2;
    o.tokens = 12;
    o.tie_embeddings = 1;
    compare_networks("pre-norm swiglu, GQA, tied", &cfg, &o);
    /* an untied head and the loss next, MLP only */
    vp_config_init(&cfg, VP_SANDWICH, 3);
    cfg.grad = 1;
    cfg.mlp_only = 1;
    vp_forward_options_init(&o);
    o.width = 48;
    o.heads = 1;
    o.vocab = 24;
    o.batch = 3;
    o.tokens = 5;
    o.loss = VP_LOSS_NEXT;
    compare_networks("sandwich MLP-only, loss next", &cfg, &o);
}

/* Recomputing each sub-block before its backward, from its kept input,
   gives the gradients keeping every activation gives, on every placement
   (a stream norm, two branches summed, DeepNorm's alpha, output norms). */
static void test_recompute_equals_keep(void **state)
{
    (void)state;
    static const vp_placement placements[] = {VP_PRE_NORM, VP_POST_LN,  VP_PARALLEL,
                                              VP_SANDWICH, VP_DEEPNORM, VP_OUTPUT_NORM};
    for (size_t i = 0; i < sizeof placements / sizeof *placements; i++) {
        vp_config cfg;
        vp_config_init(&cfg, placements[i], 3);
        cfg.grad = 1;
        cfg.mlp_only = i == 3;
        vp_forward_options o;
        vp_forward_options_init(&o);
        o.width = 32;
        o.heads = 2;
        o.vocab = 40;
        o.batch = 2;
        o.tokens = 6;
        o.qk_norm = i == 0;
        o.positions = i == 1 ? VP_POSITIONS_ROPE : VP_POSITIONS_NONE;
        o.stored_weights = 1; /* compare_networks: keep against recompute */
        compare_networks(vp_placement_name(placements[i]), &cfg, &o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gauss_panel_equals_fill),
        cmocka_unit_test(test_uniform_panel_equals_values),
        cmocka_unit_test(test_matmul_drawn_equals_stored),
        cmocka_unit_test(test_networks_drawn_equal_stored),
        cmocka_unit_test(test_recompute_equals_keep),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
