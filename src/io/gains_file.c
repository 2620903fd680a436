/* The gains file: one column of per-sub-block gains. */
#include "varprof/gains_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv_reader.h"
#include "varprof/parse.h"

typedef struct {
    double *gains;
    size_t count, capacity;
    size_t column;  /* which cell holds the gain */
    size_t width;   /* every row's cells: the header's, or 1 */
    size_t header;  /* the header's line, or 0 for one column without one */
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

/* The first row: a header naming a column exactly `gain`, or the first of
 * one column of gains. */
static vp_status read_layout(gains_reader *g, size_t line, size_t n_cells, char *const *cells,
                             vp_error *err)
{
    g->seen_first = 1;
    g->width = n_cells;
    for (size_t c = 0; c < n_cells; c++) {
        if (strcmp(cells[c], "gain") != 0)
            continue;
        for (size_t other = c + 1; other < n_cells; other++)
            if (strcmp(cells[other], "gain") == 0)
                return vp_fail(err, VP_EFORMAT,
                               "line %zu names columns %zu and %zu 'gain'; name one of them so",
                               line, c + 1, other + 1);
        g->column = c;
        g->header = line;
        return VP_OK;
    }
    for (size_t c = 0; c < n_cells; c++)
        if (csv_header_near_miss(cells[c], "gain"))
            return vp_fail(err, VP_EFORMAT,
                           "line %zu, column %zu: the header '%s' must be exactly 'gain' "
                           "(lower case, no spaces)",
                           line, c + 1, cells[c]);
    if (n_cells != 1) {
        char hint[2 * VP_CSV_MAX_CELL_BYTES + 128];
        csv_decimal_comma_hint(n_cells, cells, 0, hint, sizeof hint);
        return vp_fail(err, VP_EFORMAT,
                       "line %zu has %zu cells but none is named 'gain'; give one column "
                       "of gains, or a header row with a 'gain' column%s",
                       line, n_cells, hint);
    }
    return VP_OK;
}

static vp_status on_row(void *ctx, size_t line, size_t n_cells, char *const *cells, vp_error *err)
{
    gains_reader *g = ctx;
    vp_status status;
    if (!g->seen_first) {
        if ((status = read_layout(g, line, n_cells, cells, err)) != VP_OK || g->header)
            return status;
    } else {
        /* a cell more or less than the header's shifts every column after it:
         * `0,5` under `gain` would read as 0 */
        char expected[64];
        if (g->header)
            snprintf(expected, sizeof expected, "the header (line %zu) has %zu", g->header,
                     g->width);
        else
            snprintf(expected, sizeof expected, "the file is one column of gains");
        if ((status = csv_check_row_width(line, n_cells, cells, g->width, g->column, expected,
                                          err)) != VP_OK)
            return status;
    }
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
