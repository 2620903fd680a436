/* Weights drawn by position (forward/weight_draw.h): the whole matrix at
 * init, or a panel at a time inside the matmul. */
#include <Random123/philox.h>
#include <string.h>

#include "forward/weight_draw.h"
#include "varprof/gauss.h"

/* The second half of each weight's Philox counter, apart from every
   Monte Carlo stream's (a sub-block number). */
#define WEIGHT_NORMALS 0xFFFFFF00u
#define WEIGHT_UNIFORMS 0xFFFFFF01u

/* Values of one row of W drawn at once before they are spread across a
   panel: a block of k (KC at most 1024) fits. */
#define DRAW_CHUNK 1024

uint32_t fw_layer_stream_of(size_t layer, unsigned which)
{
    return (uint32_t)(1 + layer * 16 + which);
}

static void uniform_values(const fw_draw *d, float *out, size_t n, uint64_t first)
{
    const philox4x32_key_t key = {{(uint32_t)d->seed, (uint32_t)(d->seed >> 32)}};
    philox4x32_ctr_t r = {{0}};
    for (size_t i = 0; i < n; i++) {
        const uint64_t at = first + i;
        if (i == 0 || at % 4 == 0) { /* a new block of four */
            const uint64_t block = at / 4;
            const philox4x32_ctr_t ctr = {
                {d->stream, WEIGHT_UNIFORMS, (uint32_t)block, (uint32_t)(block >> 32)}};
            r = philox4x32(ctr, key);
        }
        const double u = ((double)r.v[at % 4] + 0.5) * 0x1p-32;
        out[i] = (float)((2.0 * u - 1.0) * d->scale);
        if (d->factor != 1.0)
            out[i] = (float)(d->factor * out[i]);
    }
}

/* The draws before the normal's scale: standard normals, or the finished
   uniforms. */
static void raw_values(const fw_draw *d, float *out, size_t n, uint64_t first)
{
    if (d->kind == FW_DRAW_UNIFORM)
        uniform_values(d, out, n, first);
    else
        vp_gauss_fill(out, n, d->seed, d->stream, WEIGHT_NORMALS, first);
}

/* The normal's scale, its product in double and rounded once to float;
   the uniforms are finished (scale 1 copies). */
static double finishing_scale(const fw_draw *d)
{
    return d->kind == FW_DRAW_UNIFORM ? 1.0 : d->scale;
}

/* dst[i stride] = src[i] scaled, in one pass (a copy, a transpose) */
static void finish(float *dst, size_t stride, const float *src, size_t n, double scale)
{
    for (size_t i = 0; i < n; i++)
        dst[i * stride] = (float)(scale * src[i]);
}

void fw_draw_values(const fw_draw *d, float *out, size_t n, uint64_t first)
{
    raw_values(d, out, n, first);
    if (d->kind != FW_DRAW_UNIFORM)
        finish(out, 1, out, n, d->scale);
}

/* Draws a task of a tensor drawn whole: a multiple of Philox's four. */
#define DRAWS_PER_TASK ((size_t)1 << 16)

typedef struct {
    const fw_draw *d;
    float *out;
    size_t n;
} whole_job;

static void whole_task(void *ctx, size_t task, size_t thread)
{
    (void)thread;
    const whole_job *j = ctx;
    const size_t first = task * DRAWS_PER_TASK;
    const size_t len = j->n - first < DRAWS_PER_TASK ? j->n - first : DRAWS_PER_TASK;
    fw_draw_values(j->d, j->out + first, len, first);
}

void fw_draw_whole(const fw_draw *d, float *out, size_t n, thread_pool *pool)
{
    if (!pool || n < 2 * FW_DRAWS_PER_THREAD) {
        fw_draw_values(d, out, n, 0);
        return;
    }
    whole_job j = {d, out, n};
    thread_pool_run(pool, (n + DRAWS_PER_TASK - 1) / DRAWS_PER_TASK, whole_task, &j);
}

/* W's rows j0 .. j0 + nr - 1 over k's p0 .. p0 + kc - 1: each row's run
   drawn whole, then spread across the panel's stride */
static void fill_panel(const fw_draw *d, float *panel, size_t nr, size_t j0, size_t p0, size_t kc)
{
    if (nr == 1) { /* the row is the panel */
        if (j0 < d->rows)
            fw_draw_values(d, panel, kc, (uint64_t)j0 * d->cols + p0);
        else
            memset(panel, 0, kc * sizeof *panel);
        return;
    }
    const size_t rows = j0 >= d->rows ? 0 : d->rows - j0 < nr ? d->rows - j0 : nr;
    const uint64_t first = (uint64_t)j0 * d->cols + p0;
    if (first % 4 == 0 && d->cols % 4 == 0 && kc % 4 == 0 &&
        (first + (rows ? rows - 1 : 0) * d->cols + kc) / 4 < ((uint64_t)1 << 32)) {
        /* the usual shapes: straight into the panel, a lane a row of W */
        if (d->kind == FW_DRAW_NORMAL)
            kern_current()->gauss_panel(panel, nr, rows, kc, d->seed, d->stream, WEIGHT_NORMALS,
                                        first, d->cols, d->scale);
        else
            kern_current()->uniform_panel(panel, nr, rows, kc, d->seed, d->stream, WEIGHT_UNIFORMS,
                                          first, d->cols, d->scale, d->factor);
        return;
    }
    float run[DRAW_CHUNK];
    const double scale = finishing_scale(d);
    for (size_t c = 0; c < nr; c++) {
        const size_t j = j0 + c;
        for (size_t q = 0; q < kc; q += DRAW_CHUNK) {
            const size_t len = kc - q < DRAW_CHUNK ? kc - q : DRAW_CHUNK;
            if (j < d->rows)
                raw_values(d, run, len, (uint64_t)j * d->cols + p0 + q);
            else
                memset(run, 0, len * sizeof *run);
            finish(panel + q * nr + c, nr, run, len, scale);
        }
    }
}

/* W^T's rows j0 .. are W's columns: each panel row is a run of one of W's
   rows, p0 + p */
static void fill_panel_transposed(const fw_draw *d, float *panel, size_t nr, size_t j0, size_t p0,
                                  size_t kc)
{
    const size_t valid = j0 >= d->cols ? 0 : d->cols - j0 < nr ? d->cols - j0 : nr;
    for (size_t p = 0; p < kc; p++) {
        float *row = panel + p * nr;
        fw_draw_values(d, row, valid, (uint64_t)(p0 + p) * d->cols + j0);
        memset(row + valid, 0, (nr - valid) * sizeof *row);
    }
}

static void fill(const void *ctx, float *panel, size_t nr, size_t j0, size_t p0, size_t kc)
{
    const fw_draw *d = ctx;
    if (d->transposed)
        fill_panel_transposed(d, panel, nr, j0, p0, kc);
    else
        fill_panel(d, panel, nr, j0, p0, kc);
}

kern_panel_source fw_draw_source(const fw_draw *d)
{
    const kern_panel_source s = {fill, d};
    return s;
}
