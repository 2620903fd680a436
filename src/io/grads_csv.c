/* The --grads-out CSV: each parameter's gradient as two norms. */
#include "varprof/grads_csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vp_grad_norms_add(void *ctx, const vp_param_grad *g)
{
    vp_grad_norms *norms = ctx;
    if (norms->count == norms->capacity) {
        const size_t capacity = norms->capacity ? 2 * norms->capacity : 64;
        vp_grad_norm *rows = realloc(norms->rows, capacity * sizeof *rows);
        if (!rows) {
            norms->status = VP_ENOMEM;
            return;
        }
        norms->rows = rows;
        norms->capacity = capacity;
    }
    vp_grad_norm *row = &norms->rows[norms->count++];
    snprintf(row->name, sizeof row->name, "%s", g->name);
    row->rank = g->rank;
    row->shape[0] = g->shape[0];
    row->shape[1] = g->rank == 2 ? g->shape[1] : 0;
    const size_t n = g->shape[0] * (g->rank == 2 ? g->shape[1] : 1);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += (double)g->gradient[i] * g->gradient[i];
    row->frobenius = sqrt(sum);
    row->rms = n ? sqrt(sum / (double)n) : 0.0;
}

void vp_grad_norms_free(vp_grad_norms *norms)
{
    if (!norms)
        return;
    free(norms->rows);
    memset(norms, 0, sizeof *norms);
}

vp_status vp_grads_csv_write(FILE *out, const vp_grad_norms *norms)
{
    if (norms->status != VP_OK)
        return norms->status;
    if (fputs("name,shape,frobenius,rms\n", out) == EOF)
        return VP_EIO;
    for (size_t i = norms->count; i-- > 0;) {
        const vp_grad_norm *r = &norms->rows[i];
        char shape[48];
        if (r->rank == 2)
            snprintf(shape, sizeof shape, "%zux%zu", r->shape[0], r->shape[1]);
        else
            snprintf(shape, sizeof shape, "%zu", r->shape[0]);
        if (fprintf(out, "%s,%s,%.17g,%.17g\n", r->name, shape, r->frobenius, r->rms) < 0)
            return VP_EIO;
    }
    return VP_OK;
}
