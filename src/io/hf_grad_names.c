/* A checkpoint run's gradients under the checkpoint's own names: the rows
 * of a fused tensor's parts joined into the one row PyTorch would print. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "varprof/hf_checkpoint.h"

typedef struct {
    const vp_tensor_info *stored;
    double sum; /* the parts' squared Frobenius norms */
} joined;

/* The rows in the writer's order (the embedding first), each stored tensor
   once, its parts' squares summed. */
static vp_status join(const vp_safetensors *weights, const vp_grad_norms *in, joined *rows,
                      size_t *n, vp_error *err)
{
    *n = 0;
    for (size_t i = in->count; i-- > 0;) {
        const vp_grad_norm *g = &in->rows[i];
        const vp_tensor_info *stored = NULL;
        if (!vp_hf_stored_tensor(weights, g->name, &stored))
            return vp_fail(err, VP_EINVAL, "gradient '%s' is of no tensor the checkpoint stores",
                           g->name);
        size_t r = 0;
        while (r < *n && rows[r].stored != stored)
            r++;
        if (r == *n)
            rows[(*n)++] = (joined){stored, 0.0};
        rows[r].sum += g->frobenius * g->frobenius;
    }
    return VP_OK;
}

/* Stored names transformers loads under another: its parameter's name is
   the one PyTorch prints (GPT-NeoX's embed_out is GPTNeoXForCausalLM's
   lm_head since transformers 5) */
static const char *parameter_name(const char *stored)
{
    static const struct {
        const char *stored, *parameter;
    } renamed[] = {{"embed_out.weight", "lm_head.weight"}};
    for (size_t i = 0; i < sizeof renamed / sizeof *renamed; i++)
        if (strcmp(stored, renamed[i].stored) == 0)
            return renamed[i].parameter;
    return stored;
}

vp_status vp_hf_grad_norms_stored(const vp_safetensors *weights, const vp_grad_norms *in,
                                  vp_grad_norms *out, vp_error *err)
{
    if (in->status != VP_OK)
        return vp_fail(err, in->status, "a gradient's row was lost");
    joined *rows = calloc(in->count ? in->count : 1, sizeof *rows);
    vp_grad_norm *made = calloc(in->count ? in->count : 1, sizeof *made);
    size_t n = 0;
    vp_status s = rows && made ? join(weights, in, rows, &n, err)
                               : vp_fail(err, VP_ENOMEM, "no memory for the gradients' rows");
    /* the writer reads rows last to first: store them so */
    for (size_t r = 0; s == VP_OK && r < n; r++) {
        const vp_tensor_info *t = rows[r].stored;
        vp_grad_norm *g = &made[n - 1 - r];
        snprintf(g->name, sizeof g->name, "%s", parameter_name(t->name));
        g->rank = t->rank == 1 ? 1 : 2;
        g->shape[0] = t->shape[0];
        g->shape[1] = t->rank == 1 ? 0 : t->shape[1];
        g->frobenius = sqrt(rows[r].sum);
        g->rms = t->elements ? sqrt(rows[r].sum / (double)t->elements) : 0.0;
    }
    free(rows);
    if (s != VP_OK) {
        free(made);
        return s;
    }
    *out = (vp_grad_norms){made, n, in->count ? in->count : 1, VP_OK};
    return VP_OK;
}
