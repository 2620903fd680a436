/* The forward pass: a real network whose measurements must match what its
 * initialisation promises, whatever the thread count. The program's engines
 * on it are tests/program/test_cli_forward.c. */
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
#include "io/csv_reader.h"
#include "run_program.h"
#include "test_filter.h"
#include "varprof/forward.h"
#include "varprof/varprof.h"

static vp_profile *run(vp_placement placement, size_t layers, int mlp_only, size_t width,
                       size_t threads, vp_init init, vp_norm norm)
{
    vp_config cfg;
    vp_config_init(&cfg, placement, layers);
    cfg.mlp_only = mlp_only;
    vp_forward_options o;
    vp_forward_options_init(&o);
    o.width = width;
    o.heads = width >= 64 ? width / 32 : 1;
    o.ffn_mult = 2;
    o.batch = 4;
    o.tokens = 64;
    o.threads = threads;
    o.init = init;
    o.norm = norm;
    vp_profile *p = NULL;
    vp_error err;
    if (vp_forward_profile(&cfg, &o, &p, &err) != VP_OK) {
        print_error("vp_forward_profile: %s\n", err.message);
        fail();
    }
    return p;
}

/* The rows split across threads differently; every number stays the same. */
static void threads_change_nothing(void **state)
{
    (void)state;
    const vp_placement placements[] = {VP_PRE_NORM, VP_POST_LN, VP_SANDWICH, VP_PARALLEL};
    for (size_t i = 0; i < 4; i++) {
        vp_profile *one = run(placements[i], 3, 0, 96, 1, VP_INIT_TORCH, VP_NORM_LAYERNORM);
        vp_profile *two = run(placements[i], 3, 0, 96, 2, VP_INIT_TORCH, VP_NORM_LAYERNORM);
        vp_profile *five = run(placements[i], 3, 0, 96, 5, VP_INIT_TORCH, VP_NORM_LAYERNORM);
        assert_memory_equal(one->rows, two->rows, one->n_rows * sizeof(vp_row));
        assert_memory_equal(one->rows, five->rows, one->n_rows * sizeof(vp_row));
        vp_profile_free(one);
        vp_profile_free(two);
        vp_profile_free(five);
    }
}

/* --init gain: each MLP's last projection is scaled so that its gain is the
 * configured one; at d = 1024 the measured gains land within 5 %, and the
 * stream follows the closed form within 5 % at every depth. */
static void gain_init_keeps_its_promise(void **state)
{
    (void)state;
    const vp_placement placements[] = {VP_PRE_NORM, VP_POST_LN, VP_OUTPUT_NORM};
    for (size_t i = 0; i < 3; i++) {
        vp_profile *fw = run(placements[i], 16, 1, 1024, 2, VP_INIT_GAIN, VP_NORM_LAYERNORM);
        vp_config cfg = fw->config;
        vp_profile *cf;
        assert_int_equal(vp_closed_profile(&cfg, &cf, NULL), VP_OK);
        assert_int_equal(fw->n_rows, 17);
        for (size_t k = 1; k < fw->n_rows; k++) {
            const vp_row *f = &fw->rows[k], *c = &cf->rows[k];
            if (fabs(f->measured_gain - 1.0) > 0.05) {
                print_error("%s, sub-block %zu: measured gain %.4f, want 1 within 5 %%\n",
                            vp_placement_name(placements[i]), k, f->measured_gain);
                fail();
            }
            if (fabs(f->stream_var - c->stream_var) > 0.05 * c->stream_var) {
                print_error("%s, sub-block %zu: stream variance %.5g, closed form %.5g\n",
                            vp_placement_name(placements[i]), k, f->stream_var, c->stream_var);
                fail();
            }
            /* Post-LN: LayerNorm leaves variance var / (var + eps) of 1, and a token's
               variance here is near 2, so within eps */
            if (placements[i] == VP_POST_LN && fabs(f->stream_var - 1.0) > 1e-5) {
                print_error("post-ln, sub-block %zu: stream variance %.9f, want 1 within eps\n", k,
                            f->stream_var);
                fail();
            }
        }
        vp_profile_free(fw);
        vp_profile_free(cf);
    }
}

/* The measurements mean what they say, on a network small enough to check by
 * hand: the embedding share starts at 1 and, where the stream is never
 * normalised, is exactly sqrt(v_0 / v_k); the stream norm is the root of
 * v_k times the batch's coordinates. */
static void measurements_hold_together(void **state)
{
    (void)state;
    for (int norm = 0; norm < 2; norm++) {
        vp_profile *p = run(VP_PRE_NORM, 4, 0, 64, 1, VP_INIT_TORCH,
                            norm ? VP_NORM_RMSNORM : VP_NORM_LAYERNORM);
        const double n = 4.0 * 64.0 * 64.0;
        assert_true(p->rows[0].embedding_share == 1.0);
        for (size_t k = 0; k < p->n_rows; k++) {
            const vp_row *r = &p->rows[k];
            assert_true(fabs(r->stream_norm - sqrt(r->stream_var * n)) <= 1e-9 * r->stream_norm);
            double want = sqrt(p->rows[0].stream_var / r->stream_var);
            /* c is the embedding itself, summed in float: 1e-6 */
            assert_true(fabs(r->embedding_share - want) <= 1e-6 * want);
            if (k > 0) {
                assert_true(r->update_cosine >= -1.0 && r->update_cosine <= 1.0);
                assert_true(r->measured_gain > 0.0);
            }
        }
        vp_profile_free(p);
    }
}

/* --init gain with any heads' shape: o's scale takes the H hd coordinates
 * it sums, not d, so that a branch keeps its gain. One token a sequence
 * attends to itself alone, the case the scale is derived for: at d = 512
 * over 256 tokens the attention's measured gains land within 5 % of 1, for
 * heads narrower and wider than d / H, grouped and multi-query. */
static void attention_gain_holds_for_any_head_shape(void **state)
{
    (void)state;
    const struct {
        size_t heads, kv_heads, head_dim;
    } shapes[] = {{8, 0, 0}, {8, 2, 0}, {8, 1, 0}, {8, 2, 16}, {4, 1, 256}, {16, 4, 96}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        vp_config cfg;
        vp_config_init(&cfg, VP_PRE_NORM, 3);
        vp_forward_options o;
        vp_forward_options_init(&o);
        o.heads = shapes[i].heads;
        o.kv_heads = shapes[i].kv_heads;
        o.head_dim = shapes[i].head_dim;
        o.ffn_mult = 1;
        o.batch = 256;
        o.tokens = 1;
        o.threads = 2;
        vp_profile *p = NULL;
        vp_error err;
        if (vp_forward_profile(&cfg, &o, &p, &err) != VP_OK) {
            print_error("vp_forward_profile: %s\n", err.message);
            fail();
        }
        for (size_t k = 1; k < p->n_rows; k += 2) /* the attention's sub-blocks */
            if (fabs(p->rows[k].measured_gain - 1.0) > 0.05) {
                print_error("H %zu, H_kv %zu, hd %zu, sub-block %zu: measured gain %.4f, "
                            "want 1 within 5 %%\n",
                            shapes[i].heads, shapes[i].kv_heads, vp_forward_head_dim(&o), k,
                            p->rows[k].measured_gain);
                fail();
            }
        vp_profile_free(p);
    }
}

/* ---- the seed's stack at PyTorch's default init, against PyTorch's band ---- */

/* The seed's stack: 24 MLP-only layers, vocab 24, d 48, hidden 96, batch 2 x
 * 12 tokens, PyTorch's default init. */
static void seed_stack(vp_placement placement, vp_config *cfg, vp_forward_options *o)
{
    vp_config_init(cfg, placement, 24);
    cfg->mlp_only = 1;
    vp_forward_options_init(o);
    o->width = 48;
    o->heads = 1;
    o->ffn_mult = 2;
    o->vocab = 24;
    o->batch = 2;
    o->tokens = 12;
    o->init = VP_INIT_TORCH;
}

typedef struct {
    double sum[3], sumsq[3], min[3], max[3];
    size_t n[3];
} band;

static int block_slot(long block)
{
    return block == 0 ? 0 : block == 11 ? 1 : block == 23 ? 2 : -1;
}

static vp_status on_band_row(void *ctx, size_t line, size_t n_cells, char *const *cells,
                             vp_error *err)
{
    (void)line;
    (void)err;
    band *b = ctx;
    if (n_cells != 3 || cells[0][0] == '#' || strcmp(cells[0], "seed") == 0)
        return VP_OK;
    int slot = block_slot(strtol(cells[1], NULL, 10));
    double v = strtod(cells[2], NULL);
    if (slot < 0)
        return VP_OK;
    if (b->n[slot] == 0 || v < b->min[slot])
        b->min[slot] = v;
    if (b->n[slot] == 0 || v > b->max[slot])
        b->max[slot] = v;
    b->sum[slot] += v;
    b->sumsq[slot] += v * v;
    b->n[slot]++;
    return VP_OK;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* varprof's --init torch draws PyTorch's distributions from its own
 * generator: over 20 seeds its pre-norm stream norms at blocks 0, 11 and 23
 * must look like PyTorch's 20 (tests/data/gen_torch_band.py): the median
 * inside PyTorch's band, the mean within 3 joint standard errors of its mean. */
static void torch_init_falls_in_pytorchs_band(void **state)
{
    (void)state;
    band torch;
    memset(&torch, 0, sizeof torch);
    vp_error err;
    assert_int_equal(
        csv_read_file(test_data_path("torch_seed_stack_band.csv"), on_band_row, &torch, &err),
        VP_OK);
    double ours[3][20];
    for (unsigned seed = 1; seed <= 20; seed++) {
        vp_config cfg;
        vp_forward_options o;
        seed_stack(VP_PRE_NORM, &cfg, &o);
        o.seed = seed;
        vp_profile *p;
        assert_int_equal(vp_forward_profile(&cfg, &o, &p, &err), VP_OK);
        ours[0][seed - 1] = p->rows[1].stream_norm;
        ours[1][seed - 1] = p->rows[12].stream_norm;
        ours[2][seed - 1] = p->rows[24].stream_norm;
        vp_profile_free(p);
    }
    for (int slot = 0; slot < 3; slot++) {
        assert_int_equal(torch.n[slot], 20);
        double mean = 0, sq = 0;
        for (int i = 0; i < 20; i++) {
            mean += ours[slot][i] / 20.0;
            sq += ours[slot][i] * ours[slot][i] / 20.0;
        }
        const double var_ours = (sq - mean * mean) * 20.0 / 19.0;
        const double torch_mean = torch.sum[slot] / 20.0;
        const double var_torch = (torch.sumsq[slot] / 20.0 - torch_mean * torch_mean) * 20.0 / 19.0;
        const double se = sqrt(var_ours / 20.0 + var_torch / 20.0);
        qsort(ours[slot], 20, sizeof(double), compare_doubles);
        const double median = 0.5 * (ours[slot][9] + ours[slot][10]);
        if (fabs(mean - torch_mean) > 3.0 * se || median < torch.min[slot] ||
            median > torch.max[slot]) {
            print_error("block %d: varprof mean %.4f median %.4f, PyTorch mean %.4f in "
                        "[%.4f, %.4f], joint standard error %.3f\n",
                        slot == 0   ? 0
                        : slot == 1 ? 11
                                    : 23,
                        mean, median, torch_mean, torch.min[slot], torch.max[slot], se);
            fail();
        }
    }
}

/* The seed's Post-LN stack pins the stream's norm at sqrt(2 * 12 * 48) = 33.94
 * at every block (to LayerNorm's eps), whatever the weights. */
static void post_ln_seed_stack_is_pinned(void **state)
{
    (void)state;
    vp_config cfg;
    vp_forward_options o;
    seed_stack(VP_POST_LN, &cfg, &o);
    vp_profile *p;
    assert_int_equal(vp_forward_profile(&cfg, &o, &p, NULL), VP_OK);
    for (size_t k = 1; k <= 24; k++)
        assert_true(fabs(p->rows[k].stream_norm - sqrt(2.0 * 12 * 48)) < 1e-3);
    vp_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_change_nothing),
        cmocka_unit_test(gain_init_keeps_its_promise),
        cmocka_unit_test(attention_gain_holds_for_any_head_shape),
        cmocka_unit_test(measurements_hold_together),
        cmocka_unit_test(torch_init_falls_in_pytorchs_band),
        cmocka_unit_test(post_ln_seed_stack_is_pinned),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("the forward pass", tests, NULL, NULL);
}
