/* The token-ids file: the CSV of token ids a forward pass reads. */
#include "varprof/token_ids.h"

#include <stdlib.h>
#include <string.h>

#include "io/csv_reader.h"
#include "varprof/parse.h"

typedef struct {
    size_t vocab, rows, width, count, capacity;
    unsigned *ids;
} ids_reader;

/* A cell that is several ids run together: what separated them. Spaces
 * around a cell are the CSV reader's to drop; those left are inside it. */
static const char *separator_hint(const char *cell)
{
    const char *digit = strpbrk(cell, "0123456789");
    const char *rest = digit ? digit + strspn(digit, "0123456789") : "";
    if (!strpbrk(rest, "0123456789")) /* one number at most: not ids run together */
        return "";
    if (strchr(rest, ';'))
        return "; a row's ids are separated by commas, not semicolons";
    if (strchr(rest, '\t'))
        return "; a row's ids are separated by commas, not tabs";
    if (strchr(rest, ' '))
        return "; a row's ids are separated by commas, not spaces";
    return "";
}

static vp_status on_row(void *ctx, size_t line, size_t n_cells, char *const *cells, vp_error *err)
{
    ids_reader *r = ctx;
    const size_t row = r->rows + 1;
    if (r->rows == 0)
        r->width = n_cells;
    else if (n_cells != r->width)
        return vp_fail(err, VP_EFORMAT, "row %zu (line %zu) has %zu ids; row 1 has %zu", row, line,
                       n_cells, r->width);
    if (r->count + n_cells > VP_MAX_TOKEN_IDS)
        return vp_fail(err, VP_EFORMAT, "more than %u token ids", VP_MAX_TOKEN_IDS);
    if (r->count + n_cells > r->capacity) {
        size_t capacity = r->capacity ? 2 * r->capacity : 1024;
        while (capacity < r->count + n_cells)
            capacity *= 2;
        unsigned *grown = realloc(r->ids, capacity * sizeof *grown);
        if (!grown)
            return vp_fail(err, VP_ENOMEM, "no memory for %zu token ids", capacity);
        r->ids = grown;
        r->capacity = capacity;
    }
    for (size_t c = 0; c < n_cells; c++) {
        size_t id;
        vp_error why;
        if (vp_parse_size(cells[c], 0, r->vocab - 1, &id, &why) != VP_OK)
            return vp_fail(err, VP_EFORMAT,
                           "row %zu, column %zu: '%s' is not a token id from 0 "
                           "to %zu%s",
                           row, c + 1, cells[c], r->vocab - 1, separator_hint(cells[c]));
        r->ids[r->count++] = (unsigned)id;
    }
    r->rows++;
    return VP_OK;
}

vp_status vp_token_ids_read(const char *path, size_t vocab, unsigned **ids, size_t *batch,
                            size_t *tokens, vp_error *err)
{
    ids_reader r = {.vocab = vocab};
    *ids = NULL;
    vp_status status = vocab == 0 ? vp_fail(err, VP_EINVAL, "a vocab of 0 has no token ids")
                                  : csv_read_file(path, on_row, &r, err);
    if (status == VP_OK && (r.rows == 0 || r.width == 0))
        status = vp_fail(err, VP_EFORMAT, "%s holds no token ids", path);
    if (status != VP_OK) {
        free(r.ids);
        return status;
    }
    *ids = r.ids;
    *batch = r.rows;
    *tokens = r.width;
    return VP_OK;
}
