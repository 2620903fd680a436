/* varprof models, and where the program finds the models table. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "page_tables.h"
#include "wrap_text.h"

/* The table beside the program: ../data in a build tree, ../share/varprof
 * once installed. */
static int find_beside_program(char *path, size_t size)
{
    char exe[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (length <= 0)
        return 0;
    exe[length] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    const char *candidates[] = {"../data/models.csv", "../share/varprof/models.csv"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        snprintf(path, size, "%s/%s", exe, candidates[i]);
        if (access(path, R_OK) == 0)
            return 1;
    }
    return 0;
}

int load_models(vp_model_table *table)
{
    char path[PATH_MAX + 64];
    const char *env = getenv("VARPROF_MODELS");
    if (env && *env)
        snprintf(path, sizeof path, "%s", env);
    else if (!find_beside_program(path, sizeof path))
        return cli_runtime_error("cannot find the models table models.csv beside the program "
                                 "(../data or ../share/varprof); set VARPROF_MODELS to its path");
    vp_error err;
    if (vp_models_read(path, table, &err) != VP_OK)
        return cli_runtime_error("models table: %s", err.message);
    return EXIT_OK;
}

/* A parameter count as a reader says it, in 6 columns: "6.74 B", "124 M".
   The unit is chosen after rounding to 3 digits, so that 999,885,952 reads
   "1 B", not "1e+03 M". */
static void format_parameters(double count, char *text, size_t size)
{
    if (count >= 999.5e6)
        snprintf(text, size, "%.3g B", count / 1e9);
    else if (count >= 999.5e3)
        snprintf(text, size, "%.3g M", count / 1e6);
    else
        snprintf(text, size, "%.0f", count);
}

/* Where a model tells positions apart, in words: "rope theta 10000". */
static void describe_positions(const vp_model_shape *s, char *text, size_t size)
{
    if (s->positions == VP_MODEL_POSITIONS_ROPE)
        snprintf(text, size, "rope theta %g", s->rope_theta);
    else if (s->positions == VP_MODEL_POSITIONS_LEARNED)
        snprintf(text, size, "%zu learned positions", s->max_positions);
    else
        snprintf(text, size, "%s positions", vp_model_positions_name(s->positions));
}

/* Attention's departures in words, each with its leading ", ": "window
   1024 on 5 of each 6 layers (their rope theta 10000), rope linear x8 on
   the full layers, scores x 168^-1/2"; "" for none. */
static void describe_attention(const vp_model_shape *s, char *text, size_t size)
{
    size_t n = 0;
    text[0] = '\0';
    if (s->sliding_window && s->window_pattern)
        n += (size_t)snprintf(text, size, ", window %zu on %zu of each %zu layers",
                              s->sliding_window, s->window_pattern - 1, s->window_pattern);
    else if (s->sliding_window)
        n += (size_t)snprintf(text, size, ", window %zu on every layer", s->sliding_window);
    if (s->rope_local_theta > 0.0 && n < size)
        n += (size_t)snprintf(text + n, size - n, " (their rope theta %g)", s->rope_local_theta);
    if (s->rope_linear > 1.0 && n < size)
        n += (size_t)snprintf(text + n, size - n, ", rope linear x%g%s", s->rope_linear,
                              s->rope_local_theta > 0.0 ? " on the full layers" : "");
    if (s->attn_scalar > 0.0 && n < size)
        n += (size_t)snprintf(text + n, size - n, ", scores x %g^-1/2", s->attn_scalar);
    if (s->attn_softcap > 0.0 && n < size)
        n += (size_t)snprintf(text + n, size - n, ", scores capped at %g", s->attn_softcap);
    if (s->logit_softcap > 0.0 && n < size)
        snprintf(text + n, size - n, ", logits capped at %g", s->logit_softcap);
}

/* The shape in a sentence and its source, each wrapped in 80 columns
 * unless wide. Nothing for a model without one. */
static void write_shape(const vp_model *m, int wide)
{
    const vp_model_shape *s = &m->shape;
    if (!s->known)
        return;
    char kv[48] = "", positions[64], attention[200], eps[32] = "", line[768];
    if (s->kv_heads != s->heads)
        snprintf(kv, sizeof kv, " (%zu kv)", s->kv_heads);
    describe_positions(s, positions, sizeof positions);
    describe_attention(s, attention, sizeof attention);
    if (!isnan(s->norm_eps))
        snprintf(eps, sizeof eps, ", norm eps %g", s->norm_eps);
    /* what the count covers, where it is not the model's */
    const char *covers[VP_MODEL_ARCHITECTURE_COUNT] = {
        [VP_MODEL_ARCHITECTURE_ENCODER_DECODER] =
            "; an encoder-decoder: the row and its count are the "
            "encoder's",
        [VP_MODEL_ARCHITECTURE_MOE] =
            "; a mixture of experts: the count is a dense model's of this "
            "shape, not the model's"};
    snprintf(line, sizeof line,
             "shape: d %zu, %zu heads%s of %zu, %s MLP %zu, vocab %zu, %s%s%s, biases %s, %s "
             "embeddings, %s%s",
             s->width, s->heads, kv, s->head_dim, vp_mlp_name(s->activation), s->ffn_width,
             s->vocab, positions, attention, eps, vp_model_biases_name(s->biases),
             s->tied_embeddings ? "tied" : "untied", s->final_norm ? "final norm" : "no final norm",
             covers[s->architecture] ? covers[s->architecture] : "");
    fputs("    ", stdout);
    write_wrapped(stdout, line, 4, 11, wide ? 0 : TEXT_COLUMNS);
    fputs("    shape source: ", stdout);
    write_wrapped(stdout, s->source, 18, 18, wide ? 0 : TEXT_COLUMNS);
}

/* One model's rows: its name, year, layers, placement, norm, QK-norm and
 * parameter count (counting a partial count in *partial_counts), its
 * source, its own scales and its shape. */
static void write_model(const vp_model *m, int wide, int with_counts, size_t *partial_counts)
{
    char parameters[32] = "-";
    double count;
    if (vp_model_parameters(m, &count) == VP_OK) {
        format_parameters(count, parameters, sizeof parameters);
        *partial_counts += m->shape.architecture != VP_MODEL_ARCHITECTURE_DENSE;
    }
    /* a star after the count marks one that is not the model's */
    const char *partial =
        m->shape.known && m->shape.architecture != VP_MODEL_ARCHITECTURE_DENSE ? "*" : "";
    printf("%-18s  %4d  %6zu  %-12s  %-9s  %-*s", m->name, m->year, m->layers,
           vp_placement_name(m->placement), vp_norm_name(m->norm), wide || with_counts ? 7 : 0,
           m->qk_norm ? "yes" : "no");
    if (with_counts)
        printf("  %6s%-*s", parameters, wide ? 1 : 0, partial);
    if (wide) {
        printf("  %s\n", m->source);
    } else {
        printf("\n    source: ");
        write_wrapped(stdout, m->source, 12, 12, TEXT_COLUMNS);
    }
    if (m->alpha.text[0] || m->beta.text[0]) {
        char scales[1400];
        snprintf(scales, sizeof scales, "its own alpha %s, beta %s%s; source: %s",
                 m->alpha.text[0] ? m->alpha.text : "DeepNet's",
                 m->beta.text[0] ? m->beta.text : "DeepNet's",
                 m->alpha.per_layer || m->beta.per_layer ? ", N its layers" : "", m->scale_source);
        fputs("    ", stdout);
        write_wrapped(stdout, scales, 4, 4, wide ? 0 : TEXT_COLUMNS);
    }
    write_shape(m, wide);
}

/* The models grouped by placement, each group under a heading with the
 * placement's formula, the groups in the order their first model has in the
 * file and the models in file order within one. */
static void write_grouped(const vp_model_table *table, int wide, int with_counts,
                          size_t *partial_counts)
{
    int shown[VP_PLACEMENT_COUNT] = {0};
    for (size_t i = 0; i < table->count; i++) {
        const vp_placement placement = table->models[i].placement;
        if (shown[placement])
            continue;
        shown[placement] = 1;
        printf("-- %s: %s\n", vp_placement_name(placement), vp_placement_formula(placement));
        for (size_t j = i; j < table->count; j++)
            if (table->models[j].placement == placement)
                write_model(&table->models[j], wide, with_counts, partial_counts);
    }
}

/* The table as text; in 80 columns the source, up to 200 characters, goes
 * on lines of its own. */
static void write_text_table(const vp_model_table *table, int wide)
{
    /* a table without shapes (the old 7 or 10 columns) is shown as before,
     * without the parameter counts */
    int with_counts = 0;
    for (size_t i = 0; i < table->count; i++)
        with_counts |= table->models[i].shape.known;
    printf("%-18s  %4s  %6s  %-12s  %-9s  %-*s%s%s\n", "model", "year", "layers", "placement",
           "norm", wide || with_counts ? 7 : 0, "qk-norm", with_counts ? "  params" : "",
           wide ? (with_counts ? "   source" : "  source") : "");
    size_t partial_counts = 0;
    write_grouped(table, wide, with_counts, &partial_counts);
    if (partial_counts)
        puts("* the count of the row's shape, not the model's: see its shape line");
}

int run_models(const cli_args *args)
{
    output_format format = FORMAT_TEXT;
    model_column_choice columns;
    int rc = read_output_format(args, &format);
    if (rc != EXIT_OK || (rc = read_model_columns(args, format, &columns)) != EXIT_OK)
        return rc;
    vp_model_table table = {0};
    if ((rc = load_models(&table)) != EXIT_OK)
        return rc;
    if (format != FORMAT_TEXT) {
        vp_page_table page = {0};
        if ((rc = models_page_table(&table, &columns, &page)) == EXIT_OK)
            rc = write_page_table(stdout, &page, format);
        vp_page_table_free(&page);
        vp_model_table_free(&table);
        return rc;
    }
    write_text_table(&table, args->given[OPT_WIDE]);
    vp_model_table_free(&table);
    /* a write that failed earlier leaves the error flag, not a failing flush */
    return fflush(stdout) == 0 && !ferror(stdout)
               ? EXIT_OK
               : cli_runtime_error("cannot write to standard output");
}
