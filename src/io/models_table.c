/* The models table (data/models.csv): reading it and looking a model up. */
#include "varprof/models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv_reader.h"
#include "io/model_shape_cells.h"
#include "varprof/parse.h"

static const char *const header[] = {
    "name",    "year",   "layers", "placement", "norm",
    "qk_norm", "source", "alpha",  "beta",      "alpha_beta_source"};
/* The first seven are required; the model's own alpha and beta may be left out, all
 * three columns together, and then the shape's columns, which follow them. */
enum {
    N_REQUIRED = 7,
    N_WITH_SCALES = sizeof header / sizeof header[0],
    N_WITH_SHAPE = N_WITH_SCALES + MODEL_SHAPE_COLUMNS,
    N_WITH_FORMS = N_WITH_SHAPE + MODEL_FORM_COLUMNS,
    N_COLUMNS = N_WITH_FORMS + MODEL_ATTENTION_COLUMNS
};
enum { ALPHA_COLUMN = 7 }; /* where a decimal comma would most likely be */
#define COLUMNS_TEXT                                                                               \
    "name, year, layers, placement, norm, qk_norm, source, and optionally alpha, beta, "           \
    "alpha_beta_source, and optionally after them the shape's width, heads, kv_heads, head_dim, "  \
    "ffn_width, vocab, activation, positions, max_positions, rope_theta, norm_eps, biases, "       \
    "tied_embeddings, final_norm, architecture, shape_source, and optionally after them the "      \
    "forms' residual, rotary_fraction, rotary_pairing, embedding_norm, logit_scale, norm_bias, "   \
    "and optionally after them attention's sliding_window, window_pattern, rope_local_theta, "     \
    "rope_linear_factor, attn_scalar, attn_softcap, logit_softcap"

/* The name of the header's column c (from 0) in a table of N_COLUMNS. */
static const char *column_name(size_t c)
{
    if (c < N_WITH_SCALES)
        return header[c];
    if (c < N_WITH_SHAPE)
        return model_shape_header[c - N_WITH_SCALES];
    return c < N_WITH_FORMS ? model_form_header[c - N_WITH_SHAPE]
                            : model_attention_header[c - N_WITH_FORMS];
}

/* A table longer than this is not a models table but a mistake. */
#define VP_MAX_MODELS 100000

typedef struct {
    vp_model_table *table;
    size_t capacity;
    size_t columns; /* the header's: N_REQUIRED, N_WITH_SCALES, N_WITH_SHAPE, N_WITH_FORMS or
                       N_COLUMNS */
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

/* The exponent p of (cN)^(p): a number, or a fraction a/b. */
static int parse_power(const char *text, double *power)
{
    char part[32];
    const char *slash = strchr(text, '/');
    vp_error why;
    if (!slash)
        return vp_parse_double(text, power, &why) == VP_OK;
    double numerator, denominator;
    size_t length = (size_t)(slash - text);
    if (length >= sizeof part)
        return 0;
    memcpy(part, text, length);
    part[length] = '\0';
    if (vp_parse_double(part, &numerator, &why) != VP_OK ||
        vp_parse_double(slash + 1, &denominator, &why) != VP_OK || denominator == 0.0)
        return 0;
    *power = numerator / denominator;
    return 1;
}

/* "" (the placement's default), a number > 0, or (cN)^(p) with c > 0. */
static int parse_scale(const char *text, vp_model_scale *scale)
{
    *scale = (vp_model_scale){0};
    if (strlen(text) >= sizeof scale->text)
        return 0;
    // NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy) its length is checked above
    strcpy(scale->text, text);
    if (!*text)
        return 1;
    vp_error why;
    if (*text != '(')
        return vp_parse_double(text, &scale->factor, &why) == VP_OK && scale->factor > 0.0;
    char inner[32];
    const char *n = strstr(text, "N)^(");
    const size_t length = strlen(text);
    if (!n || text[length - 1] != ')' || (size_t)(n - text) > sizeof inner)
        return 0;
    scale->factor = 1.0;
    if (n > text + 1) {
        memcpy(inner, text + 1, (size_t)(n - text - 1));
        inner[n - text - 1] = '\0';
        if (vp_parse_double(inner, &scale->factor, &why) != VP_OK || !(scale->factor > 0.0))
            return 0;
    }
    const char *power = n + 4;
    memcpy(inner, power, (size_t)(text + length - 1 - power));
    inner[text + length - 1 - power] = '\0';
    scale->per_layer = 1;
    return parse_power(inner, &scale->power);
}

/* The model's own alpha and beta, and their source: a deepnorm model's only. */
static vp_status parse_scales(size_t line, char *const *cells, vp_model *m, vp_error *err)
{
    const char *names[2] = {"alpha", "beta"};
    vp_model_scale *scales[2] = {&m->alpha, &m->beta};
    for (int i = 0; i < 2; i++)
        if (!parse_scale(cells[7 + i], scales[i]))
            return vp_fail(err, VP_EFORMAT,
                           "line %zu, %s: '%s' is not empty, a number > 0 or (cN)^(p) with "
                           "c > 0 and p a number or a fraction a/b, N the layers",
                           line, names[i], cells[7 + i]);
    const int given = m->alpha.text[0] || m->beta.text[0];
    if (given && m->placement != VP_DEEPNORM)
        return vp_fail(err, VP_EFORMAT,
                       "line %zu, alpha and beta: only a deepnorm model has them; leave both "
                       "empty",
                       line);
    if (given != (cells[9][0] != '\0') || strlen(cells[9]) >= sizeof m->scale_source)
        return vp_fail(err, VP_EFORMAT,
                       "line %zu, alpha_beta_source: a model's own alpha or beta needs a "
                       "source of 1 to %zu characters, and none without them",
                       line, sizeof m->scale_source - 1);
    // NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy) its length is checked above
    strcpy(m->scale_source, cells[9]);
    return VP_OK;
}

static vp_status parse_model(size_t line, char *const *cells, size_t columns, vp_model *m,
                             vp_error *err)
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
    m->alpha = m->beta = (vp_model_scale){0};
    m->scale_source[0] = '\0';
    m->shape = (vp_model_shape){.rope_theta = NAN, .norm_eps = NAN};
    vp_status status = columns >= N_WITH_SCALES ? parse_scales(line, cells, m, err) : VP_OK;
    if (status == VP_OK && columns >= N_WITH_SHAPE)
        status = model_shape_parse(line, cells + N_WITH_SCALES, m, err);
    if (status == VP_OK)
        status =
            model_forms_parse(line, columns >= N_WITH_FORMS ? cells + N_WITH_SHAPE : NULL, m, err);
    if (status == VP_OK)
        status =
            model_attention_parse(line, columns == N_COLUMNS ? cells + N_WITH_FORMS : NULL, m, err);
    return status;
}

static vp_status on_row(void *ctx, size_t line, size_t n_cells, char *const *cells, vp_error *err)
{
    models_reader *r = ctx;
    if (!r->seen_header) {
        r->seen_header = 1;
        r->columns = n_cells == N_REQUIRED || n_cells == N_WITH_SCALES || n_cells == N_WITH_SHAPE ||
                             n_cells == N_WITH_FORMS
                         ? n_cells
                         : N_COLUMNS;
        vp_status status =
            csv_check_row_width(line, n_cells, cells, r->columns, 0,
                                "the table has 7, 10, 26, 32 or 39: " COLUMNS_TEXT, err);
        if (status != VP_OK)
            return status;
        for (size_t c = 0; c < r->columns; c++)
            if (strcmp(cells[c], column_name(c)) != 0)
                return vp_fail(err, VP_EFORMAT, "line %zu: column %zu is '%s', expected '%s'%s",
                               line, c + 1, cells[c], column_name(c),
                               csv_header_near_miss(cells[c], column_name(c))
                                   ? " (a header must be exactly so: lower case, no spaces)"
                                   : "");
        return VP_OK;
    }
    char expected[64];
    snprintf(expected, sizeof expected, "the header (line 1) has %zu", r->columns);
    vp_status status =
        csv_check_row_width(line, n_cells, cells, r->columns, ALPHA_COLUMN, expected, err);
    if (status != VP_OK)
        return status;
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
    status = parse_model(line, cells, r->columns, m, err);
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

double vp_model_scale_value(const vp_model_scale *scale, size_t layers)
{
    if (!scale->text[0])
        return NAN;
    return scale->per_layer ? pow(scale->factor * (double)layers, scale->power) : scale->factor;
}
