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

#define TEXT_COLUMNS 80
#define INDENT 2
#define GAP 2 /* spaces between the table's columns */
/* a longer label leaves room for too few steps a line: the rows are then
   numbered and the labels listed above the table */
#define LABEL_MAX 40

/* Writes text's words from column `indent`, wrapped at spaces to fit
   TEXT_COLUMNS, each further line from column `hang`. A word longer than
   a line stands on a line of its own. */
static void wrapped(FILE *out, const char *text, size_t indent, size_t hang)
{
    size_t column = indent;
    int fresh = 1; /* nothing on this line yet */
    fprintf(out, "%*s", (int)indent, "");
    for (const char *p = text; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        const size_t len = strcspn(p, " ");
        if (!fresh && column + 1 + len > TEXT_COLUMNS) {
            fprintf(out, "\n%*s", (int)hang, "");
            column = hang;
            fresh = 1;
        }
        if (!fresh) {
            fputc(' ', out);
            column++;
        }
        fwrite(p, 1, len, out);
        column += len;
        fresh = 0;
        p += len;
    }
    fputc('\n', out);
}

/* x to three significant figures, the zeros that are figures kept (0.00990,
   3.60), so that every number says the same precision: plain from 0.0001 to
   999, else with an exponent (7.50e-06, 9.18e+04) rather than as zeros
   that are no figures. The exponent is read after rounding, so 999.6 is
   1.00e+03 and not 1000. */
static const char *three_figures(char *buf, size_t size, double x)
{
    if (isnan(x))
        snprintf(buf, size, "nan");
    else if (isinf(x))
        snprintf(buf, size, x > 0 ? "inf" : "-inf");
    else if (x == 0.0)
        snprintf(buf, size, "0.00");
    else {
        char e[32];
        snprintf(e, sizeof e, "%.2e", x);
        const long exponent = strtol(strchr(e, 'e') + 1, NULL, 10);
        if (exponent < -4 || exponent > 2)
            snprintf(buf, size, "%s", e);
        else
            snprintf(buf, size, "%.*f", (int)(2 - exponent), x);
    }
    return buf;
}

/* What the runs share, wrapped to 80 columns: the network (and its MLP
   where it is not the seed's GELU of 2d with biases), the optimiser, any
   decay or clipping, then what the numbers below are and what chance
   scores. */
static void heading(FILE *out, const vp_train_job *job, varying v)
{
    const vp_forward_options *n = &job->network;
    const vp_train_options *t = &job->train;
    char line[512];
    snprintf(line, sizeof line, "varprof train: %s task, ", vp_task_name(t->task));
    if (!v.layers)
        append(line, sizeof line, "%zu ", job->config.layers);
    append(line, sizeof line, "%s layers of width %zu, vocab %zu, %s",
           job->config.mlp_only ? "MLP" : "attention + MLP", n->width, n->vocab,
           n->norm == VP_NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
    wrapped(out, line, 0, INDENT);
    if (n->mlp != VP_MLP_GELU || n->ffn_width || n->bias != VP_BIAS_ALL) {
        snprintf(line, sizeof line, "%s MLP, hidden width %zu%s", vp_mlp_name(n->mlp),
                 vp_forward_ffn_width(n),
                 n->bias == VP_BIAS_NONE  ? ", no biases"
                 : n->bias == VP_BIAS_QKV ? ", biases on q, k, v alone"
                                          : "");
        wrapped(out, line, INDENT, 2 * INDENT);
    }
    snprintf(line, sizeof line, "batch %zu x %zu, Adam%s", n->batch, n->tokens,
             t->weight_decay > 0.0 ? "W" : "");
    if (!v.lr)
        append(line, sizeof line, " lr %g", t->lr);
    append(line, sizeof line, ", %s schedule", vp_schedule_name(t->schedule));
    if (!v.warmup)
        append(line, sizeof line, t->warmup ? ", %zu warm-up steps" : ", no warm-up", t->warmup);
    append(line, sizeof line, ", %zu step%s", t->steps, t->steps == 1 ? "" : "s");
    if (!v.seed && !n->weights && !t->token_stream)
        append(line, sizeof line, ", seed %llu", n->seed);
    wrapped(out, line, INDENT, 2 * INDENT);
    if (t->weight_decay > 0.0 || t->clip_norm > 0.0) {
        line[0] = '\0';
        if (t->weight_decay > 0.0)
            append(line, sizeof line, "weight decay %g%s", t->weight_decay,
                   t->clip_norm > 0.0 ? ", " : "");
        if (t->clip_norm > 0.0)
            append(line, sizeof line, "gradient norm clipped to %g", t->clip_norm);
        wrapped(out, line, INDENT, 2 * INDENT);
    }
    /* a uniform guess over V ids scores ln V whatever the target */
    char chance[32];
    snprintf(line, sizeof line,
             "loss: cross-entropy in nats, the mean over the batch's %s, before the "
             "step's update; chance (a uniform guess) is ln %zu = %s",
             t->task == VP_TASK_NEXT ? "predicted tokens (each but a sequence's last)" : "tokens",
             n->vocab, three_figures(chance, sizeof chance, log((double)n->vocab)));
    wrapped(out, line, INDENT, INDENT);
}

/* The table's columns: steps 0, every, 2 every, ... and the last. */
typedef struct {
    size_t every, last, count;
} step_columns;

static step_columns columns_of(const vp_train_job *jobs, size_t n, size_t every)
{
    step_columns c = {every, 0, 0};
    for (size_t i = 0; i < n; i++)
        c.last = jobs[i].train.steps - 1 > c.last ? jobs[i].train.steps - 1 : c.last;
    c.count = c.last / every + 1 + (c.last % every != 0);
    return c;
}

static size_t step_of(const step_columns *c, size_t column)
{
    return column * c->every < c->last ? column * c->every : c->last;
}

/* A run's cell in a column: its loss, "diverged" at the first column from
   the step where it diverged, and nothing after that or past its end. */
static const char *cell(char *buf, size_t size, const vp_train_result *r, const step_columns *c,
                        size_t column)
{
    const size_t s = step_of(c, column);
    buf[0] = '\0';
    if (r->diverged && s >= r->diverged_at) {
        if (column == 0 || step_of(c, column - 1) < r->diverged_at)
            snprintf(buf, size, "diverged");
    } else if (s < r->steps_run) {
        three_figures(buf, size, r->steps[s].loss);
    }
    return buf;
}

static size_t cell_width(const vp_train_job *jobs, size_t n, const step_columns *c)
{
    char text[32];
    snprintf(text, sizeof text, "%zu", c->last);
    size_t width = strlen(text);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < c->count; k++) {
            const size_t w = strlen(cell(text, sizeof text, jobs[i].result, c, k));
            width = w > width ? w : width;
        }
    return width;
}

/* One line of the table, its trailing blanks cut: the label, then columns
   first .. end - 1 right-aligned, a run's cells or (run NULL) the steps. */
static void table_line(FILE *out, const char *label, size_t label_width, const vp_train_result *run,
                       const step_columns *c, size_t first, size_t end, size_t width)
{
    char line[1024], text[32];
    snprintf(line, sizeof line, "%*s%-*s", INDENT, "", (int)label_width, label);
    for (size_t k = first; k < end; k++) {
        if (run)
            cell(text, sizeof text, run, c, k);
        else
            snprintf(text, sizeof text, "%zu", step_of(c, k));
        append(line, sizeof line, "%*s%*s", GAP, "", (int)width, text);
    }
    size_t len = strlen(line);
    while (len && line[len - 1] == ' ')
        len--;
    fprintf(out, "%.*s\n", (int)len, line);
}

/* Where a run diverged, and why, under the table. */
static void divergence_note(FILE *out, const char *label, const vp_train_result *r)
{
    char line[512];
    if (r->overflowed != VP_OVERFLOW_NONE) {
        snprintf(line, sizeof line,
                 "%s: diverged at step %zu: the %s overflowed float at sub-block %zu", label,
                 r->diverged_at,
                 r->overflowed == VP_OVERFLOW_FLOAT_GRAD || r->overflowed == VP_OVERFLOW_GRAD_VAR
                     ? "gradient"
                     : "stream",
                 r->overflow_at);
    } else {
        char loss[32], norm[32];
        snprintf(line, sizeof line, "%s: diverged at step %zu (loss %s, gradient norm %s)", label,
                 r->diverged_at, three_figures(loss, sizeof loss, r->steps[r->steps_run - 1].loss),
                 three_figures(norm, sizeof norm, r->steps[r->steps_run - 1].grad_norm));
    }
    wrapped(out, line, INDENT, 2 * INDENT);
}

/* The runs' labels, or where they are too long for a table that fits, the
   runs' numbers with the labels listed above the table; returns the label
   column's width. */
static size_t label_runs(FILE *out, const vp_train_job *jobs, size_t n, varying v,
                         char (*labels)[128])
{
    size_t width = strlen("step");
    for (size_t i = 0; i < n; i++) {
        label_of(labels[i], sizeof labels[i], &jobs[i], v);
        width = strlen(labels[i]) > width ? strlen(labels[i]) : width;
    }
    if (width <= LABEL_MAX)
        return width;
    width = strlen("step");
    for (size_t i = 0; i < n; i++) {
        char line[192];
        snprintf(line, sizeof line, "run %zu: %s", i + 1, labels[i]);
        wrapped(out, line, INDENT, 2 * INDENT);
        snprintf(labels[i], sizeof labels[i], "run %zu", i + 1);
        width = strlen(labels[i]) > width ? strlen(labels[i]) : width;
    }
    fputc('\n', out);
    return width;
}

vp_status vp_train_write_text(FILE *out, const vp_train_job *jobs, size_t n, size_t every)
{
    if (n == 0)
        return VP_OK;
    const varying v = what_varies(jobs, n);
    heading(out, &jobs[0], v);
    char(*labels)[128] = malloc(n * sizeof *labels);
    if (!labels)
        return VP_ENOMEM;
    fputc('\n', out);
    const size_t label_width = label_runs(out, jobs, n, v, labels);
    const step_columns c = columns_of(jobs, n, every);
    const size_t width = cell_width(jobs, n, &c);
    const size_t room = TEXT_COLUMNS - INDENT - label_width;
    const size_t per_line = room >= GAP + width ? room / (GAP + width) : 1;
    for (size_t first = 0; first < c.count; first += per_line) {
        const size_t end = first + per_line < c.count ? first + per_line : c.count;
        if (first)
            fputc('\n', out);
        table_line(out, "step", label_width, NULL, &c, first, end, width);
        for (size_t i = 0; i < n; i++)
            table_line(out, labels[i], label_width, jobs[i].result, &c, first, end, width);
    }
    for (size_t i = 0, said = 0; i < n; i++)
        if (jobs[i].result->diverged) {
            if (!said++)
                fputc('\n', out);
            divergence_note(out, labels[i], jobs[i].result);
        }
    free(labels);
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
