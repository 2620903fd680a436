/* What the forward pass keeps for the backward: per sub-block, the stream
 * before it and every intermediate value a backward kernel reads, cut from
 * one block allocated before the first sub-block. */
#include "forward/run.h"

static size_t aligned(size_t floats)
{
    return (floats + 15) & ~(size_t)15; /* 64 bytes */
}

size_t fw_sub_blocks(const fw_model *m)
{
    return m->mlp_only ? m->layers : m->layers * m->traits->sub_blocks_per_layer;
}

/* Whether sub-block k (from 1) runs attention, an MLP. */
static void parts_of(const fw_model *m, size_t k, int *attn, int *mlp)
{
    if (m->mlp_only) {
        *attn = 0, *mlp = 1;
        return;
    }
    const size_t per_layer = m->traits->sub_blocks_per_layer;
    const size_t at = (k - 1) % per_layer;
    *attn = per_layer == 1 || at == 0;
    *mlp = per_layer == 1 || at == 1;
}

/* The next n floats of block, or NULL when only counting (block NULL). */
static float *take(float *block, size_t *used, size_t n)
{
    float *at = block ? block + *used : NULL;
    *used += aligned(n);
    return at;
}

/* Lays out sub-block k's entries (k 0: the top): x_in from block on, the
 * rest from rest on (block itself when rest is NULL and the same pointer
 * is given twice: where its used count goes too). Adds the floats each
 * takes to *used and *rest_used. */
static void lay_out_one(fw_saved *s, float *block, size_t *used, float *rest, size_t *rest_used,
                        const fw_model *m, size_t k, size_t rows)
{
    const size_t d = rows * m->d, hid = rows * m->hidden;
    fw_saved z = {0};
    z.x_in = take(block, used, d);
    if (k == 0) { /* the top: the stream x_K and the head's input */
        z.h = m->has_final_norm ? take(block, used, d) : z.x_in;
    } else {
        int attn, mlp;
        parts_of(m, k, &attn, &mlp);
        if (m->traits->norm_in) {
            z.h = take(rest, rest_used, d);
            /* the norm's statistics, so that its backward need not sum
               them again (1.8 % of the seed's training, one thread) */
            z.in_stats = take(rest, rest_used, 2 * rows);
        }
        z.f = take(rest, rest_used, d);
        if (m->traits->norm_stream)
            z.stream_stats = take(rest, rest_used, 2 * rows);
        if (mlp) {
            z.hid_pre = take(rest, rest_used, hid);
            z.hid = take(rest, rest_used, hid);
            if (m->gated)
                z.hid_up = take(rest, rest_used, hid);
            /* Phi, so that the GELU's backward evaluates exp alone, not
               erf again (it was 9 % of the seed's training, one thread) */
            if (vp_mlp_traits_of(m->mlp)->keeps_cdf)
                z.hid_cdf = take(rest, rest_used, hid);
        }
        if (attn) {
            const size_t qw = rows * m->q_width, kvw = rows * m->kv_width;
            z.q = take(rest, rest_used, qw);
            z.k = take(rest, rest_used, kvw);
            z.v = take(rest, rest_used, kvw);
            z.att = take(rest, rest_used, qw);
            z.q_pre = m->qk_norm ? take(rest, rest_used, qw) : z.q;
            z.k_pre = m->qk_norm ? take(rest, rest_used, kvw) : z.k;
        }
    }
    if (s)
        *s = z;
}

/* Floats of the inputs (every x_in and the top) and of the largest
   sub-block's rest, when recomputing: the rest is one region all share. */
static void recompute_sizes(const fw_model *m, size_t rows, size_t *inputs, size_t *rest)
{
    *inputs = 0;
    *rest = 0;
    lay_out_one(NULL, NULL, inputs, NULL, inputs, m, 0, rows);
    for (size_t k = 1; k <= fw_sub_blocks(m); k++) {
        size_t one = 0;
        lay_out_one(NULL, NULL, inputs, NULL, &one, m, k, rows);
        *rest = one > *rest ? one : *rest;
    }
}

size_t fw_saved_floats(const fw_model *m, size_t rows)
{
    size_t n = 0;
    if (m->recompute) {
        size_t rest;
        recompute_sizes(m, rows, &n, &rest);
        return n + rest;
    }
    for (size_t k = 0; k <= fw_sub_blocks(m); k++)
        lay_out_one(NULL, NULL, &n, NULL, &n, m, k, rows);
    return n;
}

size_t fw_saved_row_floats(const fw_model *m)
{
    /* at most three rows of d, three of H hd, three of H_kv hd and three of m d
       per sub-block, and the top's two of d; two norms' statistics, two
       floats each */
    return (fw_sub_blocks(m) + 1) *
           (6 * m->d + 3 * m->q_width + 3 * m->kv_width + 3 * m->hidden + 4);
}

void fw_saved_lay_out(fw_saved *saved, float *block, const fw_model *m, size_t rows)
{
    const size_t K = fw_sub_blocks(m);
    size_t used = 0, inputs = 0, rest = 0;
    if (m->recompute) /* every sub-block's rest in one region, after the inputs */
        recompute_sizes(m, rows, &inputs, &rest);
    for (size_t k = 1; k <= K; k++) {
        size_t shared = 0;
        if (m->recompute)
            lay_out_one(&saved[k], block, &used, block + inputs, &shared, m, k, rows);
        else
            lay_out_one(&saved[k], block, &used, block, &used, m, k, rows);
    }
    lay_out_one(&saved[K + 1], block, &used, block, &used, m, 0, rows);
}
