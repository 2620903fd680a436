/* train --layer-stats: each run's per-step, per-tensor norms, written as one CSV. */
#include "train_layer_stats.h"

#include <stdio.h>
#include <stdlib.h>

#include "output_file.h"

/* Room for one more of n items of `size` bytes in *items (capacity *cap),
   doubling it when full; 0 when memory runs out (*items stays). */
static int room_for_one(void *items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 1;
    const size_t more = *cap ? 2 * *cap : 64;
    void *grown = realloc(*(void **)items, more * size);
    if (!grown)
        return 0;
    *(void **)items = grown;
    *cap = more;
    return 1;
}

void layer_stats_keep(void *ctx, const vp_train_tensor *t)
{
    layer_stats *s = ctx;
    if (s->failed)
        return;
    if (t->step != s->last_step)
        s->in_step = 0;
    s->last_step = t->step;
    if (t->step == 0) {
        if (!room_for_one(&s->names, &s->names_cap, s->n_names, sizeof *s->names)) {
            s->failed = 1;
            return;
        }
        snprintf(s->names[s->n_names++], sizeof *s->names, "%s", t->name);
    }
    if (!room_for_one(&s->rows, &s->rows_cap, s->n_rows, sizeof *s->rows)) {
        s->failed = 1;
        return;
    }
    s->rows[s->n_rows++] =
        (struct stat_row){t->step, s->in_step++, t->grad_norm, t->weight_norm, t->update_norm};
}

void layer_stats_free(layer_stats *s)
{
    free(s->names);
    free(s->rows);
}

int layer_stats_write(const cli_args *args, const vp_train_job *jobs, const layer_stats *stats,
                      size_t n_jobs)
{
    output_file out;
    int rc = output_open(&out, args->value[OPT_LAYER_STATS], args->given[OPT_FORCE]);
    if (rc != EXIT_OK)
        return rc;
    fputs("placement,layers,base_lr,warmup,seed,step,tensor,grad_norm,weight_norm,update_ratio\n",
          out.stream);
    for (size_t j = 0; j < n_jobs; j++) {
        const vp_train_job *job = &jobs[j];
        const layer_stats *s = &stats[j];
        if (s->failed) {
            output_abort(&out);
            return cli_runtime_error("--layer-stats: no memory for the rows of run %zu", j + 1);
        }
        for (size_t i = 0; i < s->n_rows; i++) {
            const struct stat_row *r = &s->rows[i];
            char ratio[32] = ""; /* empty for zeros (a LayerNorm bias at step 0): no ratio */
            if (r->weight_norm != 0.0)
                snprintf(ratio, sizeof ratio, "%.17g", r->update_norm / r->weight_norm);
            fprintf(out.stream, "%s,%zu,%.17g,%zu,%llu,%zu,%s,%.17g,%.17g,%s\n",
                    vp_placement_traits_of(job->config.placement)->name, job->config.layers,
                    job->train.lr, job->train.warmup, job->network.seed, r->step,
                    r->tensor < s->n_names ? s->names[r->tensor] : "?", r->grad_norm,
                    r->weight_norm, ratio);
        }
    }
    return output_commit(&out);
}
