#include "page_tables.h"

#include <errno.h>
#include <math.h>
#include <string.h>

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
    vp_page_table_set_count(table, c++, (size_t)parameters); /* whole, below 2^53 */
    return status == VP_OK ? vp_page_table_set_text(table, c, s->source) : status;
}

int models_page_table(const vp_model_table *models, vp_page_table *table)
{
    /* a table without shapes (the old 7 or 10 columns) is written as before */
    int any_shape = 0;
    for (size_t i = 0; i < models->count; i++)
        any_shape |= models->models[i].shape.known;
    vp_page_table_init(table, model_columns,
                       any_shape ? sizeof model_columns / sizeof *model_columns
                                 : MODEL_SHAPE_FIRST_COLUMN);
    for (size_t i = 0; i < models->count; i++) {
        const vp_model *m = &models->models[i];
        if (vp_page_table_add_row(table) != VP_OK ||
            vp_page_table_set_text(table, 0, m->name) != VP_OK ||
            vp_page_table_set_text(table, 3, vp_placement_name(m->placement)) != VP_OK ||
            vp_page_table_set_text(table, 4, vp_norm_name(m->norm)) != VP_OK ||
            vp_page_table_set_text(table, 5, m->qk_norm ? "yes" : "no") != VP_OK ||
            vp_page_table_set_text(table, 6, m->source) != VP_OK ||
            (any_shape && set_shape_columns(m, table) != VP_OK))
            return no_memory(table);
        vp_page_table_set_count(table, 1, (size_t)m->year);
        vp_page_table_set_count(table, 2, m->layers);
    }
    return EXIT_OK;
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
