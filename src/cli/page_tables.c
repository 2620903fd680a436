/* The maths table and the models table as page tables, for the formats other than text. */
#include "page_tables.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "nearest_name.h"
#include "option_lists.h"
#include "varprof/varprof.h"

static const vp_page_column maths_columns[] = {
    {"placement", "placement", "placement", 0},
    {"formula", "update", "update", 1},
    {"sub_blocks", "K", "$K$", 0},
    {"stream_var", "v_K", "$v_K$", 0},
    {"stream_size", "sqrt(v_K/v_0)", "$\\sqrt{v_K/v_0}$", 0},
    {"update_ratio", "u_K", "$u_K$", 0},
    {"embedding_share", "e_K", "$e_K$", 0},
    {"log2_embedding_share", "log2 e_K", "$\\log_2 e_K$", 0},
    /* with --grad, the backward half (varprof-maths(7), GRADIENTS) */
    {"grad_size", "sqrt(G_0/G_K)", "$\\sqrt{G_0/G_K}$", 0},
    {"weight_grad_first", "wg_1", "$\\mathrm{wg}_1$", 0},
    {"weight_grad_top", "wg_K", "$\\mathrm{wg}_K$", 0},
};

/* The columns without the backward half's three */
#define MATHS_FORWARD_COLUMNS 8

/* Fills the backward half's columns of the table's last row. */
static int set_grad_columns(const vp_config *cfg, vp_page_table *table)
{
    vp_config with_grad = *cfg;
    with_grad.grad = 1;
    vp_profile *p = NULL;
    vp_error err;
    if (vp_closed_profile(&with_grad, &p, &err) != VP_OK)
        return cli_runtime_error("%s", err.message);
    const size_t top = p->n_rows - 1;
    vp_page_table_set_number(table, 8, vp_profile_grad_size(p, 0));
    vp_page_table_set_number(table, 9, p->rows[1].weight_grad);
    vp_page_table_set_number(table, 10, p->rows[top].weight_grad);
    vp_profile_free(p);
    return EXIT_OK;
}

static int no_memory(vp_page_table *table)
{
    vp_page_table_free(table);
    return cli_runtime_error("no memory for the table");
}

int maths_page_table(vp_config cfg, vp_page_table *table)
{
    vp_page_table_init(table, maths_columns,
                       cfg.grad ? sizeof maths_columns / sizeof *maths_columns
                                : MATHS_FORWARD_COLUMNS);
    snprintf(table->caption, sizeof table->caption,
             "The maths table: v_0 = 1, L = %zu layers, g = %.*g, gamma = %.*g; DeepNorm "
             "alpha = %.*g, beta = %.*g",
             cfg.layers, VP_PAGE_SIGNIFICANT, cfg.gain, VP_PAGE_SIGNIFICANT, cfg.gamma,
             VP_PAGE_SIGNIFICANT, cfg.alpha, VP_PAGE_SIGNIFICANT, cfg.beta);
    for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++) {
        cfg.placement = (vp_placement)pl;
        vp_closed_top top;
        vp_error err;
        if (vp_closed_form_top(&cfg, &top, &err) != VP_OK) {
            vp_page_table_free(table);
            return cli_runtime_error("%s", err.message);
        }
        if (vp_page_table_add_row(table) != VP_OK ||
            vp_page_table_set_text(table, 0, vp_placement_name(cfg.placement)) != VP_OK ||
            vp_page_table_set_text(table, 1, vp_placement_formula(cfg.placement)) != VP_OK)
            return no_memory(table);
        vp_page_table_set_count(table, 2, top.sub_blocks);
        vp_page_table_set_number(table, 3, top.stream_var);
        vp_page_table_set_number(table, 4, sqrt(top.stream_var));
        vp_page_table_set_number(table, 5, top.update_ratio);
        vp_page_table_set_number(table, 6, top.embedding_share);
        vp_page_table_set_number(table, 7, top.log2_share);
        if (cfg.grad && set_grad_columns(&cfg, table) != EXIT_OK) {
            vp_page_table_free(table);
            return EXIT_RUNTIME;
        }
    }
    return EXIT_OK;
}

/* The table's own columns and their keys, then the parameter count of the
 * shape; alpha and beta stay with the profile of a deepnorm model. */
static const vp_page_column model_columns[] = {
    {"name", "model", "model", 1},
    {"year", "year", "year", 0},
    {"layers", "layers", "layers", 0},
    {"placement", "placement", "placement", 0},
    {"norm", "norm", "norm", 0},
    {"qk_norm", "QK-norm", "QK-norm", 0},
    {"source", "source", "source", 0},
    {"width", "d", "$d$", 0},
    {"heads", "heads", "$H$", 0},
    {"kv_heads", "KV heads", "$H_{kv}$", 0},
    {"head_dim", "head dim", "$d_h$", 0},
    {"ffn_width", "FFN width", "$m$", 0},
    {"vocab", "vocab", "vocab", 0},
    {"activation", "MLP", "MLP", 0},
    {"positions", "positions", "positions", 0},
    {"max_positions", "max positions", "max positions", 0},
    {"rope_theta", "RoPE theta", "RoPE $\\theta$", 0},
    {"norm_eps", "norm eps", "norm $\\epsilon$", 0},
    {"biases", "biases", "biases", 0},
    {"tied_embeddings", "tied embeddings", "tied embeddings", 0},
    {"final_norm", "final norm", "final norm", 0},
    {"architecture", "architecture", "architecture", 0},
    {"parameters", "parameters", "parameters", 0},
    {"shape_source", "shape source", "shape source", 0},
};

enum { MODEL_SHAPE_FIRST_COLUMN = 7 };

/* The shape's cells of the last row, and its parameter count; left empty
 * for a model without a shape. */
static vp_status set_shape_columns(const vp_model *m, vp_page_table *table)
{
    const vp_model_shape *s = &m->shape;
    double parameters;
    if (!s->known || vp_model_parameters(m, &parameters) != VP_OK)
        return VP_OK;
    size_t c = MODEL_SHAPE_FIRST_COLUMN;
    const size_t sizes[] = {s->width, s->heads, s->kv_heads, s->head_dim, s->ffn_width, s->vocab};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        vp_page_table_set_count(table, c++, sizes[i]);
    vp_status status = vp_page_table_set_text(table, c++, vp_mlp_name(s->activation));
    if (status == VP_OK)
        status = vp_page_table_set_text(table, c++, vp_model_positions_name(s->positions));
    if (status != VP_OK)
        return status;
    if (s->positions == VP_MODEL_POSITIONS_LEARNED)
        vp_page_table_set_count(table, c, s->max_positions);
    c++;
    /* theta is whole in every model: shown as 500000, not 5e+05, on a page */
    if (s->rope_theta == floor(s->rope_theta) && s->rope_theta < 0x1p53)
        vp_page_table_set_count(table, c, (size_t)s->rope_theta);
    c++; /* NaN, without rope: empty, as in the models table */
    vp_page_table_set_number(table, c++, s->norm_eps);
    const char *words[] = {vp_model_biases_name(s->biases), s->tied_embeddings ? "yes" : "no",
                           s->final_norm ? "yes" : "no",
                           vp_model_architecture_name(s->architecture)};
    for (size_t i = 0; i < sizeof words / sizeof *words && status == VP_OK; i++)
        status = vp_page_table_set_text(table, c++, words[i]);
    vp_page_table_set_count(table, c, (size_t)parameters); /* whole, below 2^53 */
    /* as the text's star says */
    if (s->architecture != VP_MODEL_ARCHITECTURE_DENSE)
        vp_page_table_mark(table, c);
    c++;
    return status == VP_OK ? vp_page_table_set_text(table, c, s->source) : status;
}

/* The page's short set: what fits a page's width, and what a chapter's
 * table of models prints. */
static const char *const page_model_columns[] = {"name", "year",    "layers",    "placement",
                                                 "norm", "qk_norm", "parameters"};

_Static_assert(sizeof model_columns / sizeof *model_columns == MODEL_COLUMNS_MAX,
               "MODEL_COLUMNS_MAX counts the models table's columns");

static int model_column_named(const char *name)
{
    for (size_t c = 0; c < MODEL_COLUMNS_MAX; c++)
        if (strcmp(model_columns[c].key, name) == 0)
            return (int)c;
    return -1;
}

/* A usage error for a name that is no column: the nearest, and them all. */
static int no_such_model_column(const char *name)
{
    const char *names[MODEL_COLUMNS_MAX];
    char all[512] = "";
    for (size_t c = 0; c < MODEL_COLUMNS_MAX; c++) {
        names[c] = model_columns[c].key;
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s, ", names[c]);
    }
    const char *near = nearest_name(name, strlen(name), names, MODEL_COLUMNS_MAX);
    char hint[80] = "";
    if (near)
        snprintf(hint, sizeof hint, " (did you mean %s?)", near);
    return cli_usage_error("--columns: '%s' is not a column of the models table%s; the columns "
                           "are %sor all",
                           name, hint, all);
}

/* The chosen names' columns, each once; "all" alone for every one. */
static int name_model_columns(const cli_args *args, model_column_choice *choice)
{
    const char *value = args->value[OPT_COLUMNS];
    const size_t length = strlen(value);
    if (!length || value[0] == ',' || value[length - 1] == ',' || strstr(value, ",,"))
        return cli_usage_error("--columns: '%s' has an empty item; a list is names separated by "
                               "commas, without spaces, e.g. name,layers,parameters",
                               value);
    list_buffer list;
    int rc = cli_list_items(args, OPT_COLUMNS, &list, MODEL_COLUMNS_MAX + 1);
    if (rc != EXIT_OK)
        return rc;
    choice->all = list.n == 1 && strcmp(list.items[0], "all") == 0;
    for (size_t i = 0; i < list.n && !choice->all; i++) {
        if (strcmp(list.items[i], "all") == 0)
            return cli_usage_error("--columns: '%s': all names every column, so it stands "
                                   "alone; or list the columns",
                                   value);
        const int c = model_column_named(list.items[i]);
        if (c < 0)
            return no_such_model_column(list.items[i]);
        for (size_t j = 0; j < choice->n; j++)
            if (choice->keep[j] == (size_t)c)
                return cli_usage_error("--columns: '%s' names %s twice; name each column once",
                                       value, list.items[i]);
        choice->keep[choice->n++] = (size_t)c;
    }
    return EXIT_OK;
}

int read_model_columns(const cli_args *args, output_format format, model_column_choice *choice)
{
    *choice = (model_column_choice){.given = args->given[OPT_COLUMNS]};
    if (choice->given && format == FORMAT_TEXT)
        return cli_usage_error("--columns chooses the columns of --format csv, json, markdown or "
                               "latex; the text's are fixed (--wide adds the source's)");
    if (choice->given)
        return name_model_columns(args, choice);
    /* a script's formats keep every column, as they always have */
    choice->all = !is_page_format(format);
    for (size_t i = 0; !choice->all && i < sizeof page_model_columns / sizeof *page_model_columns;
         i++)
        choice->keep[choice->n++] = (size_t)model_column_named(page_model_columns[i]);
    return EXIT_OK;
}

/* The chosen columns the table has, into keep: a table without shapes (the
 * old 7 or 10 columns) has none of the shape's, and naming one is an error. */
static int kept_model_columns(const model_column_choice *choice, int any_shape, size_t *keep,
                              size_t *n)
{
    *n = 0;
    const size_t count = choice->all ? MODEL_COLUMNS_MAX : choice->n;
    for (size_t i = 0; i < count; i++) {
        const size_t c = choice->all ? i : choice->keep[i];
        if (c >= MODEL_SHAPE_FIRST_COLUMN && !any_shape && choice->given && !choice->all)
            return cli_runtime_error("--columns: %s: the models table has no shapes, so no "
                                     "column after source",
                                     model_columns[c].key);
        if (c < MODEL_SHAPE_FIRST_COLUMN || any_shape)
            keep[(*n)++] = c;
    }
    return EXIT_OK;
}

/* The note a marked count needs, where one is kept. */
static void note_marks(vp_page_table *table)
{
    for (size_t i = 0; i < table->n_rows * table->n_columns; i++)
        if (table->cells[i].marked) {
            snprintf(table->note, sizeof table->note,
                     "* the count of the row's shape, not the model's: an encoder-decoder's "
                     "row is its encoder, a mixture of experts' a dense model of its width");
            return;
        }
}

int models_page_table(const vp_model_table *models, const model_column_choice *choice,
                      vp_page_table *table)
{
    int any_shape = 0;
    for (size_t i = 0; i < models->count; i++)
        any_shape |= models->models[i].shape.known;
    size_t keep[MODEL_COLUMNS_MAX], n;
    int rc = kept_model_columns(choice, any_shape, keep, &n);
    if (rc != EXIT_OK)
        return rc;
    vp_page_table_init(table, model_columns, MODEL_COLUMNS_MAX);
    for (size_t i = 0; i < models->count; i++) {
        const vp_model *m = &models->models[i];
        if (vp_page_table_add_row(table) != VP_OK ||
            vp_page_table_set_text(table, 0, m->name) != VP_OK ||
            vp_page_table_set_text(table, 3, vp_placement_name(m->placement)) != VP_OK ||
            vp_page_table_set_text(table, 4, vp_norm_name(m->norm)) != VP_OK ||
            vp_page_table_set_text(table, 5, m->qk_norm ? "yes" : "no") != VP_OK ||
            vp_page_table_set_text(table, 6, m->source) != VP_OK ||
            set_shape_columns(m, table) != VP_OK)
            return no_memory(table);
        vp_page_table_set_count(table, 1, (size_t)m->year);
        vp_page_table_set_count(table, 2, m->layers);
    }
    if (vp_page_table_keep_columns(table, keep, n) != VP_OK)
        return no_memory(table);
    note_marks(table);
    return EXIT_OK;
}

int is_page_format(output_format format)
{
    return format == FORMAT_MARKDOWN || format == FORMAT_LATEX;
}

/* The top of each stack, as the text ends a run of several: its keys the
 * CSV's names, but for the summary's own sub_blocks and overflow. */
static const vp_page_column top_columns[] = {
    {"placement", "placement", "placement", 0},
    {"gain_setting", "gain", "gain", 0},
    {"layers", "layers", "layers", 0},
    {"width", "width", "width", 0},
    {"engine", "engine", "engine", 0},
    {"sub_blocks", "K", "$K$", 0},
    {"stream_size", "sqrt(v_K/v_0)", "$\\sqrt{v_K/v_0}$", 0},
    {"update_ratio", "u_K", "$u_K$", 0},
    {"embedding_share", "e_K", "$e_K$", 0},
    {"log2_embedding_share", "log2 e_K", "$\\log_2 e_K$", 0},
    {"overflow", "out of range", "out of range", 0},
};

enum { TOP_GAIN = 1, TOP_LAYERS = 2, TOP_WIDTH = 3, TOP_OVERFLOW = 10, N_TOP_COLUMNS = 11 };

/* Row i: one engine's top at one combination. A top that overflowed is
 * its last finite row, as the out-of-range cell says. */
static vp_status set_top_row(const vp_sweep_top *t, vp_page_table *table)
{
    const vp_profile_top *top = &t->top;
    char overflow[128] = "";
    if (top->overflow_at)
        snprintf(overflow, sizeof overflow, "%s at sub-block %zu; figures at %zu",
                 vp_overflow_name(top->overflowed), top->overflow_at, top->sub_block);
    vp_status status = vp_page_table_add_row(table);
    if (status == VP_OK)
        status = vp_page_table_set_text(table, 0, vp_placement_name(t->point.placement));
    if (status == VP_OK)
        status = vp_page_table_set_text(table, 4, vp_engine_name(top->engine));
    if (status == VP_OK)
        status = vp_page_table_set_text(table, TOP_OVERFLOW, overflow);
    if (status != VP_OK)
        return status;
    vp_page_table_set_number(table, TOP_GAIN, t->point.gain);
    vp_page_table_set_count(table, TOP_LAYERS, t->point.layers);
    if (t->point.width)
        vp_page_table_set_count(table, TOP_WIDTH, t->point.width);
    vp_page_table_set_count(table, 5, top->sub_blocks);
    vp_page_table_set_number(table, 6, top->stream_size);
    if (top->sub_block > 0)
        vp_page_table_set_number(table, 7, top->update_ratio);
    vp_page_table_set_number(table, 8, top->embedding_share);
    vp_page_table_set_number(table, 9, top->log2_share);
    return VP_OK;
}

vp_status tops_page_table(const vp_sweep_top *tops, size_t n, unsigned shown, vp_page_table *table)
{
    vp_page_table_init(table, top_columns, N_TOP_COLUMNS);
    snprintf(table->caption, sizeof table->caption, "The top of each stack");
    int overflowed = 0;
    vp_status status = VP_OK;
    for (size_t i = 0; i < n && status == VP_OK; i++) {
        status = set_top_row(&tops[i], table);
        overflowed |= tops[i].top.overflow_at != 0;
    }
    size_t keep[N_TOP_COLUMNS], kept = 0;
    for (size_t c = 0; c < N_TOP_COLUMNS; c++)
        if (!((c == TOP_GAIN && !(shown & TOPS_GAIN)) ||
              (c == TOP_LAYERS && !(shown & TOPS_LAYERS)) ||
              (c == TOP_WIDTH && !(shown & TOPS_WIDTH)) || (c == TOP_OVERFLOW && !overflowed)))
            keep[kept++] = c;
    if (status == VP_OK)
        status = vp_page_table_keep_columns(table, keep, kept);
    if (status != VP_OK)
        vp_page_table_free(table);
    return status;
}

vp_status write_tops_page(FILE *out, const vp_sweep_top *tops, size_t n, unsigned shown,
                          output_format format)
{
    vp_page_table table;
    vp_status status = tops_page_table(tops, n, shown, &table);
    if (status != VP_OK)
        return status;
    fputc('\n', out);
    status = format == FORMAT_MARKDOWN ? vp_markdown_write_table(out, &table)
                                       : vp_latex_write_table(out, &table);
    vp_page_table_free(&table);
    return status;
}

int write_page_table(FILE *out, const vp_page_table *table, output_format format)
{
    vp_status status = VP_EINVAL;
    switch (format) {
    case FORMAT_CSV: status = vp_csv_write_page_table(out, table); break;
    case FORMAT_JSON: status = vp_json_write_page_table(out, table); break;
    case FORMAT_MARKDOWN: status = vp_markdown_write_table(out, table); break;
    case FORMAT_LATEX: status = vp_latex_write_table(out, table); break;
    case FORMAT_TEXT: break;
    }
    if (status == VP_OK && fflush(out) != 0)
        status = VP_EIO;
    if (status != VP_OK)
        return cli_runtime_error("cannot write the output: %s",
                                 status == VP_EIO ? strerror(errno) : vp_strerror(status));
    return EXIT_OK;
}
