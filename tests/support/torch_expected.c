#include "torch_expected.h"

#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csv_text.h"
#include "io/csv_reader.h"
#include "run_program.h"

typedef struct {
    torch_expected *e;
    const char *case_name;
    double zero;
} expected_reader;

torch_tensor *torch_expected_tensor(torch_expected *e, const char *name)
{
    for (size_t i = 0; i < e->n_tensors; i++)
        if (strcmp(e->tensors[i].name, name) == 0)
            return &e->tensors[i];
    return NULL;
}

/* figure k of a per-sub-block quantity, k from first */
static void set_at(double *v, size_t *n, const char *key, double value, size_t first)
{
    const size_t k = strtoul(key, NULL, 10);
    if (k < first || k > TORCH_MOST_SUB_BLOCKS)
        return;
    v[k] = value;
    *n = k + 1 > *n ? k + 1 : *n;
}

static vp_status on_expected_row(void *ctx, size_t line, size_t n_cells, char *const *cells,
                                 vp_error *err)
{
    (void)line;
    (void)err;
    expected_reader *r = ctx;
    torch_expected *e = r->e;
    if (n_cells != 6 || cells[0][0] == '#' || strcmp(cells[0], r->case_name) != 0)
        return VP_OK;
    const char *q = cells[1], *key = cells[2];
    const double f32 = strtod(cells[4], NULL), f64 = strtod(cells[5], NULL);
    if (fabs(f64) > r->zero) {
        const double noise = fabs(f32 - f64) / fabs(f64);
        e->worst_noise = noise > e->worst_noise ? noise : e->worst_noise;
    }
    if (strcmp(q, "loss") == 0) {
        e->loss = f64;
        e->have_loss = 1;
    } else if (strcmp(q, "frobenius") == 0 || strcmp(q, "rms") == 0) {
        torch_tensor *t = torch_expected_tensor(e, key);
        if (!t && e->n_tensors < TORCH_MOST_TENSORS) {
            t = &e->tensors[e->n_tensors++];
            snprintf(t->name, sizeof t->name, "%s", key);
            snprintf(t->shape, sizeof t->shape, "%s", cells[3]);
        }
        if (t && q[0] == 'f')
            t->frobenius = f64;
        else if (t)
            t->rms = f64;
    } else if (strcmp(q, "stream_norm") == 0) {
        set_at(e->stream_norm, &e->n_stream_norm, key, f64, 0);
    } else if (strcmp(q, "grad_var") == 0) {
        set_at(e->grad_var, &e->n_grad_var, key, f64, 0);
    } else if (strcmp(q, "weight_grad") == 0) {
        set_at(e->weight_grad, &e->n_weight_grad, key, f64, 1);
    }
    return VP_OK;
}

torch_expected *torch_expected_load(const char *file, const char *case_name, double zero)
{
    torch_expected *e = calloc(1, sizeof *e);
    assert_non_null(e);
    expected_reader r = {e, case_name, zero};
    vp_error err;
    if (csv_read_file(test_data_path(file), on_expected_row, &r, &err) != VP_OK)
        fail_msg("%s: %s", file, err.message);
    return e;
}

/* "[48, 96]", "48x96", "(48,96)": the numbers, joined by 'x'. */
static void shape_digits(const char *s, char *out, size_t size)
{
    size_t n = 0;
    int in_number = 0;
    for (; *s && n + 2 < size; s++) {
        if (isdigit((unsigned char)*s)) {
            if (!in_number && n > 0)
                out[n++] = 'x';
            out[n++] = *s;
            in_number = 1;
        } else
            in_number = 0;
    }
    out[n] = '\0';
}

typedef struct {
    torch_expected *want;
    torch_grads_out *out;
} grads_reader;

static vp_status on_grads_row(void *ctx, size_t line, size_t n_cells, char *const *cells,
                              vp_error *err)
{
    (void)err;
    grads_reader *r = ctx;
    torch_grads_out *g = r->out;
    if (line == 1 || !g->header_ok) {
        g->header_ok = n_cells == 4 && strcmp(cells[0], "name") == 0 &&
                       strcmp(cells[1], "shape") == 0 && strcmp(cells[2], "frobenius") == 0 &&
                       strcmp(cells[3], "rms") == 0;
        return VP_OK;
    }
    if (n_cells != 4)
        return VP_OK;
    g->rows++;
    torch_tensor *t = torch_expected_tensor(r->want, cells[0]);
    if (!t) {
        snprintf(g->unknown, sizeof g->unknown, "%s", cells[0]);
        return VP_OK;
    }
    char shape[32];
    shape_digits(cells[1], shape, sizeof shape);
    if (strcmp(shape, t->shape) != 0)
        snprintf(g->bad_shape, sizeof g->bad_shape, "%s: %s, PyTorch %s", cells[0], cells[1],
                 t->shape);
    const size_t i = (size_t)(t - r->want->tensors);
    t->seen++;
    g->got_frobenius[i] = strtod(cells[2], NULL);
    g->got_rms[i] = strtod(cells[3], NULL);
    return VP_OK;
}

void torch_grads_out_read(const char *path, torch_expected *want, torch_grads_out *out)
{
    memset(out, 0, sizeof *out);
    grads_reader r = {want, out};
    vp_error err;
    if (csv_read_file(path, on_grads_row, &r, &err) != VP_OK)
        fail_msg("%s: %s", path, err.message);
}

void torch_profile_read(const char *csv, torch_profile *f)
{
    memset(f, 0, sizeof *f);
    const int c_k = csv_column_of(csv, "sub_block"), c_s = csv_column_of(csv, "stream_norm"),
              c_g = csv_column_of(csv, "grad_var"), c_w = csv_column_of(csv, "weight_grad");
    if (c_k < 0 || c_s < 0 || c_g < 0 || c_w < 0)
        fail_msg("the CSV lacks sub_block, stream_norm, grad_var or weight_grad:\n%.300s", csv);
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const double k = csv_number_at(line + 1, c_k);
        if (!(k >= 0 && k <= TORCH_MOST_SUB_BLOCKS))
            continue;
        f->stream_norm[(size_t)k] = csv_number_at(line + 1, c_s);
        f->grad_var[(size_t)k] = csv_number_at(line + 1, c_g);
        f->weight_grad[(size_t)k] = csv_number_at(line + 1, c_w);
        f->rows++;
    }
}

double torch_reported_loss(const char *json)
{
    const char *p = json ? strstr(json, "\"loss_value\"") : NULL;
    if (!p)
        return NAN;
    p += strlen("\"loss_value\"");
    while (*p == ' ' || *p == ':')
        p++;
    char *end;
    const double v = strtod(p, &end);
    return end != p ? v : NAN;
}
