/* The models table's shape columns, read into vp_model_shape. */
#include "io/model_shape_cells.h"

#include <math.h>
#include <string.h>

#include "core/name_table.h"
#include "varprof/parse.h"

const char *const model_shape_header[MODEL_SHAPE_COLUMNS] = {
    "width",           "heads",      "kv_heads",      "head_dim",    "ffn_width", "vocab",
    "activation",      "positions",  "max_positions", "rope_theta",  "norm_eps",  "biases",
    "tied_embeddings", "final_norm", "architecture",  "shape_source"};

enum {
    WIDTH,
    HEADS,
    KV_HEADS,
    HEAD_DIM,
    FFN_WIDTH,
    VOCAB,
    ACTIVATION,
    POSITIONS,
    MAX_POSITIONS,
    ROPE_THETA,
    NORM_EPS,
    BIASES,
    TIED,
    FINAL_NORM,
    ARCHITECTURE,
    SHAPE_SOURCE
};

/* Past these a shape is a typing mistake, not a model: 2^20 wide, 2^24 wide
 * MLPs, vocabularies and position tables. */
#define MAX_WIDTH (1u << 20)
#define MAX_TABLE_ROWS (1u << 24)

static const char *const positions_names[VP_MODEL_POSITIONS_COUNT] = {
    "none", "learned", "sinusoidal", "rope", "relative", "alibi", "partial-rope"};
static const char *const biases_names[VP_MODEL_BIASES_COUNT] = {"no", "yes", "qkv", "mlp"};
static const char *const architecture_names[VP_MODEL_ARCHITECTURE_COUNT] = {
    "dense", "encoder-decoder", "moe"};

#define POSITIONS_TEXT "none, learned, sinusoidal, rope, relative, alibi or partial-rope"
#define ARCHITECTURE_TEXT "dense, encoder-decoder (the row is the encoder) or moe"
#define BIASES_TEXT "no, yes (every linear map), qkv (q, k and v only) or mlp (the MLP only)"

/* name, or "?" out of range */
static const char *known(const char *name)
{
    return name ? name : "?";
}

const char *vp_model_positions_name(vp_model_positions positions)
{
    return known(name_table_name(NAME_LIST(positions_names), (int)positions));
}

const char *vp_model_biases_name(vp_model_biases biases)
{
    return known(name_table_name(NAME_LIST(biases_names), (int)biases));
}

const char *vp_model_architecture_name(vp_model_architecture architecture)
{
    return known(name_table_name(NAME_LIST(architecture_names), (int)architecture));
}

static vp_status bad_cell(size_t line, int column, const char *what, vp_error *err)
{
    return vp_fail(err, VP_EFORMAT, "line %zu, %s: %s", line, model_shape_header[column], what);
}

static vp_status read_size(size_t line, char *const *cells, int column, size_t max, size_t *out,
                           vp_error *err)
{
    vp_error why;
    if (vp_parse_size(cells[column], 1, max, out, &why) != VP_OK)
        return bad_cell(line, column, why.message, err);
    return VP_OK;
}

/* A word of names; the message lists allowed, the names with their glosses */
static vp_status read_word(size_t line, char *const *cells, int column, name_table names,
                           const char *allowed, int *out, vp_error *err)
{
    *out = name_table_find(names, cells[column]);
    if (*out >= 0)
        return VP_OK;
    return vp_fail(err, VP_EFORMAT, "line %zu, %s: '%s' is not %s", line,
                   model_shape_header[column], cells[column], allowed);
}

/* The whole numbers: sizes, and the heads' arithmetic. */
static vp_status read_sizes(size_t line, char *const *cells, vp_model_shape *s, vp_error *err)
{
    vp_status status;
    if ((status = read_size(line, cells, WIDTH, MAX_WIDTH, &s->width, err)) != VP_OK ||
        (status = read_size(line, cells, HEADS, s->width, &s->heads, err)) != VP_OK ||
        (status = read_size(line, cells, KV_HEADS, s->heads, &s->kv_heads, err)) != VP_OK ||
        (status = read_size(line, cells, FFN_WIDTH, MAX_TABLE_ROWS, &s->ffn_width, err)) != VP_OK ||
        (status = read_size(line, cells, VOCAB, MAX_TABLE_ROWS, &s->vocab, err)) != VP_OK)
        return status;
    if (s->heads % s->kv_heads != 0)
        return vp_fail(err, VP_EFORMAT, "line %zu, kv_heads: %zu does not divide heads (%zu)", line,
                       s->kv_heads, s->heads);
    s->head_dim_given = cells[HEAD_DIM][0] != '\0';
    if (s->head_dim_given)
        return read_size(line, cells, HEAD_DIM, MAX_WIDTH, &s->head_dim, err);
    if (s->width % s->heads != 0)
        return vp_fail(err, VP_EFORMAT,
                       "line %zu, heads: %zu does not divide width (%zu); give head_dim", line,
                       s->heads, s->width);
    s->head_dim = s->width / s->heads;
    return VP_OK;
}

/* positions, with the cells only some positions have: max_positions and rope_theta */
static vp_status read_positions(size_t line, char *const *cells, vp_model_shape *s, vp_error *err)
{
    int word;
    vp_status status =
        read_word(line, cells, POSITIONS, NAME_LIST(positions_names), POSITIONS_TEXT, &word, err);
    if (status != VP_OK)
        return status;
    s->positions = (vp_model_positions)word;
    const int learned = s->positions == VP_MODEL_POSITIONS_LEARNED;
    if (learned != (cells[MAX_POSITIONS][0] != '\0'))
        return bad_cell(line, MAX_POSITIONS,
                        "the rows of a learned position table, given for learned positions "
                        "only",
                        err);
    if (learned && (status = read_size(line, cells, MAX_POSITIONS, MAX_TABLE_ROWS,
                                       &s->max_positions, err)) != VP_OK)
        return status;
    const int rope =
        s->positions == VP_MODEL_POSITIONS_ROPE || s->positions == VP_MODEL_POSITIONS_PARTIAL_ROPE;
    vp_error why;
    s->rope_theta = NAN;
    if (rope != (cells[ROPE_THETA][0] != '\0') ||
        (rope && (vp_parse_double(cells[ROPE_THETA], &s->rope_theta, &why) != VP_OK ||
                  !(s->rope_theta > 1.0))))
        return vp_fail(err, VP_EFORMAT,
                       "line %zu, rope_theta: '%s' is not a number > 1 for rope positions, or "
                       "empty for others",
                       line, cells[ROPE_THETA]);
    return VP_OK;
}

static vp_status read_yes_no(size_t line, char *const *cells, int column, int *out, vp_error *err)
{
    static const char *const yes_no[] = {"no", "yes"};
    return read_word(line, cells, column, NAME_LIST(yes_no), "yes or no", out, err);
}

vp_status model_shape_parse(size_t line, char *const *cells, vp_model *m, vp_error *err)
{
    vp_model_shape *s = &m->shape;
    *s = (vp_model_shape){.rope_theta = NAN, .norm_eps = NAN};
    size_t given = 0;
    for (int c = 0; c < MODEL_SHAPE_COLUMNS; c++)
        given += cells[c][0] != '\0';
    if (given == 0)
        return VP_OK; /* the shape is not known */
    vp_status status = read_sizes(line, cells, s, err);
    vp_error why;
    if (status == VP_OK && vp_mlp_parse(cells[ACTIVATION], &s->activation, &why) != VP_OK)
        status = bad_cell(line, ACTIVATION, why.message, err);
    if (status != VP_OK)
        return status;
    if ((status = read_positions(line, cells, s, err)) != VP_OK)
        return status;
    if (cells[NORM_EPS][0] && (vp_parse_double(cells[NORM_EPS], &s->norm_eps, &why) != VP_OK ||
                               !(s->norm_eps > 0.0 && s->norm_eps < 1.0)))
        return vp_fail(err, VP_EFORMAT,
                       "line %zu, norm_eps: '%s' is not a number between 0 and 1, or empty "
                       "where unpublished",
                       line, cells[NORM_EPS]);
    int word;
    if ((status = read_word(line, cells, BIASES, NAME_LIST(biases_names), BIASES_TEXT, &word,
                            err)) != VP_OK)
        return status;
    s->biases = (vp_model_biases)word;
    if ((status = read_yes_no(line, cells, TIED, &s->tied_embeddings, err)) != VP_OK ||
        (status = read_yes_no(line, cells, FINAL_NORM, &s->final_norm, err)) != VP_OK ||
        (status = read_word(line, cells, ARCHITECTURE, NAME_LIST(architecture_names),
                            ARCHITECTURE_TEXT, &word, err)) != VP_OK)
        return status;
    s->architecture = (vp_model_architecture)word;
    if (!cells[SHAPE_SOURCE][0] || strlen(cells[SHAPE_SOURCE]) >= sizeof s->source)
        return vp_fail(err, VP_EFORMAT,
                       "line %zu, shape_source: a shape needs a source of 1 to %zu characters",
                       line, sizeof s->source - 1);
    // NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy) its length is checked above
    strcpy(s->source, cells[SHAPE_SOURCE]);
    s->known = 1;
    return VP_OK;
}

vp_status model_cells_need_shape(size_t line, char *const *cells, int n, const char *const *header,
                                 const char *what, const vp_model *m, vp_error *err)
{
    for (int c = 0; c < n && !m->shape.known; c++)
        if (cells[c][0])
            return vp_fail(err, VP_EFORMAT,
                           "line %zu, %s: %s the row's shape; leave it empty or give the shape",
                           line, header[c], what);
    return VP_OK;
}

const char *const model_form_header[MODEL_FORM_COLUMNS] = {
    "residual", "rotary_fraction", "rotary_pairing", "embedding_norm", "logit_scale", "norm_bias"};

enum { RESIDUAL, ROTARY_FRACTION, ROTARY_PAIRING, EMBEDDING_NORM, LOGIT_SCALE, NORM_BIAS };

static vp_status bad_form(size_t line, int column, const char *cell, const char *allowed,
                          vp_error *err)
{
    return vp_fail(err, VP_EFORMAT, "line %zu, %s: '%s' is not %s", line, model_form_header[column],
                   cell, allowed);
}

/* The residual form: the placement's own where empty; a parallel form for
 * the parallel placement alone, which runs no sequential one. */
static vp_status read_residual(size_t line, const char *cell, vp_model *m, vp_error *err)
{
    const int parallel = m->placement == VP_PARALLEL;
    m->shape.residual = parallel ? VP_RESIDUAL_PARALLEL_SHARED_NORM : VP_RESIDUAL_SEQUENTIAL;
    vp_error why;
    if (!cell[0])
        return VP_OK;
    if (vp_residual_parse(cell, &m->shape.residual, &why) != VP_OK)
        return vp_fail(err, VP_EFORMAT, "line %zu, residual: %s, or empty", line, why.message);
    if (parallel != (m->shape.residual != VP_RESIDUAL_SEQUENTIAL))
        return bad_form(line, RESIDUAL, cell,
                        parallel ? "parallel-shared-norm or parallel-two-norms: the parallel "
                                   "placement runs its branches side by side"
                                 : "sequential: a parallel form needs the parallel placement",
                        err);
    return VP_OK;
}

/* The rotary fraction and pairing: a fraction for partial-rope alone (hd
 * times it even, so that coordinates pair), a pairing for rope alone. */
static vp_status read_rotary(size_t line, char *const *cells, vp_model_shape *s, vp_error *err)
{
    const int partial = s->positions == VP_MODEL_POSITIONS_PARTIAL_ROPE;
    const int rope = partial || s->positions == VP_MODEL_POSITIONS_ROPE;
    const char *fraction = cells[ROTARY_FRACTION], *pairing = cells[ROTARY_PAIRING];
    vp_error why;
    s->rotary_fraction = 1.0;
    if (partial != (fraction[0] != '\0') ||
        (partial && (vp_parse_double(fraction, &s->rotary_fraction, &why) != VP_OK ||
                     !(s->rotary_fraction > 0.0 && s->rotary_fraction < 1.0))))
        return bad_form(line, ROTARY_FRACTION, fraction,
                        "a number between 0 and 1 for partial-rope positions, or empty for others",
                        err);
    const double turned = s->rotary_fraction * (double)s->head_dim;
    if (partial && (turned != floor(turned) || fmod(turned, 2.0) != 0.0))
        return vp_fail(err, VP_EFORMAT,
                       "line %zu, rotary_fraction: %g of a head of %zu is %g coordinates, not an "
                       "even whole number",
                       line, s->rotary_fraction, s->head_dim, turned);
    s->rotary_pairing = rope ? VP_ROTARY_HALF : VP_ROTARY_NONE;
    if (!pairing[0])
        return VP_OK;
    if (!rope || (strcmp(pairing, "half") != 0 && strcmp(pairing, "interleaved") != 0))
        return bad_form(line, ROTARY_PAIRING, pairing,
                        "half (rotate-half) or interleaved (GPT-J's pairs 2i, 2i+1) for rope "
                        "positions, or empty",
                        err);
    s->rotary_pairing = pairing[0] == 'i' ? VP_ROTARY_INTERLEAVED : VP_ROTARY_HALF;
    return VP_OK;
}

/* The embedding norm, the logit scale and LayerNorm's bias. */
static vp_status read_head_and_norms(size_t line, char *const *cells, vp_model *m, vp_error *err)
{
    vp_model_shape *s = &m->shape;
    vp_error why;
    if (cells[EMBEDDING_NORM][0] &&
        vp_embedding_norm_parse(cells[EMBEDDING_NORM], &s->embedding_norm, &why) != VP_OK)
        return vp_fail(err, VP_EFORMAT, "line %zu, embedding_norm: %s, or empty", line,
                       why.message);
    if (cells[LOGIT_SCALE][0] &&
        (vp_parse_double(cells[LOGIT_SCALE], &s->logit_scale, &why) != VP_OK ||
         !(s->logit_scale > 0.0 && isfinite(s->logit_scale))))
        return bad_form(line, LOGIT_SCALE, cells[LOGIT_SCALE], "a number > 0, or empty for 1", err);
    const char *bias = cells[NORM_BIAS];
    if (!bias[0])
        return VP_OK;
    if (m->norm != VP_NORM_LAYERNORM || (strcmp(bias, "yes") != 0 && strcmp(bias, "no") != 0))
        return bad_form(line, NORM_BIAS, bias,
                        "yes or no for a layernorm model (an RMSNorm has no bias), or empty", err);
    s->norm_unbiased = bias[0] == 'n';
    return VP_OK;
}

vp_status model_forms_parse(size_t line, char *const *cells, vp_model *m, vp_error *err)
{
    vp_model_shape *s = &m->shape;
    s->residual =
        m->placement == VP_PARALLEL ? VP_RESIDUAL_PARALLEL_SHARED_NORM : VP_RESIDUAL_SEQUENTIAL;
    s->rotary_fraction = 1.0;
    s->rotary_pairing = s->known && (s->positions == VP_MODEL_POSITIONS_ROPE ||
                                     s->positions == VP_MODEL_POSITIONS_PARTIAL_ROPE)
                            ? VP_ROTARY_HALF
                            : VP_ROTARY_NONE;
    s->embedding_norm = VP_EMBEDDING_NORM_NONE;
    s->logit_scale = 1.0;
    s->norm_unbiased = 0;
    if (!cells)
        return VP_OK;
    vp_status status = model_cells_need_shape(line, cells, MODEL_FORM_COLUMNS, model_form_header,
                                              "a form needs", m, err);
    if (status != VP_OK)
        return status;
    if ((status = read_residual(line, cells[RESIDUAL], m, err)) != VP_OK)
        return status;
    if (!s->known)
        return VP_OK;
    if ((status = read_rotary(line, cells, s, err)) != VP_OK)
        return status;
    return read_head_and_norms(line, cells, m, err);
}
