/* varprof table: the maths table of varprof-maths(7), CONSTANT GAIN, each formula beside
 * its value with the numbers substituted, so that a reader can check every
 * entry by hand; --explain walks the recursion itself. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "page_tables.h"
#include "table_grad.h"
#include "varprof/varprof.h"

/* A number for the reader: six significant digits. Rotating buffers let one
 * printf take several. */
static const char *num(double x)
{
    static char buffers[12][40];
    static int next;
    char *buf = buffers[next++ % 12];
    snprintf(buf, sizeof buffers[0], "%.6g", x);
    return buf;
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
    if (p >= 1000.0 && p < 1e6)
        snprintf(buf, sizeof buffers[0], "%.0f %%", p);
    else
        snprintf(buf, sizeof buffers[0], "%.*g %%", VP_PAGE_SIGNIFICANT, p);
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
        snprintf(buf, sizeof buffers[0], "10^%.6g (below the smallest double)",
                 log2_value * log10(2.0));
    } else {
        snprintf(buf, sizeof buffers[0], "%.6g", value);
    }
    return buf;
}

/* Prints a formula and its evaluation, whose "v_K", "u_K" or "e_K" is
 * written with this stack's K so that it reads as the figure it is. */
static void print_row(const char *formula, size_t k_total, const char *evaluated)
{
    if (evaluated[0] && evaluated[1] == '_' && evaluated[2] == 'K')
        printf("  %-40s %c_%zu%s\n", formula, evaluated[0], k_total, evaluated + 3);
    else
        printf("  %-40s %s\n", formula, evaluated);
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
        snprintf(beta, sizeof beta, "%s^2 * ", num(cfg->beta));
    if (traits->residual_alpha)
        snprintf(alpha, sizeof alpha, " / %s", num(cfg->alpha));
    snprintf(values, values_size, "%s%s%s", beta, g, alpha);
}

/* A norm after the add, with DeepNet's scales: u_k = beta^2 g / alpha and
 * e_K = (1 + u^2)^(-K/2). */
static void print_scaled_ratio_rows(const vp_config *cfg, const char *g, size_t k_total,
                                    const char *share, const vp_closed_top *t)
{
    char ratio[96], values[256], formula[128], line[512];
    scaled_ratio(cfg, "", g, ratio, sizeof ratio, values, sizeof values);
    snprintf(line, sizeof line, "u_K = %s = %s = %s", values, num(t->update_ratio),
             percent(t->update_ratio));
    snprintf(formula, sizeof formula, "u_k = %s", ratio);
    print_row(formula, k_total, line);
    snprintf(line, sizeof line, "e_K = (1 + %s^2)^(-%zu/2) = %s = %s", num(t->update_ratio),
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
             num(t->stream_var));
    print_row(formula, k_total, line);
    snprintf(formula, sizeof formula, "u_k = %s%s / sqrt(1 + %s(k-1) %s^2)", w.root, name, w.n,
             name);
    snprintf(line, sizeof line, "u_K = %s%s / sqrt(1 + %s%zu * %s^2) = %s = %s", w.root_times, c,
             w.n_times, k_total - 1, c, num(t->update_ratio), percent(t->update_ratio));
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
    const char *g = num(cfg->gain), *gm = num(cfg->gamma);
    /* a power of two is written with its decimal value beside it */
    char share[128];
    snprintf(share, sizeof share, "%s", by_log2(t->embedding_share, t->log2_share));
    if (share[0] == '2' && share[1] == '^' && t->embedding_share > 0.0)
        snprintf(share + strlen(share), sizeof share - strlen(share), " = %.17g",
                 t->embedding_share);
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
        snprintf(line, sizeof line, "v_K = (1 + %s^2)^%zu = %s", g, k_total, num(t->stream_var));
        print_row("v_k = (1 + g^2)^k", k_total, line);
        print_gain_rows(g, k_total, share, t);
    }
    if (isfinite(t->stream_var))
        snprintf(line, sizeof line, "sqrt(v_%zu) = %.*g x the embedding's", k_total,
                 VP_PAGE_SIGNIFICANT, sqrt(t->stream_var));
    else
        snprintf(line, sizeof line, "v_%zu overflows double", k_total);
    print_row("stream size", k_total, line);
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
    printf("  k = %zu (layer %zu, %s):\n", k, vp_config_layer_of(c, k),
           vp_part_name(vp_config_part_of(c, k)));
    const vp_placement_traits *traits = vp_placement_traits_of(c->placement);
    if (traits->norm_stream && (traits->branch_beta || traits->residual_alpha)) {
        char subscript[32], ratio[96], values[256];
        snprintf(subscript, sizeof subscript, "_%zu", k);
        scaled_ratio(c, subscript, num(g), ratio, sizeof ratio, values, sizeof values);
        printf("    v_%zu = 1 (the norm resets the stream)\n", k);
        printf("    u_%zu = %s = %s = %s = %s\n", k, ratio, values, num(row->update_ratio),
               percent(row->update_ratio));
        printf("    E_%zu = E_%zu / (v_%zu (1 + u_%zu^2)) = %s / (%s * (1 + %s^2)) = %s\n", k, j, j,
               k, e0, num(v0), num(row->update_ratio), e1);
    } else if (traits->norm_stream) {
        printf("    v_%zu = 1 (the norm resets the stream)\n", k);
        printf("    u_%zu = g_%zu = %s = %s\n", k, k, num(g), percent(row->update_ratio));
        printf("    E_%zu = E_%zu / (v_%zu (1 + g_%zu^2)) = %s / (%s * (1 + %s^2)) = %s\n", k, j, j,
               k, e0, num(v0), num(g), e1);
    } else if (traits->norm_out) {
        printf("    v_%zu = v_%zu + gamma^2 = %s + %s^2 = %s\n", k, j, num(v0), num(c->gamma),
               num(v1));
        printf("    u_%zu = gamma / sqrt(v_%zu) = %s / sqrt(%s) = %s = %s\n", k, j, num(c->gamma),
               num(v0), num(row->update_ratio), percent(row->update_ratio));
        printf("    E_%zu = E_%zu = %s\n", k, j, e1);
    } else if (traits->norm_in) {
        const branch_words w = words_for(vp_config_branches(c));
        printf("    v_%zu = v_%zu + %sg_%zu^2 = %s + %s%s^2 = %s\n", k, j, w.n, k, num(v0),
               w.n_times, num(g), num(v1));
        printf("    u_%zu = %sg_%zu / sqrt(v_%zu) = %s%s / sqrt(%s) = %s = %s\n", k, w.root, k, j,
               w.root_times, num(g), num(v0), num(row->update_ratio), percent(row->update_ratio));
        printf("    E_%zu = E_%zu = %s\n", k, j, e1);
    } else {
        printf("    v_%zu = v_%zu (1 + g_%zu^2) = %s * (1 + %s^2) = %s\n", k, j, k, num(v0), num(g),
               num(v1));
        printf("    u_%zu = g_%zu = %s = %s\n", k, k, num(g), percent(row->update_ratio));
        printf("    E_%zu = E_%zu = %s\n", k, j, e1);
    }
    printf("    e_%zu = sqrt(E_%zu / v_%zu) = sqrt(%s / %s) = %s = %s\n", k, k, k, e1, num(v1),
           by_log2(row->embedding_share, row->log2_share), percent(row->embedding_share));
}

static int explain(const vp_config *cfg)
{
    vp_profile *p;
    vp_error err;
    if (vp_closed_profile(cfg, &p, &err) != VP_OK)
        return cli_runtime_error("%s", err.message);
    printf("\n%s, step by step from v_0 = 1 and E_0 = v_0 = 1 (E_k: the embedding's part of "
           "v_k):\n",
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
    printf("The maths table: every branch adds an output independent of the stream, with\n"
           "variance g^2 times its input's (gamma^2 where the output is normalised).\n"
           "v_0 = 1, L = %zu layers, g = %s, gamma = %s; DeepNorm alpha = %s, beta = %s.\n"
           "v_k: stream variance after sub-block k; u_k: update ratio; e_K: embedding share "
           "at the top.\n",
           cfg.layers, num(cfg.gain), num(cfg.gamma), num(cfg.alpha), num(cfg.beta));
    if (cfg.grad)
        printf("G_k: the loss's gradient's mean square at the stream after sub-block k, from "
               "the\nhead's input (mean square 1) down; weight_grad_k: RMS(dL/do) RMS(h) of "
               "branch k's\nlast linear map o = A h.\n");
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
    return fflush(stdout) == 0 ? EXIT_OK : cli_runtime_error("cannot write to standard output");
}
