/* The head and the loss: the logits, the loss of o->loss on the batch, and
 * its gradient at the head's input (varprof-maths(7), THE NETWORK'S
 * BACKWARD PASS). Per row in parallel, each row's loss kept apart and summed
 * in row order, so that the loss does not depend on the thread count. */
#include <math.h>
#include <string.h>

#include "forward/backward.h"
#include "kernels/nn_internal.h"
#include "varprof/gauss.h"

typedef struct {
    fw_bw *b;
    const float *y;
    float *dy;
    size_t per_task;
    double scale; /* 1 / the rows the loss averages over */
} loss_job;

/* The row's target under copy or next; 0 when the row has none (next's last
   token), else 1. */
static int target_of(const fw_bw *b, size_t row, uint32_t *target)
{
    const size_t T = b->r->tokens;
    if (b->o->loss == VP_LOSS_NEXT) {
        if (row % T == T - 1)
            return 0;
        *target = b->r->token_ids[row + 1];
    } else {
        *target = b->r->token_ids[row];
    }
    return 1;
}

/* Cohere's logit_scale: z becomes s z in float, as PyTorch's
   lm_head(h) * logit_scale rounds it; 1 leaves the bits alone */
static void scale_row(float *z, size_t n, float s)
{
    if (s == 1.0f)
        return;
    for (size_t i = 0; i < n; i++)
        z[i] *= s;
}

static void loss_task(void *ctx, size_t task, size_t thread)
{
    (void)thread;
    const loss_job *j = ctx;
    fw_bw *b = j->b;
    const size_t d = b->r->m->d, V = b->r->m->vocab, rows = b->r->rows;
    const size_t first = task * j->per_task;
    const size_t end = first + j->per_task < rows ? first + j->per_task : rows;
    for (size_t row = first; row < end; row++) {
        if (b->o->loss == VP_LOSS_RANDOM) {
            /* r_t, keyed as the Gaussian stream of token `row` */
            float *r = j->dy + row * d;
            b->r->m->kernels->gauss_fill(r, d, b->o->seed, (uint32_t)row, VP_LOSS_RANDOM_STREAM, 0);
            double dot = 0.0;
            for (size_t i = 0; i < d; i++)
                dot += (double)r[i] * j->y[row * d + i];
            b->row_loss[row] = dot;
            continue;
        }
        uint32_t target;
        float *logits = b->logits + row * V;
        if (target_of(b, row, &target)) { /* a row at a time: its loss kept apart */
            const float cap = b->r->m->logit_softcap, factor = b->r->m->logit_scale;
            float *tanh_row = cap > 0.0f ? b->logit_tanh + row * V : NULL;
            scale_row(logits, V, factor);
            if (cap > 0.0f)
                kern_softcap(logits, tanh_row, V, cap);
            b->row_loss[row] =
                b->r->m->kernels->cross_entropy(logits, logits, &target, 1, V, j->scale);
            for (size_t i = 0; tanh_row && i < V; i++) /* d cap(z)/dz = 1 - tanh^2 */
                logits[i] *= 1.0f - tanh_row[i] * tanh_row[i];
            scale_row(logits, V, factor); /* d (s z)/dz = s */
        } else {
            b->row_loss[row] = 0.0;
            memset(logits, 0, V * sizeof *logits);
        }
    }
}

static void head_and_loss(fw_bw *b, const float *y, float *dy, double *loss)
{
    fw_run *r = b->r;
    const fw_model *m = r->m;
    const int random = b->o->loss == VP_LOSS_RANDOM;
    const size_t counted = b->o->loss == VP_LOSS_NEXT ? r->batch * (r->tokens - 1) : r->rows;
    if (!random)
        fw_project(r, b->logits, y, &m->head);
    const size_t tasks = r->n_tasks;
    loss_job j = {b, y, dy, (r->rows + tasks - 1) / tasks, 1.0 / (double)counted};
    fw_parallel(r, tasks, loss_task, &j);
    double sum = 0.0;
    for (size_t row = 0; row < r->rows; row++)
        sum += b->row_loss[row];
    *loss = random ? sum : sum / (double)counted;
    if (random)
        return;
    fw_bw_linear_dx(b, dy, b->logits, &m->head);
    if (!m->tied) {
        fw_bw_linear_params(b, "head", &m->head, b->logits, y);
        return;
    }
    /* tied: W's gradient waits for the embedding's (network_backward.c) */
    if (!b->o->on_param_grad)
        return;
    fw_bw_linear_grads(b, &m->head, b->logits, y);
    memcpy(b->head_dw, b->dw, m->vocab * m->embed_dim * sizeof *b->dw);
    if (m->head.bias)
        fw_bw_emit(b, "head.bias", b->db, m->vocab, 0);
}

void fw_head_loss(fw_bw *b, const float *y, float *dy, double *loss)
{
    const fw_model *m = b->r->m;
    if (b->o->loss == VP_LOSS_RANDOM || m->embed_dim == m->d) {
        head_and_loss(b, y, dy, loss);
        return;
    }
    /* OPT's project_out between the stream and the head: its output (e
       wide) in b->df, the head's gradient there in b->dh, both free until
       the first sub-block's backward */
    fw_project(b->r, b->df, y, &m->project_out);
    head_and_loss(b, b->df, b->dh, loss);
    fw_bw_linear_dx(b, dy, b->dh, &m->project_out);
    fw_bw_linear_params(b, "project_out", &m->project_out, b->dh, y);
}
