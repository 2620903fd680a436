/* The models table's attention columns, read into vp_model_shape: the
 * sliding window and which layers slide, the sliding layers' own RoPE base,
 * linear RoPE scaling, the scores' scale and the soft caps (Gemma 2's and
 * Gemma 3's facts, Mistral's and Phi-3's windows). */
#include <math.h>
#include <string.h>

#include "io/model_shape_cells.h"
#include "varprof/parse.h"

const char *const model_attention_header[MODEL_ATTENTION_COLUMNS] = {
    "sliding_window", "window_pattern", "rope_local_theta", "rope_linear_factor",
    "attn_scalar",    "attn_softcap",   "logit_softcap"};

enum {
    SLIDING_WINDOW,
    WINDOW_PATTERN,
    ROPE_LOCAL_THETA,
    ROPE_LINEAR_FACTOR,
    ATTN_SCALAR,
    ATTN_SOFTCAP,
    LOGIT_SOFTCAP
};

/* A window longer than this is a typing mistake: the learned tables' bound. */
#define MAX_WINDOW (1u << 24)
#define MAX_LINEAR_FACTOR 1e6

static vp_status bad(size_t line, int column, const char *cell, const char *allowed, vp_error *err)
{
    return vp_fail(err, VP_EFORMAT, "line %zu, %s: '%s' is not %s", line,
                   model_attention_header[column], cell, allowed);
}

/* A number in (low, high], or [low, high] where closed; NaN-free. */
static int read_number(const char *cell, double low, double high, int closed, double *out)
{
    vp_error why;
    if (vp_parse_double(cell, out, &why) != VP_OK || !isfinite(*out))
        return 0;
    return (closed ? *out >= low : *out > low) && *out <= high;
}

/* The window and which layers slide. */
static vp_status read_window(size_t line, char *const *cells, vp_model_shape *s, vp_error *err)
{
    vp_error why;
    const char *window = cells[SLIDING_WINDOW], *pattern = cells[WINDOW_PATTERN];
    if (window[0] && vp_parse_size(window, 1, MAX_WINDOW, &s->sliding_window, &why) != VP_OK)
        return bad(line, SLIDING_WINDOW, window,
                   "a whole number of keys from 1 to 16777216, or empty for none", err);
    if (!pattern[0])
        return VP_OK;
    if (!window[0] || vp_parse_size(pattern, 2, VP_MAX_LAYERS, &s->window_pattern, &why) != VP_OK)
        return bad(line, WINDOW_PATTERN, pattern,
                   "a whole number from 2 to 1000000 beside a sliding_window (layer l attends "
                   "fully where (l + 1) % it is 0), or empty for every layer sliding",
                   err);
    return VP_OK;
}

/* RoPE's second base and its linear factor: for rope alone; the second base
   where there are sliding and full layers, a pattern. */
static vp_status read_rope(size_t line, char *const *cells, vp_model_shape *s, vp_error *err)
{
    const int rope =
        s->positions == VP_MODEL_POSITIONS_ROPE || s->positions == VP_MODEL_POSITIONS_PARTIAL_ROPE;
    const char *local = cells[ROPE_LOCAL_THETA], *linear = cells[ROPE_LINEAR_FACTOR];
    if (local[0] && (!rope || !s->window_pattern ||
                     !read_number(local, 1.0, INFINITY, 0, &s->rope_local_theta)))
        return bad(line, ROPE_LOCAL_THETA, local,
                   "a number > 1 for rope positions beside a window_pattern (the sliding "
                   "layers' own base), or empty for rope_theta's",
                   err);
    if (linear[0] && (!rope || !read_number(linear, 1.0, MAX_LINEAR_FACTOR, 1, &s->rope_linear)))
        return bad(line, ROPE_LINEAR_FACTOR, linear,
                   "a number from 1 to 1e6 for rope positions (rope_theta's frequencies divided "
                   "by it), or empty for none",
                   err);
    return VP_OK;
}

/* The scores' scale and the soft caps: numbers > 0. */
static vp_status read_scales(size_t line, char *const *cells, vp_model_shape *s, vp_error *err)
{
    static const int columns[] = {ATTN_SCALAR, ATTN_SOFTCAP, LOGIT_SOFTCAP};
    double *const values[] = {&s->attn_scalar, &s->attn_softcap, &s->logit_softcap};
    static const char *const allowed[] = {
        "a number > 0 (the scores times its -1/2 power), or empty for the head width's",
        "a number > 0 (each score z becomes c tanh(z / c)), or empty for none",
        "a number > 0 (each logit z becomes c tanh(z / c)), or empty for none"};
    for (size_t i = 0; i < sizeof columns / sizeof *columns; i++) {
        const char *cell = cells[columns[i]];
        if (cell[0] && !read_number(cell, 0.0, INFINITY, 0, values[i]))
            return bad(line, columns[i], cell, allowed[i], err);
    }
    return VP_OK;
}

vp_status model_attention_parse(size_t line, char *const *cells, vp_model *m, vp_error *err)
{
    vp_model_shape *s = &m->shape;
    s->sliding_window = s->window_pattern = 0;
    s->rope_local_theta = s->attn_scalar = s->attn_softcap = s->logit_softcap = 0.0;
    s->rope_linear = 1.0;
    if (!cells)
        return VP_OK;
    vp_status status =
        model_cells_need_shape(line, cells, MODEL_ATTENTION_COLUMNS, model_attention_header,
                               "attention's cells need", m, err);
    if (status == VP_OK)
        status = read_window(line, cells, s, err);
    if (status == VP_OK)
        status = read_rope(line, cells, s, err);
    if (status == VP_OK)
        status = read_scales(line, cells, s, err);
    return status;
}
