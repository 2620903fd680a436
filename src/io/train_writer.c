/* Training runs as text, CSV and JSON (include/varprof/train_output.h). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "varprof/placement.h"
#include "varprof/train_output.h"

static vp_status written(FILE *out)
{
    return ferror(out) ? VP_EIO : VP_OK;
}

/* ---- text ---- */

/* Which of the swept settings differ among the runs. */
typedef struct {
    int layers, lr, warmup, seed;
} varying;

static varying what_varies(const vp_train_job *jobs, size_t n)
{
    varying v = {0, 0, 0, 0};
    for (size_t i = 1; i < n; i++) {
        v.layers |= jobs[i].config.layers != jobs[0].config.layers;
        v.lr |= jobs[i].train.lr != jobs[0].train.lr;
        v.warmup |= jobs[i].train.warmup != jobs[0].train.warmup;
        v.seed |= jobs[i].network.seed != jobs[0].network.seed;
    }
    return v;
}

/* printf onto the end of label (size bytes), cut where it is full */
__attribute__((format(printf, 3, 4))) static void append(char *label, size_t size,
                                                         const char *format, ...)
{
    const size_t used = strlen(label);
    va_list args;
    va_start(args, format);
    vsnprintf(label + used, size - used, format, args);
    va_end(args);
}

static void label_of(char *label, size_t size, const vp_train_job *job, varying v)
{
    snprintf(label, size, "%s", vp_placement_traits_of(job->config.placement)->name);
    if (v.layers)
        append(label, size, " L=%zu", job->config.layers);
    if (v.lr)
        append(label, size, " lr=%g", job->train.lr);
    if (v.warmup)
        append(label, size, " warmup=%zu", job->train.warmup);
    if (v.seed)
        append(label, size, " seed=%llu", job->network.seed);
}

/* Two lines (three with decay or clipping, one more for an MLP other than
   the seed's or projections without biases), each within 80 columns. */
static void heading(FILE *out, const vp_train_job *job, varying v)
{
    const vp_forward_options *n = &job->network;
    const vp_train_options *t = &job->train;
    fprintf(out, "varprof train: %s task, ", vp_task_name(t->task));
    if (!v.layers)
        fprintf(out, "%zu ", job->config.layers);
    fprintf(out, "%s layers of width %zu, vocab %zu, %s\n",
            job->config.mlp_only ? "MLP" : "attention + MLP", n->width, n->vocab,
            n->norm == VP_NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
    /* the MLP, where it is not the seed's GELU of m d */
    if (n->mlp != VP_MLP_GELU || n->ffn_width || n->bias != VP_BIAS_ALL)
        fprintf(out, "  %s MLP, hidden width %zu%s\n", vp_mlp_name(n->mlp), vp_forward_ffn_width(n),
                n->bias == VP_BIAS_NONE  ? ", no biases"
                : n->bias == VP_BIAS_QKV ? ", biases on q, k, v alone"
                                         : "");
    fprintf(out, "  batch %zu x %zu, Adam%s", n->batch, n->tokens, t->weight_decay > 0.0 ? "W" : "");
    if (!v.lr)
        fprintf(out, " lr %g", t->lr);
    if (!v.warmup)
        fprintf(out, t->warmup ? ", %zu warm-up steps" : ", no warm-up", t->warmup);
    fprintf(out, ", %s, %zu step%s", vp_schedule_name(t->schedule), t->steps,
            t->steps == 1 ? "" : "s");
    if (!v.seed && !n->weights && !t->token_stream)
        fprintf(out, ", seed %llu", n->seed);
    fputc('\n', out);
    if (t->weight_decay > 0.0 || t->clip_norm > 0.0) {
        fputs(" ", out);
        if (t->weight_decay > 0.0)
            fprintf(out, " weight decay %g%s", t->weight_decay, t->clip_norm > 0.0 ? "," : "");
        if (t->clip_norm > 0.0)
            fprintf(out, " gradient norm clipped to %g", t->clip_norm);
        fputc('\n', out);
    }
}

#define PER_LINE 4

vp_status vp_train_write_text(FILE *out, const vp_train_job *jobs, size_t n, size_t every)
{
    if (n == 0)
        return VP_OK;
    const varying v = what_varies(jobs, n);
    heading(out, &jobs[0], v);
    size_t width = 0;
    char label[128];
    for (size_t i = 0; i < n; i++) {
        label_of(label, sizeof label, &jobs[i], v);
        width = strlen(label) > width ? strlen(label) : width;
    }
    for (size_t i = 0; i < n; i++) {
        const vp_train_result *r = jobs[i].result;
        label_of(label, sizeof label, &jobs[i], v);
        fprintf(out, "  %-*s", (int)width, label);
        size_t shown = 0;
        const size_t last = r->steps_run ? r->steps_run - 1 : 0;
        for (size_t s = 0; s < r->steps_run; s++) {
            const int at_every = s % every == 0;
            if (!(at_every || (s == last && !r->diverged)))
                continue;
            if (r->diverged && s == last)
                break; /* said below */
            if (shown && shown % PER_LINE == 0)
                fprintf(out, "\n  %-*s", (int)width, "");
            /* the seed's four decimals, or, where they would say 0.0000 or run
               long, six characters of an exponent (7.5e-06, 1.234e+09) */
            const double loss = r->steps[s].loss;
            if (loss != 0.0 && fabs(loss) < 5e-5)
                fprintf(out, "   step %3zu: %.1e", s, loss);
            else
                fprintf(out, fabs(loss) < 1e4 ? "   step %3zu: %.4f" : "   step %3zu: %.3e", s,
                        loss);
            shown++;
        }
        if (r->diverged && r->overflowed != VP_OVERFLOW_NONE)
            fprintf(out, "   diverged at step %zu: the %s overflowed float at sub-block %zu",
                    r->diverged_at,
                    r->overflowed == VP_OVERFLOW_FLOAT_GRAD ||
                            r->overflowed == VP_OVERFLOW_GRAD_VAR
                        ? "gradient"
                        : "stream",
                    r->overflow_at);
        else if (r->diverged)
            fprintf(out, "   diverged at step %zu (loss %g, gradient norm %g)", r->diverged_at,
                    r->steps[last].loss, r->steps[last].grad_norm);
        fputc('\n', out);
    }
    return written(out);
}

/* ---- CSV ---- */

static void csv_number(FILE *out, double x)
{
    if (isnan(x))
        fputs("nan", out);
    else if (isinf(x))
        fputs(x > 0 ? "inf" : "-inf", out);
    else
        fprintf(out, "%.17g", x);
}

vp_status vp_train_write_csv(FILE *out, const vp_train_job *jobs, size_t n)
{
    fputs(VP_TRAIN_CSV_HEADER "\n", out);
    for (size_t i = 0; i < n; i++) {
        const vp_train_job *j = &jobs[i];
        const char *placement = vp_placement_traits_of(j->config.placement)->name;
        for (size_t s = 0; s < j->result->steps_run; s++) {
            const vp_train_step *row = &j->result->steps[s];
            fprintf(out, "%s,%zu,%.17g,%zu,%llu,%zu,", placement, j->config.layers, j->train.lr,
                    j->train.warmup, j->network.seed, row->step);
            csv_number(out, row->lr);
            fputc(',', out);
            csv_number(out, row->loss);
            fputc(',', out);
            csv_number(out, row->grad_norm);
            fputc('\n', out);
        }
    }
    return written(out);
}

/* ---- JSON ---- */

/* %.17g as raw text, as the profile's JSON writes numbers; null when not finite */
static void add_number(cJSON *o, const char *key, double x)
{
    if (isfinite(x)) {
        char text[32];
        snprintf(text, sizeof text, "%.17g", x);
        cJSON_AddRawToObject(o, key, text);
    } else {
        cJSON_AddNullToObject(o, key);
    }
}

static cJSON *run_object(const vp_train_job *j)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "placement", vp_placement_traits_of(j->config.placement)->name);
    cJSON_AddNumberToObject(o, "layers", (double)j->config.layers);
    add_number(o, "base_lr", j->train.lr);
    cJSON_AddNumberToObject(o, "warmup", (double)j->train.warmup);
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", j->network.seed);
    cJSON_AddRawToObject(o, "seed", seed);
    cJSON_AddStringToObject(o, "task", vp_task_name(j->train.task));
    cJSON_AddStringToObject(o, "schedule", vp_schedule_name(j->train.schedule));
    add_number(o, "clip_norm", j->train.clip_norm);
    add_number(o, "weight_decay", j->train.weight_decay);
    if (j->result->diverged)
        cJSON_AddNumberToObject(o, "diverged_at", (double)j->result->diverged_at);
    else
        cJSON_AddNullToObject(o, "diverged_at");
    cJSON *steps = cJSON_AddArrayToObject(o, "steps");
    for (size_t s = 0; steps && s < j->result->steps_run; s++) {
        const vp_train_step *row = &j->result->steps[s];
        cJSON *r = cJSON_CreateObject();
        if (!r || !cJSON_AddItemToArray(steps, r)) {
            cJSON_Delete(r);
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddNumberToObject(r, "step", (double)row->step);
        add_number(r, "lr", row->lr);
        add_number(r, "loss", row->loss);
        add_number(r, "grad_norm", row->grad_norm);
    }
    if (!steps) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

vp_status vp_train_write_json(FILE *out, const vp_train_job *jobs, size_t n)
{
    /* a run at a time, so that a long sweep is never one string in memory */
    fputs("{\"runs\":[", out);
    for (size_t i = 0; i < n; i++) {
        cJSON *run = run_object(&jobs[i]);
        char *text = run ? cJSON_PrintUnformatted(run) : NULL;
        cJSON_Delete(run);
        if (!text)
            return VP_ENOMEM;
        fprintf(out, "%s%s", i ? ",\n" : "\n", text);
        free(text);
    }
    fputs("\n]}\n", out);
    return written(out);
}
