/* A run's buffers and thread pool, made once and reused by every run of one
 * model on one batch shape (forward/workspace.h). */
#include <stdlib.h>

#include "forward/run.h"
#include "forward/workspace.h"
#include "sys/big_block.h"

size_t fw_activation_floats(const fw_model *m, size_t rows)
{
    /* x, c, h, f, f2, o; q, k, v; att apart from o when wider than d; k and
       v repeated to the query heads when they are fewer */
    const size_t att = m->q_width > m->d ? m->q_width : 0;
    const size_t repeated = m->kv_heads != m->heads ? 2 * m->q_width : 0;
    return rows * (6 * m->d + m->q_width + 2 * m->kv_width + att + repeated +
                   (m->gated ? 2 : 1) * m->hidden);
}

/* The most workspace a row-split matmul takes: the forward's projections,
   the head's, and the backward's dX = dY W (k and m swapped). */
size_t fw_matmul_ws_floats(const fw_model *m, size_t rows_per_task)
{
    const kern_table *kn = m->kernels;
    const size_t widths[] = {m->d, m->hidden, m->has_head ? m->vocab : m->d, m->q_width,
                             m->kv_width};
    const size_t n = sizeof widths / sizeof *widths;
    size_t most = 0;
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            size_t w = m->drawn
                           ? kn->matmul_drawn_workspace_floats(rows_per_task, widths[a], widths[b])
                           : kn->matmul_workspace_floats(rows_per_task, widths[a], widths[b]);
            most = w > most ? w : most;
        }
    return most;
}

size_t fw_run_bytes(const fw_model *m, size_t rows, size_t threads, size_t tokens)
{
    size_t bytes =
        fw_activation_floats(m, rows) * sizeof(float) + fw_stats_doubles(rows) * sizeof(double) +
        threads * ((fw_matmul_ws_floats(m, fw_matmul_rows(m, rows, threads)) + tokens + 32) *
                   sizeof(float)) +
        rows * sizeof(uint32_t) + fw_rope_floats(m, tokens) * sizeof(float);
    if (m->backward)
        bytes += (fw_saved_floats(m, rows) + fw_backward_floats(m, rows) +
                  fw_backward_thread_floats(m, rows, threads)) *
                 sizeof(float);
    return bytes;
}

/* Each thread's matmul and attention scratch. 0, or -1 when memory runs out. */
static int make_thread_scratch(fw_workspace *ws)
{
    ws->matmul_ws = calloc(ws->threads, sizeof *ws->matmul_ws);
    ws->att_scratch = calloc(ws->threads, sizeof *ws->att_scratch);
    if (!ws->matmul_ws || !ws->att_scratch)
        return -1;
    const size_t matmul_rows = fw_matmul_rows(ws->m, ws->rows, ws->threads);
    for (size_t t = 0; t < ws->threads; t++) {
        ws->matmul_ws[t] = malloc((fw_matmul_ws_floats(ws->m, matmul_rows) + 16) * sizeof(float));
        ws->att_scratch[t] = malloc((ws->tokens + 16) * sizeof(float));
        if (!ws->matmul_ws[t] || !ws->att_scratch[t])
            return -1;
    }
    return 0;
}

/* What the forward keeps for the backward, and the backward's own buffers.
   0, or -1 when memory runs out. */
static int make_backward(fw_workspace *ws)
{
    const fw_model *m = ws->m;
    const size_t per_thread = fw_backward_thread_floats(m, ws->rows, 1);
    ws->kept = big_block_alloc(fw_saved_floats(m, ws->rows) * sizeof(float));
    ws->saved = calloc(ws->sub_blocks + 2, sizeof *ws->saved);
    ws->backward_block = big_block_alloc(fw_backward_floats(m, ws->rows) * sizeof(float));
    ws->backward_thread_block = big_block_alloc(ws->threads * per_thread * sizeof(float));
    ws->backward_thread_ws = calloc(ws->threads, sizeof *ws->backward_thread_ws);
    if (!ws->kept || !ws->saved || !ws->backward_block || !ws->backward_thread_block ||
        !ws->backward_thread_ws)
        return -1;
    fw_saved_lay_out(ws->saved, ws->kept, m, ws->rows);
    for (size_t t = 0; t < ws->threads; t++)
        ws->backward_thread_ws[t] = ws->backward_thread_block + t * per_thread;
    return 0;
}

vp_status fw_workspace_create(const fw_model *m, size_t batch, size_t tokens, size_t threads,
                              fw_workspace **out, vp_error *err)
{
    *out = NULL;
    const size_t rows = batch * tokens;
    if (rows == 0 || threads == 0) /* vp_forward_options_check refuses these first */
        return vp_fail(err, VP_EINVAL,
                       "a forward pass needs a token and a thread, not %zu x %zu tokens on %zu "
                       "threads",
                       batch, tokens, threads);
    fw_workspace *ws = calloc(1, sizeof *ws);
    if (!ws)
        return vp_fail(err, VP_ENOMEM, "no memory for the workspace");
    *ws = (fw_workspace){.m = m,
                         .batch = batch,
                         .tokens = tokens,
                         .threads = threads,
                         .rows = rows,
                         .sub_blocks = fw_sub_blocks(m)};
    ws->pool = thread_pool_create(threads, err);
    if (!ws->pool) {
        fw_workspace_free(ws);
        return VP_ETHREAD;
    }
    ws->activations = big_block_alloc(fw_activation_floats(m, rows) * sizeof(float));
    ws->stats = malloc(fw_stats_doubles(rows) * sizeof(double));
    const size_t rope = fw_rope_floats(m, tokens);
    if (rope) {
        ws->rope_cos = malloc(rope * sizeof(float));
        ws->rope_sin = ws->rope_cos ? ws->rope_cos + rope / 2 : NULL;
    }
    const int alibi = vp_positions_traits_of(m->positions)->score_bias;
    ws->alibi_slopes = alibi ? malloc(m->heads * sizeof(float)) : NULL;
    if (!ws->activations || !ws->stats || make_thread_scratch(ws) != 0 ||
        (m->backward && make_backward(ws) != 0) || (rope && !ws->rope_cos) ||
        (alibi && !ws->alibi_slopes)) {
        fw_workspace_free(ws);
        return vp_fail(err, VP_ENOMEM, "no memory for the activations");
    }
    if (rope) /* once: every run of the workspace is at the same positions */
        fw_rope_fill(ws->rope_cos, ws->rope_sin, m, tokens);
    if (alibi) /* ALiBi's slopes, a function of the heads alone */
        vp_alibi_slopes(ws->alibi_slopes, m->heads);
    *out = ws;
    return VP_OK;
}

void fw_workspace_skip_weight_grad(fw_workspace *ws)
{
    ws->no_weight_grad = 1;
}

void fw_workspace_set_measured(fw_workspace *ws, int measured)
{
    ws->unmeasured = !measured;
}

void fw_workspace_set_grads(fw_workspace *ws, const fw_grads *grads)
{
    ws->grads = grads;
}

void fw_workspace_free(fw_workspace *ws)
{
    if (!ws)
        return;
    for (size_t t = 0; ws->matmul_ws && t < ws->threads; t++)
        free(ws->matmul_ws[t]);
    for (size_t t = 0; ws->att_scratch && t < ws->threads; t++)
        free(ws->att_scratch[t]);
    free(ws->matmul_ws);
    free(ws->att_scratch);
    free(ws->backward_thread_ws);
    free(ws->backward_thread_block);
    free(ws->backward_block);
    free(ws->saved);
    free(ws->kept);
    free(ws->stats);
    free(ws->activations);
    free(ws->rope_cos); /* rope_sin is its second half */
    free(ws->alibi_slopes);
    thread_pool_free(ws->pool);
    free(ws);
}
