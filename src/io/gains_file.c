#include "varprof/gains_file.h"

#include <stdlib.h>
#include <string.h>

#include "io/csv_reader.h"
#include "varprof/parse.h"

typedef struct {
    double *gains;
    size_t count, capacity;
    size_t column;  /* which cell holds the gain */
    int seen_first; /* the first row decides the layout */
} gains_reader;

static vp_status push(gains_reader *g, double value, vp_error *err)
{
    if (g->count == VP_MAX_GAINS)
        return vp_fail(err, VP_EFORMAT, "holds more than %u gains", VP_MAX_GAINS);
    if (g->count == g->capacity) {
        size_t capacity = g->capacity ? 2 * g->capacity : 256;
        double *grown = realloc(g->gains, capacity * sizeof *grown);
        if (!grown)
            return vp_fail(err, VP_ENOMEM, "no memory for %zu gains", capacity);
        g->gains = grown;
        g->capacity = capacity;
    }
    g->gains[g->count++] = value;
    return VP_OK;
}

static vp_status on_row(void *ctx, size_t line, size_t n_cells, char *const *cells, vp_error *err)
{
    gains_reader *g = ctx;
    if (!g->seen_first) {
        g->seen_first = 1;
        for (size_t c = 0; c < n_cells; c++) {
            if (strcmp(cells[c], "gain") == 0) {
                g->column = c;
                return VP_OK; /* a header row */
            }
        }
        if (n_cells != 1)
            return vp_fail(err, VP_EFORMAT,
                           "line %zu has %zu columns but none is named 'gain'; give one column "
                           "of gains, or a header row with a 'gain' column",
                           line, n_cells);
    }
    if (g->column >= n_cells)
        return vp_fail(err, VP_EFORMAT, "line %zu has no column %zu for its gain", line,
                       g->column + 1);
    vp_error why;
    double value;
    if (vp_parse_double(cells[g->column], &value, &why) != VP_OK)
        return vp_fail(err, VP_EFORMAT, "line %zu, column %zu: %s", line, g->column + 1,
                       why.message);
    if (value < 0.0)
        return vp_fail(err, VP_EFORMAT,
                       "line %zu, column %zu: the gain %s is negative; a gain "
                       "must be >= 0",
                       line, g->column + 1, cells[g->column]);
    return push(g, value, err);
}

vp_status vp_gains_read(const char *path, double **gains, size_t *count, vp_error *err)
{
    gains_reader g = {0};
    *gains = NULL;
    *count = 0;
    vp_status status = csv_read_file(path, on_row, &g, err);
    if (status == VP_OK && g.count == 0)
        status = vp_fail(err, VP_EFORMAT, "%s holds no gains", path);
    if (status != VP_OK) {
        free(g.gains);
        return status;
    }
    *gains = g.gains;
    *count = g.count;
    return VP_OK;
}
