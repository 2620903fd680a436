#include "varprof/models.h"

#include <stdlib.h>
#include <string.h>

#include "io/csv_reader.h"
#include "varprof/parse.h"

static const char *const header[] = {"name", "year",    "layers", "placement",
                                     "norm", "qk_norm", "source"};
enum { N_COLUMNS = sizeof header / sizeof header[0] };

/* A table longer than this is not a models table but a mistake. */
#define VP_MAX_MODELS 100000

typedef struct {
    vp_model_table *table;
    size_t capacity;
    int seen_header;
} models_reader;

static int is_slug(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' || *s == '-'))
            return 0;
    return 1;
}

static vp_status parse_model(size_t line, char *const *cells, vp_model *m, vp_error *err)
{
    vp_error why;
    size_t number;
    if (!is_slug(cells[0]) || strlen(cells[0]) >= sizeof m->name)
        return vp_fail(err, VP_EFORMAT,
                       "line %zu: name '%s' must be 1 to %zu characters of "
                       "a-z, 0-9, '.' and '-'",
                       line, cells[0], sizeof m->name - 1);
    // NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy) its length is checked above
    strcpy(m->name, cells[0]);
    if (vp_parse_size(cells[1], 1900, 2100, &number, &why) != VP_OK)
        return vp_fail(err, VP_EFORMAT, "line %zu, year: %s", line, why.message);
    m->year = (int)number;
    if (vp_parse_size(cells[2], 1, VP_MAX_LAYERS, &m->layers, &why) != VP_OK)
        return vp_fail(err, VP_EFORMAT, "line %zu, layers: %s", line, why.message);
    if (vp_placement_parse(cells[3], &m->placement, &why) != VP_OK)
        return vp_fail(err, VP_EFORMAT, "line %zu, placement: %s", line, why.message);
    if (strcmp(cells[4], "layernorm") == 0)
        m->norm = VP_NORM_LAYERNORM;
    else if (strcmp(cells[4], "rmsnorm") == 0)
        m->norm = VP_NORM_RMSNORM;
    else
        return vp_fail(err, VP_EFORMAT, "line %zu, norm: '%s' is not layernorm or rmsnorm", line,
                       cells[4]);
    if (strcmp(cells[5], "yes") == 0 || strcmp(cells[5], "no") == 0)
        m->qk_norm = cells[5][0] == 'y';
    else
        return vp_fail(err, VP_EFORMAT, "line %zu, qk_norm: '%s' is not yes or no", line, cells[5]);
    if (!cells[6][0] || strlen(cells[6]) >= sizeof m->source)
        return vp_fail(err, VP_EFORMAT,
                       "line %zu, source: every fact needs a source of 1 to %zu "
                       "characters",
                       line, sizeof m->source - 1);
    // NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy) its length is checked above
    strcpy(m->source, cells[6]);
    return VP_OK;
}

static vp_status on_row(void *ctx, size_t line, size_t n_cells, char *const *cells, vp_error *err)
{
    models_reader *r = ctx;
    vp_status status = csv_check_row_width(
        line, n_cells, cells, N_COLUMNS, 0,
        "the table has 7: name, year, layers, placement, norm, qk_norm, source", err);
    if (status != VP_OK)
        return status;
    if (!r->seen_header) {
        r->seen_header = 1;
        for (int c = 0; c < N_COLUMNS; c++)
            if (strcmp(cells[c], header[c]) != 0)
                return vp_fail(err, VP_EFORMAT, "line %zu: column %d is '%s', expected '%s'%s",
                               line, c + 1, cells[c], header[c],
                               csv_header_near_miss(cells[c], header[c])
                                   ? " (a header must be exactly so: lower case, no spaces)"
                                   : "");
        return VP_OK;
    }
    vp_model_table *t = r->table;
    if (t->count == VP_MAX_MODELS)
        return vp_fail(err, VP_EFORMAT, "line %zu: more than %d models", line, VP_MAX_MODELS);
    if (t->count == r->capacity) {
        size_t capacity = r->capacity ? 2 * r->capacity : 32;
        vp_model *grown = realloc(t->models, capacity * sizeof *grown);
        if (!grown)
            return vp_fail(err, VP_ENOMEM, "no memory for %zu models", capacity);
        t->models = grown;
        r->capacity = capacity;
    }
    vp_model *m = &t->models[t->count];
    status = parse_model(line, cells, m, err);
    if (status != VP_OK)
        return status;
    if (vp_model_find(t, m->name))
        return vp_fail(err, VP_EFORMAT, "line %zu: model '%s' is listed twice", line, m->name);
    t->count++;
    return VP_OK;
}

vp_status vp_models_read(const char *path, vp_model_table *table, vp_error *err)
{
    *table = (vp_model_table){0};
    models_reader r = {.table = table};
    vp_status status = csv_read_file(path, on_row, &r, err);
    if (status == VP_OK && !r.seen_header)
        status = vp_fail(err, VP_EFORMAT, "%s is empty: it needs the header row", path);
    if (status != VP_OK)
        vp_model_table_free(table);
    return status;
}

void vp_model_table_free(vp_model_table *table)
{
    if (!table)
        return;
    free(table->models);
    *table = (vp_model_table){0};
}

const vp_model *vp_model_find(const vp_model_table *table, const char *name)
{
    for (size_t i = 0; i < table->count; i++)
        if (strcmp(table->models[i].name, name) == 0)
            return &table->models[i];
    return NULL;
}
