/* varprof table: the maths table of varprof-maths(7), CONSTANT GAIN, each formula beside
 * its value with the numbers substituted, so that a reader can check every
 * entry by hand; --explain walks the recursion itself. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "page_tables.h"
#include "table_grad.h"
#include "varprof/varprof.h"

#define TEXT_COLUMNS 80

/* --wide: every figure to 17 significant digits, on lines as long as they
 * come; else six at most, on lines wrapped to 80 columns. */
static int wide;

int table_digits(int figures)
{
    return wide ? 17 : figures;
}

/* A number for the reader: six significant digits (17 with --wide).
 * Rotating buffers let one printf take several. */
const char *table_num(double x)
{
    static char buffers[12][40];
    static int next;
    char *buf = buffers[next++ % 12];
    snprintf(buf, sizeof buffers[0], "%.*g", table_digits(6), x);
    return buf;
}

/* Where a line of n columns from `column` breaks to fit 80: before the
 * last " = " that fits where `at_equals` and there is one (the arithmetic
 * goes on at "= ..."), else at the last space that fits, else at the first
 * space; 0 for nowhere. */
static size_t break_at(const char *text, size_t column, int at_equals)
{
    const size_t room = TEXT_COLUMNS > column ? TEXT_COLUMNS - column : 0;
    size_t equals = 0, space = 0;
    for (size_t i = 1; i <= room && text[i]; i++)
        if (text[i] == ' ') {
            space = i;
            if (text[i + 1] == '=' && text[i + 2] == ' ')
                equals = i;
        }
    if (at_equals && equals)
        return equals;
    if (space)
        return space;
    const char *first = strchr(text, ' ');
    return first ? (size_t)(first - text) : 0;
}

/* Prints text from column `indent`, wrapped to 80 columns unless --wide,
 * each further line `hang` columns in. */
static void put_wrapped(const char *text, size_t indent, size_t hang, int at_equals)
{
    size_t column = indent;
    printf("%*s", (int)indent, "");
    while (!wide && column + strlen(text) > TEXT_COLUMNS) {
        const size_t cut = break_at(text, column, at_equals);
        if (!cut)
            break;
        printf("%.*s\n%*s", (int)cut, text, (int)hang, "");
        text += cut + 1;
        column = hang;
    }
    printf("%s\n", text);
}

void table_say(size_t indent, const char *format, ...)
{
    char text[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    put_wrapped(text, indent, indent + 4, 1);
}

void table_row(const char *formula, const char *value)
{
    table_say(2, "%s", formula);
    table_say(4, "%s", value);
}

/* A ratio as a percentage with the table's four significant figures
 * (6.238 %, not 6.24 %); whole from 1000 % up, so that it never reads as
 * "1e+04 %". */
static const char *percent(double ratio)
{
    static char buffers[4][40];
    static int next;
    char *buf = buffers[next++ % 4];
    const double p = 100.0 * ratio;
    if (p >= 1000.0 && p < 1e6 && !wide)
        snprintf(buf, sizeof buffers[0], "%.0f %%", p);
    else
        snprintf(buf, sizeof buffers[0], "%.*g %%", table_digits(VP_PAGE_SIGNIFICANT), p);
    return buf;
}

/* A value known by its log2, as a plain number where a double holds it and
 * as a power of two where it does not, or where it is exactly one. */
static const char *by_log2(double value, double log2_value)
{
    static char buffers[4][80];
    static int next;
    char *buf = buffers[next++ % 4];
    if (log2_value == floor(log2_value) && log2_value <= -10.0) {
        if (value > 0.0)
            snprintf(buf, sizeof buffers[0], "2^%.0f", log2_value);
        else
            snprintf(buf, sizeof buffers[0], "2^%.0f (below the smallest double)", log2_value);
    } else if (value == 0.0) {
        snprintf(buf, sizeof buffers[0], "10^%.*g (below the smallest double)", table_digits(6),
                 log2_value * log10(2.0));
    } else {
        snprintf(buf, sizeof buffers[0], "%s", table_num(value));
    }
    return buf;
}

/* Prints a formula and, under it, its evaluation, whose "v_K", "u_K" or
 * "e_K" is written with this stack's K so that it reads as the figure it
 * is. */
static void print_row(const char *formula, size_t k_total, const char *evaluated)
{
    if (evaluated[0] && evaluated[1] == '_' && evaluated[2] == 'K') {
        char line[600];
        snprintf(line, sizeof line, "%c_%zu%s", evaluated[0], k_total, evaluated + 3);
        table_row(formula, line);
    } else {
        table_row(formula, evaluated);
    }
}

/* Post-LN and no norm alike: u_k = g and e_K = (1 + g^2)^(-K/2). */
static void print_gain_rows(const char *g, size_t k_total, const char *share,
                            const vp_closed_top *t)
{
    char line[512];
    snprintf(line, sizeof line, "u_K = g = %s = %s", g, percent(t->update_ratio));
    print_row("u_k = g", k_total, line);
    snprintf(line, sizeof line, "e_K = (1 + %s^2)^(-%zu/2) = %s = %s", g, k_total, share,
             percent(t->embedding_share));
    print_row("e_K = (1 + g^2)^(-K/2)", k_total, line);
}

/* How the formulas write a sum of n branches: nothing for one, "2 ", "2 * ",
 * "sqrt(2) ", "sqrt(2) * " for parallel's two. */
typedef struct {
    char n[24], n_times[24], root[32], root_times[32];
} branch_words;

static branch_words words_for(size_t branches)
{
    branch_words w = {"", "", "", ""};
    if (branches > 1) {
        snprintf(w.n, sizeof w.n, "%zu ", branches);
        snprintf(w.n_times, sizeof w.n_times, "%zu * ", branches);
        snprintf(w.root, sizeof w.root, "sqrt(%zu) ", branches);
        snprintf(w.root_times, sizeof w.root_times, "sqrt(%zu) * ", branches);
    }
    return w;
}

/* DeepNorm's ratio b / alpha: "beta^2 g / alpha", with the parts the
 * placement has, as a formula (subscript "" or "_k") and as values. */
static void scaled_ratio(const vp_config *cfg, const char *subscript, const char *g, char *formula,
                         size_t formula_size, char *values, size_t values_size)
{
    const vp_placement_traits *traits = vp_placement_traits_of(cfg->placement);
    snprintf(formula, formula_size, "%sg%s%s", traits->branch_beta ? "beta^2 " : "", subscript,
             traits->residual_alpha ? " / alpha" : "");
    char beta[64] = "", alpha[64] = "";
    if (traits->branch_beta)
        snprintf(beta, sizeof beta, "%s^2 * ", table_num(cfg->beta));
    if (traits->residual_alpha)
        snprintf(alpha, sizeof alpha, " / %s", table_num(cfg->alpha));
    snprintf(values, values_size, "%s%s%s", beta, g, alpha);
}

/* A norm after the add, with DeepNet's scales: u_k = beta^2 g / alpha and
 * e_K = (1 + u^2)^(-K/2). */
static void print_scaled_ratio_rows(const vp_config *cfg, const char *g, size_t k_total,
                                    const char *share, const vp_closed_top *t)
{
    char ratio[96], values[256], formula[128], line[512];
    scaled_ratio(cfg, "", g, ratio, sizeof ratio, values, sizeof values);
    snprintf(line, sizeof line, "u_K = %s = %s = %s", values, table_num(t->update_ratio),
             percent(t->update_ratio));
    snprintf(formula, sizeof formula, "u_k = %s", ratio);
    print_row(formula, k_total, line);
    snprintf(line, sizeof line, "e_K = (1 + %s^2)^(-%zu/2) = %s = %s", table_num(t->update_ratio),
             k_total, share, percent(t->embedding_share));
    snprintf(formula, sizeof formula, "e_K = (1 + (%s)^2)^(-K/2)", ratio);
    print_row(formula, k_total, line);
}

/* A stream that grows by a constant c^2 a branch (c: g behind an input norm,
 * gamma behind an output norm), n branches a sub-block. */
static void print_growing_rows(const char *name, const char *c, size_t branches, size_t k_total,
                               const char *share, const vp_closed_top *t)
{
    const branch_words w = words_for(branches);
    char formula[128], line[512];
    snprintf(formula, sizeof formula, "v_k = 1 + %sk %s^2", w.n, name);
    snprintf(line, sizeof line, "v_K = 1 + %s%zu * %s^2 = %s", w.n_times, k_total, c,
             table_num(t->stream_var));
    print_row(formula, k_total, line);
    snprintf(formula, sizeof formula, "u_k = %s%s / sqrt(1 + %s(k-1) %s^2)", w.root, name, w.n,
             name);
    snprintf(line, sizeof line, "u_K = %s%s / sqrt(1 + %s%zu * %s^2) = %s = %s", w.root_times, c,
             w.n_times, k_total - 1, c, table_num(t->update_ratio), percent(t->update_ratio));
    print_row(formula, k_total, line);
    snprintf(formula, sizeof formula, "e_K = (1 + %sK %s^2)^(-1/2)", w.n, name);
    snprintf(line, sizeof line, "e_K = (1 + %s%zu * %s^2)^(-1/2) = %s = %s", w.n_times, k_total, c,
             share, percent(t->embedding_share));
    print_row(formula, k_total, line);
}

static void print_placement(const vp_config *cfg, const vp_closed_top *t)
{
    char line[512];
    const size_t k_total = t->sub_blocks;
    const char *g = table_num(cfg->gain), *gm = table_num(cfg->gamma);
    /* a power of two is written with its decimal value beside it, to the
       table's precision like every other value */
    char share[128];
    snprintf(share, sizeof share, "%s", by_log2(t->embedding_share, t->log2_share));
    if (share[0] == '2' && share[1] == '^' && t->embedding_share > 0.0)
        snprintf(share + strlen(share), sizeof share - strlen(share), " = %s",
                 table_num(t->embedding_share));
    printf("\n%s    %s    (K = %zu)\n", vp_placement_name(cfg->placement),
           vp_placement_formula(cfg->placement), k_total);
    /* the formulas follow where the table puts the norms, as the recursion does */
    const vp_placement_traits *traits = vp_placement_traits_of(cfg->placement);
    if (traits->norm_stream) {
        print_row("v_k = 1", k_total, "v_K = 1");
        if (traits->branch_beta || traits->residual_alpha)
            print_scaled_ratio_rows(cfg, g, k_total, share, t);
        else
            print_gain_rows(g, k_total, share, t);
    } else if (traits->norm_out) {
        print_growing_rows("gamma", gm, 1, k_total, share, t);
    } else if (traits->norm_in) {
        print_growing_rows("g", g, vp_config_branches(cfg), k_total, share, t);
    } else {
        snprintf(line, sizeof line, "v_K = (1 + %s^2)^%zu = %s", g, k_total,
                 table_num(t->stream_var));
        print_row("v_k = (1 + g^2)^k", k_total, line);
        print_gain_rows(g, k_total, share, t);
    }
    if (isfinite(t->stream_var))
        snprintf(line, sizeof line, "sqrt(v_%zu / v_0) = sqrt(%s) = %.*g times the embedding's",
                 k_total, table_num(t->stream_var), table_digits(VP_PAGE_SIGNIFICANT),
                 sqrt(t->stream_var));
    else
        snprintf(line, sizeof line, "v_%zu overflows double", k_total);
    print_row("stream size = sqrt(v_K / v_0)", k_total, line);
}

/* Walks one step of the recursion with the arithmetic written out. */
static void explain_step(const vp_profile *p, size_t k)
{
    const vp_config *c = &p->config;
    const vp_row *prev = &p->rows[k - 1], *row = &p->rows[k];
    const double v0 = prev->stream_var, v1 = row->stream_var, g = row->gain;
    /* E_k = e_k^2 v_k, through log2 so that a vanishing share still shows */
    const double log2_e0 = 2.0 * prev->log2_share + log2(v0),
                 log2_e1 = 2.0 * row->log2_share + log2(v1);
    const char *e0 = by_log2(exp2(log2_e0), log2_e0), *e1 = by_log2(exp2(log2_e1), log2_e1);
    const size_t j = k - 1;
    table_say(2, "k = %zu (layer %zu, %s):", k, vp_config_layer_of(c, k),
              vp_part_name(vp_config_part_of(c, k)));
    const vp_placement_traits *traits = vp_placement_traits_of(c->placement);
    if (traits->norm_stream && (traits->branch_beta || traits->residual_alpha)) {
        char subscript[32], ratio[96], values[256];
        snprintf(subscript, sizeof subscript, "_%zu", k);
        scaled_ratio(c, subscript, table_num(g), ratio, sizeof ratio, values, sizeof values);
        table_say(4, "v_%zu = 1 (the norm resets the stream)", k);
        table_say(4, "u_%zu = %s = %s = %s = %s", k, ratio, values, table_num(row->update_ratio),
                  percent(row->update_ratio));
        table_say(4, "E_%zu = E_%zu / (v_%zu (1 + u_%zu^2)) = %s / (%s * (1 + %s^2)) = %s", k, j, j,
                  k, e0, table_num(v0), table_num(row->update_ratio), e1);
    } else if (traits->norm_stream) {
        table_say(4, "v_%zu = 1 (the norm resets the stream)", k);
        table_say(4, "u_%zu = g_%zu = %s = %s", k, k, table_num(g), percent(row->update_ratio));
        table_say(4, "E_%zu = E_%zu / (v_%zu (1 + g_%zu^2)) = %s / (%s * (1 + %s^2)) = %s", k, j, j,
                  k, e0, table_num(v0), table_num(g), e1);
    } else if (traits->norm_out) {
        table_say(4, "v_%zu = v_%zu + gamma^2 = %s + %s^2 = %s", k, j, table_num(v0),
                  table_num(c->gamma), table_num(v1));
        table_say(4, "u_%zu = gamma / sqrt(v_%zu) = %s / sqrt(%s) = %s = %s", k, j,
                  table_num(c->gamma), table_num(v0), table_num(row->update_ratio),
                  percent(row->update_ratio));
        table_say(4, "E_%zu = E_%zu = %s", k, j, e1);
    } else if (traits->norm_in) {
        const branch_words w = words_for(vp_config_branches(c));
        table_say(4, "v_%zu = v_%zu + %sg_%zu^2 = %s + %s%s^2 = %s", k, j, w.n, k, table_num(v0),
                  w.n_times, table_num(g), table_num(v1));
        table_say(4, "u_%zu = %sg_%zu / sqrt(v_%zu) = %s%s / sqrt(%s) = %s = %s", k, w.root, k, j,
                  w.root_times, table_num(g), table_num(v0), table_num(row->update_ratio),
                  percent(row->update_ratio));
        table_say(4, "E_%zu = E_%zu = %s", k, j, e1);
    } else {
        table_say(4, "v_%zu = v_%zu (1 + g_%zu^2) = %s * (1 + %s^2) = %s", k, j, k, table_num(v0),
                  table_num(g), table_num(v1));
        table_say(4, "u_%zu = g_%zu = %s = %s", k, k, table_num(g), percent(row->update_ratio));
        table_say(4, "E_%zu = E_%zu = %s", k, j, e1);
    }
    table_say(4, "e_%zu = sqrt(E_%zu / v_%zu) = sqrt(%s / %s) = %s = %s", k, k, k, e1,
              table_num(v1), by_log2(row->embedding_share, row->log2_share),
              percent(row->embedding_share));
}

static int explain(const vp_config *cfg)
{
    vp_profile *p;
    vp_error err;
    if (vp_closed_profile(cfg, &p, &err) != VP_OK)
        return cli_runtime_error("%s", err.message);
    printf("\n%s, step by step from v_0 = 1 and E_0 = v_0 = 1:\n",
           vp_placement_name(cfg->placement));
    const size_t last = p->n_rows - 1;
    for (size_t k = 1; k <= last; k++) {
        if (k > 3 && k < last) {
            if (k == 4)
                printf("  ...\n");
            continue;
        }
        explain_step(p, k);
    }
    if (p->overflow_at)
        printf("  sub-block %zu: the %s overflows double\n", p->overflow_at,
               vp_overflow_name(p->overflowed));
    vp_profile_free(p);
    return EXIT_OK;
}

/* ---- the symbols ---- */

#define MAX_SYMBOLS 20

/* A symbol the table prints: its name, with its value where the stack
 * gives it one, and what it stands for. */
typedef struct {
    char name[64];
    const char *is;
} symbol;

__attribute__((format(printf, 4, 5))) static void add_symbol(symbol *list, size_t *n,
                                                             const char *is, const char *name, ...)
{
    va_list args;
    va_start(args, name);
    vsnprintf(list[*n].name, sizeof list[*n].name, name, args);
    va_end(args);
    list[(*n)++].is = is;
}

/* Every symbol the formulas and the worked steps use, defined before them,
 * the names in a column and what they stand for wrapped beside it. */
static void print_symbols(const vp_config *cfg, int explaining)
{
    symbol s[MAX_SYMBOLS];
    size_t n = 0;
    add_symbol(s, &n, "the residual stream; x <- y: a sub-block replaces x by y", "x");
    add_symbol(s, &n, "a branch: attention or the MLP", "f, f_attn, f_mlp");
    add_symbol(s, &n, "a norm; N1 on a branch's input, N2 on its output", "N, N1, N2");
    add_symbol(s, &n, "layers", "L = %zu", cfg->layers);
    add_symbol(s, &n,
               "the sub-blocks, k = 1 .. K: two a layer, attention and MLP (one for parallel, "
               "whose two branches read the same x)",
               "K, k");
    add_symbol(s, &n, "sub-block k's branch gain, the same g at every k here", "g_k = g = %s",
               table_num(cfg->gain));
    add_symbol(s, &n, "scale of a normalised branch output (sandwich, output-norm)", "gamma = %s",
               table_num(cfg->gamma));
    add_symbol(s, &n, "DeepNorm's residual scale", "alpha = %s", table_num(cfg->alpha));
    add_symbol(s, &n, "DeepNorm's initialisation scale: a branch's gain is beta^2 g", "beta = %s",
               table_num(cfg->beta));
    add_symbol(s, &n, "stream variance after sub-block k; v_0 = 1, the embedding's", "v_k");
    add_symbol(s, &n,
               "update ratio: the RMS of what sub-block k adds over the RMS of what it is "
               "added to (x, or alpha x in DeepNorm)",
               "u_k");
    add_symbol(s, &n,
               "embedding share at the top: the RMS of the part of the stream that is the "
               "embedding carried through no branch, over the RMS of the stream",
               "e_K");
    if (explaining)
        add_symbol(s, &n, "that part's mean square after sub-block k: E_k = e_k^2 v_k", "E_k");
    if (cfg->grad) {
        add_symbol(s, &n,
                   "the mean square of the loss's gradient at the stream after sub-block k, "
                   "from the head's input (mean square 1) down",
                   "G_k");
        add_symbol(s, &n,
                   "the RMS of the loss's gradient at o times the RMS of h, for branch k's "
                   "last linear map o = A h",
                   "weight_grad_k");
        add_symbol(s, &n, "the gain of DeepNorm's map A: beta^2 g_k", "b_k");
    }
    size_t width = 0;
    for (size_t i = 0; i < n; i++)
        width = strlen(s[i].name) > width ? strlen(s[i].name) : width;
    printf("The maths table: every branch adds an output independent of the stream, with\n"
           "variance g^2 times its input's (gamma^2 where the output is normalised). Each\n"
           "placement's update rule comes first, then each formula with its value under it.\n"
           "\n");
    for (size_t i = 0; i < n; i++) {
        char line[2048];
        snprintf(line, sizeof line, "%-*s  %s", (int)width, s[i].name, s[i].is);
        put_wrapped(line, 2, 2 + width + 2, 0);
    }
}

int run_table(const cli_args *args)
{
    vp_config cfg = {0};
    int rc = read_stack_options(args, VP_DEFAULT_LAYERS, &cfg);
    output_format format = FORMAT_TEXT;
    if (rc != EXIT_OK || (rc = read_output_format(args, &format)) != EXIT_OK)
        return rc;
    if (format != FORMAT_TEXT) {
        if (args->given[OPT_EXPLAIN])
            return cli_usage_error("--explain writes the recursion out as text; drop --format");
        vp_page_table table;
        if ((rc = maths_page_table(cfg, &table)) == EXIT_OK)
            rc = write_page_table(stdout, &table, format);
        vp_page_table_free(&table);
        return rc;
    }
    wide = args->given[OPT_WIDE];
    print_symbols(&cfg, args->given[OPT_EXPLAIN]);
    for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++) {
        cfg.placement = (vp_placement)pl;
        vp_closed_top top;
        vp_error err;
        if (vp_closed_form_top(&cfg, &top, &err) != VP_OK)
            return cli_runtime_error("%s", err.message);
        print_placement(&cfg, &top);
        if (cfg.grad && (rc = print_grad_rows(&cfg)) != EXIT_OK)
            return rc;
    }
    if (args->given[OPT_EXPLAIN]) {
        for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++) {
            cfg.placement = (vp_placement)pl;
            if ((rc = explain(&cfg)) != EXIT_OK ||
                (cfg.grad && (rc = explain_grad(&cfg)) != EXIT_OK))
                return rc;
        }
        if (cfg.grad && (rc = explain_grad_figures(&cfg)) != EXIT_OK)
            return rc;
    }
    /* a write that failed earlier leaves the error flag, not a failing flush */
    return fflush(stdout) == 0 && !ferror(stdout)
               ? EXIT_OK
               : cli_runtime_error("cannot write to standard output");
}
