/* varprof table: the maths table of varprof-maths(7), CONSTANT GAIN, each formula beside
 * its value with the numbers substituted, so that a reader can check every
 * entry by hand; --explain walks the recursion itself. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
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

static const char *percent(double ratio)
{
    static char buffers[4][40];
    static int next;
    char *buf = buffers[next++ % 4];
    vp_format_percent(buf, sizeof buffers[0], ratio);
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
    switch (cfg->placement) {
    case VP_POST_LN:
        print_row("v_k = 1", k_total, "v_K = 1");
        print_gain_rows(g, k_total, share, t);
        break;
    case VP_PRE_NORM:
    case VP_SANDWICH:
    case VP_OUTPUT_NORM: {
        const int pre = cfg->placement == VP_PRE_NORM;
        const char *c = pre ? g : gm, *name = pre ? "g" : "gamma";
        char formula[128];
        snprintf(formula, sizeof formula, "v_k = 1 + k %s^2", name);
        snprintf(line, sizeof line, "v_K = 1 + %zu * %s^2 = %s", k_total, c, num(t->stream_var));
        print_row(formula, k_total, line);
        snprintf(formula, sizeof formula, "u_k = %s / sqrt(1 + (k-1) %s^2)", name, name);
        snprintf(line, sizeof line, "u_K = %s / sqrt(1 + %zu * %s^2) = %s = %s", c, k_total - 1,
                 c, num(t->update_ratio), percent(t->update_ratio));
        print_row(formula, k_total, line);
        snprintf(formula, sizeof formula, "e_K = (1 + K %s^2)^(-1/2)", name);
        snprintf(line, sizeof line, "e_K = (1 + %zu * %s^2)^(-1/2) = %s = %s", k_total, c, share,
                 percent(t->embedding_share));
        print_row(formula, k_total, line);
        break;
    }
    case VP_DEEPNORM: {
        const char *a = num(cfg->alpha), *b = num(cfg->beta);
        print_row("v_k = 1", k_total, "v_K = 1");
        snprintf(line, sizeof line, "u_K = %s^2 * %s / %s = %s = %s", b, g, a,
                 num(t->update_ratio), percent(t->update_ratio));
        print_row("u_k = beta^2 g / alpha", k_total, line);
        snprintf(line, sizeof line, "e_K = (1 + %s^2)^(-%zu/2) = %s = %s", num(t->update_ratio),
                 k_total, share, percent(t->embedding_share));
        print_row("e_K = (1 + (beta^2 g / alpha)^2)^(-K/2)", k_total, line);
        break;
    }
    case VP_PARALLEL:
        snprintf(line, sizeof line, "v_K = 1 + 2 * %zu * %s^2 = %s", k_total, g,
                 num(t->stream_var));
        print_row("v_k = 1 + 2 k g^2", k_total, line);
        snprintf(line, sizeof line, "u_K = sqrt(2) * %s / sqrt(1 + 2 * %zu * %s^2) = %s = %s", g,
                 k_total - 1, g, num(t->update_ratio), percent(t->update_ratio));
        print_row("u_k = sqrt(2) g / sqrt(1 + 2 (k-1) g^2)", k_total, line);
        snprintf(line, sizeof line, "e_K = (1 + 2 * %zu * %s^2)^(-1/2) = %s = %s", k_total, g,
                 share, percent(t->embedding_share));
        print_row("e_K = (1 + 2 K g^2)^(-1/2)", k_total, line);
        break;
    case VP_NO_NORM:
        snprintf(line, sizeof line, "v_K = (1 + %s^2)^%zu = %s", g, k_total, num(t->stream_var));
        print_row("v_k = (1 + g^2)^k", k_total, line);
        print_gain_rows(g, k_total, share, t);
        break;
    case VP_PLACEMENT_COUNT:
        break;
    }
    if (isfinite(t->stream_var))
        snprintf(line, sizeof line, "sqrt(v_%zu) = %.3g x the embedding's", k_total,
                 sqrt(t->stream_var));
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
    const double log2_e0 = 2.0 * prev->log2_share + log2(v0), log2_e1 = 2.0 * row->log2_share + log2(v1);
    const char *e0 = by_log2(exp2(log2_e0), log2_e0), *e1 = by_log2(exp2(log2_e1), log2_e1);
    const size_t j = k - 1;
    printf("  k = %zu (layer %zu, %s):\n", k, vp_config_layer_of(c, k),
           vp_part_name(vp_config_part_of(c, k)));
    switch (c->placement) {
    case VP_POST_LN:
        printf("    v_%zu = 1 (the norm resets the stream)\n", k);
        printf("    u_%zu = g_%zu = %s = %s\n", k, k, num(g), percent(row->update_ratio));
        printf("    E_%zu = E_%zu / (v_%zu (1 + g_%zu^2)) = %s / (%s * (1 + %s^2)) = %s\n", k, j, j,
               k, e0, num(v0), num(g), e1);
        break;
    case VP_PRE_NORM:
    case VP_PARALLEL: {
        const int two = c->placement == VP_PARALLEL;
        printf("    v_%zu = v_%zu + %sg_%zu^2 = %s + %s%s^2 = %s\n", k, j, two ? "2 " : "", k,
               num(v0), two ? "2 * " : "", num(g), num(v1));
        printf("    u_%zu = %sg_%zu / sqrt(v_%zu) = %s%s / sqrt(%s) = %s = %s\n", k,
               two ? "sqrt(2) " : "", k, j, two ? "sqrt(2) * " : "", num(g), num(v0),
               num(row->update_ratio), percent(row->update_ratio));
        printf("    E_%zu = E_%zu = %s\n", k, j, e1);
        break;
    }
    case VP_SANDWICH:
    case VP_OUTPUT_NORM:
        printf("    v_%zu = v_%zu + gamma^2 = %s + %s^2 = %s\n", k, j, num(v0), num(c->gamma),
               num(v1));
        printf("    u_%zu = gamma / sqrt(v_%zu) = %s / sqrt(%s) = %s = %s\n", k, j, num(c->gamma),
               num(v0), num(row->update_ratio), percent(row->update_ratio));
        printf("    E_%zu = E_%zu = %s\n", k, j, e1);
        break;
    case VP_DEEPNORM:
        printf("    v_%zu = 1 (the norm resets the stream)\n", k);
        printf("    u_%zu = beta^2 g_%zu / alpha = %s^2 * %s / %s = %s = %s\n", k, k, num(c->beta),
               num(g), num(c->alpha), num(row->update_ratio), percent(row->update_ratio));
        printf("    E_%zu = E_%zu / (v_%zu (1 + u_%zu^2)) = %s / (%s * (1 + %s^2)) = %s\n", k, j, j,
               k, e0, num(v0), num(row->update_ratio), e1);
        break;
    case VP_NO_NORM:
        printf("    v_%zu = v_%zu (1 + g_%zu^2) = %s * (1 + %s^2) = %s\n", k, j, k, num(v0), num(g),
               num(v1));
        printf("    u_%zu = g_%zu = %s = %s\n", k, k, num(g), percent(row->update_ratio));
        printf("    E_%zu = E_%zu = %s\n", k, j, e1);
        break;
    case VP_PLACEMENT_COUNT:
        break;
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
    if (rc != EXIT_OK)
        return rc;
    printf("The maths table: every branch adds an output independent of the stream, with\n"
           "variance g^2 times its input's (gamma^2 where the output is normalised).\n"
           "v_0 = 1, L = %zu layers, g = %s, gamma = %s; DeepNorm alpha = %s, beta = %s.\n"
           "v_k: stream variance after sub-block k; u_k: update ratio; e_K: embedding share "
           "at the top.\n",
           cfg.layers, num(cfg.gain), num(cfg.gamma), num(cfg.alpha), num(cfg.beta));
    for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++) {
        cfg.placement = (vp_placement)pl;
        vp_closed_top top;
        vp_error err;
        if (vp_closed_form_top(&cfg, &top, &err) != VP_OK)
            return cli_runtime_error("%s", err.message);
        print_placement(&cfg, &top);
    }
    if (args->given[OPT_EXPLAIN]) {
        for (int pl = 0; pl < VP_PLACEMENT_COUNT; pl++) {
            cfg.placement = (vp_placement)pl;
            if ((rc = explain(&cfg)) != EXIT_OK)
                return rc;
        }
    }
    return fflush(stdout) == 0 ? EXIT_OK : cli_runtime_error("cannot write to standard output");
}
