/* varprof table --grad: the backward half of the maths table,
 * varprof-maths(7) GRADIENTS, each formula beside its value; with --explain
 * the recursion walked down and issue 13's figures worked out by hand. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "table_grad.h"
#include "varprof/varprof.h"

/* The formulas of one placement's backward step, by where its norms sit
 * (the traits), as the engine reads them. */
typedef struct {
    char below[64];  /* G_{k-1} in terms of G_k */
    char weight[64]; /* weight_grad_k^2 */
} grad_formulas;

static grad_formulas formulas_of(const vp_config *cfg)
{
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    const size_t n = vp_config_branches(cfg);
    char n_words[32] = "";
    if (n > 1)
        snprintf(n_words, sizeof n_words, "%zu ", n);
    grad_formulas f;
    if (t->norm_stream) {
        snprintf(f.below, sizeof f.below, "G_k / v_{k-1}");
        snprintf(f.weight, sizeof f.weight, "%s",
                 t->residual_alpha ? "G_k / (alpha^2 + b_k^2)" : "G_k / (1 + g_k^2)");
    } else if (t->norm_out) {
        snprintf(f.below, sizeof f.below, "G_k (1 + gamma^2 / v_{k-1})");
        snprintf(f.weight, sizeof f.weight, "gamma^2 G_k / g_k^2");
    } else if (t->norm_in) {
        snprintf(f.below, sizeof f.below, "G_k (1 + %sg_k^2 / v_{k-1})", n_words);
        snprintf(f.weight, sizeof f.weight, "G_k%s", n > 1 ? " (each branch)" : "");
    } else {
        snprintf(f.below, sizeof f.below, "G_k (1 + g_k^2)");
        snprintf(f.weight, sizeof f.weight, "G_k v_{k-1}");
    }
    return f;
}

static vp_profile *grad_profile(vp_config cfg)
{
    cfg.grad = 1;
    vp_profile *p = NULL;
    vp_error err;
    if (vp_closed_profile(&cfg, &p, &err) != VP_OK) {
        cli_runtime_error("%s", err.message);
        return NULL;
    }
    return p;
}

int print_grad_rows(const vp_config *cfg)
{
    vp_profile *p = grad_profile(*cfg);
    if (!p)
        return EXIT_RUNTIME;
    const grad_formulas f = formulas_of(cfg);
    const size_t top = p->n_rows - 1;
    const int final_norm = vp_config_has_final_norm(cfg);
    char formula[96], value[256];
    snprintf(formula, sizeof formula, "G_K = %s",
             final_norm ? "1 / v_K (final norm)" : "1 (no final norm)");
    if (final_norm)
        snprintf(value, sizeof value, "G_%zu = 1 / %s = %s", top,
                 table_num(p->rows[top].stream_var), table_num(p->rows[top].grad_var));
    else
        snprintf(value, sizeof value, "G_%zu = 1", top);
    table_row(formula, value);
    snprintf(formula, sizeof formula, "G_{k-1} = %s", f.below);
    snprintf(value, sizeof value, "G_0 = %s", table_num(p->rows[0].grad_var));
    table_row(formula, value);
    snprintf(formula, sizeof formula, "weight_grad_k^2 = %s", f.weight);
    snprintf(value, sizeof value, "weight_grad_1 = %s, weight_grad_%zu = %s",
             table_num(p->rows[1].weight_grad), top, table_num(p->rows[top].weight_grad));
    table_row(formula, value);
    snprintf(value, sizeof value, "sqrt(G_0 / G_%zu) = %.*g times the top's", top,
             table_digits(VP_PAGE_SIGNIFICANT), vp_profile_grad_size(p, 0));
    table_row("gradient size at the embedding = sqrt(G_0 / G_K)", value);
    vp_profile_free(p);
    return EXIT_OK;
}

/* One backward step with its numbers, by the formulas above. */
static void explain_grad_step(const vp_profile *p, size_t k)
{
    const vp_row *r = &p->rows[k], *b = &p->rows[k - 1];
    const grad_formulas f = formulas_of(&p->config);
    table_say(2, "k = %zu: G_k = %s, v_{k-1} = %s, g_k = %s", k, table_num(r->grad_var),
              table_num(b->stream_var), table_num(r->gain));
    table_say(4, "G_{k-1} = %s = %s", f.below, table_num(b->grad_var));
    table_say(4, "weight_grad_k = sqrt(%s) = %s", f.weight, table_num(r->weight_grad));
}

int explain_grad(const vp_config *cfg)
{
    vp_profile *p = grad_profile(*cfg);
    if (!p)
        return EXIT_RUNTIME;
    const size_t top = p->n_rows - 1;
    printf("\n");
    table_say(0, "%s, the gradient from the top down (%s):", vp_placement_name(cfg->placement),
              vp_config_has_final_norm(cfg) ? "G_K = 1 / v_K, a final norm"
                                            : "G_K = 1, no final norm");
    for (size_t k = top; k >= 1; k--) {
        if (k + 3 <= top && k > 1) {
            if (k + 3 == top)
                printf("  ...\n");
            continue;
        }
        explain_grad_step(p, k);
    }
    vp_profile_free(p);
    return EXIT_OK;
}

/* Issue 13's figures at this stack's L and g: pre-norm with its final norm
 * telescopes, Post-LN stays flat, and their top weight gradients part as
 * sqrt(L) (Xiong et al. 2020, Theorem 1). Each figure to the precision
 * varprof-maths(7) quotes it (8.062, 0.124, 0.7071), or 17 digits with
 * --wide. */
int explain_grad_figures(const vp_config *cfg)
{
    vp_config pre_cfg = *cfg, post_cfg = *cfg;
    pre_cfg.placement = VP_PRE_NORM;
    pre_cfg.final_norm = VP_FINAL_NORM_YES;
    post_cfg.placement = VP_POST_LN;
    post_cfg.final_norm = VP_FINAL_NORM_NO;
    vp_profile *pre = grad_profile(pre_cfg), *post = pre ? grad_profile(post_cfg) : NULL;
    if (!pre || !post) {
        vp_profile_free(pre);
        return EXIT_RUNTIME;
    }
    const size_t K = pre->n_rows - 1, Kp = post->n_rows - 1;
    const char *g = table_num(cfg->gain);
    const double v_top = pre->rows[K].stream_var;
    const int four = table_digits(4), three = table_digits(3);
    printf("\n");
    table_say(0, "The backward half's figures, worked by hand (L = %zu, g = %s);", cfg->layers, g);
    table_say(0, "grad size: the gradient size at the embedding, sqrt(G_0 / G_K).");
    table_say(0, "pre-norm with a final norm, where v_k = v_{k-1} + g^2:");
    table_say(2, "G_{k-1} = G_k (1 + g^2 / v_{k-1}) = G_k v_k / v_{k-1},");
    table_say(2, "so G_k v_k is the same at every k: it telescopes to G_k = G_%zu v_%zu / v_k.", K,
              K);
    table_say(2, "G_%zu = 1 / v_%zu = 1 / %s, so G_0 = 1 / v_0 = %s", K, K, table_num(v_top),
              table_num(pre->rows[0].grad_var));
    table_say(2, "grad size sqrt(G_0 / G_%zu) = sqrt(v_%zu / v_0) = sqrt(%s) = %.*g", K, K,
              table_num(v_top), four, vp_profile_grad_size(pre, 0));
    table_say(2, "weight_grad_%zu = sqrt(G_%zu) = 1 / sqrt(%s) = %.*g", K, K, table_num(v_top),
              three, pre->rows[K].weight_grad);
    table_say(2, "weight_grad_1 = sqrt(G_1) = 1 / sqrt(v_1) = 1 / sqrt(1 + %s^2) = %.*g", g, four,
              pre->rows[1].weight_grad);
    table_say(0,
              "post-ln, no final norm: G_%zu = 1 and G_{k-1} = G_k / v_{k-1} = G_k, v_k = 1:", Kp);
    table_say(2, "grad size %.*g at every depth;", four, vp_profile_grad_size(post, 0));
    table_say(2, "weight_grad_k = sqrt(G_k / (1 + g^2)) = 1 / sqrt(1 + %s^2) = %.*g", g, four,
              post->rows[Kp].weight_grad);
    const double ratio = post->rows[Kp].weight_grad / pre->rows[K].weight_grad;
    table_say(0, "Xiong et al. 2020: post-ln's top weight_grad_K over pre-norm's =");
    table_say(2, "sqrt(v_%zu / (1 + g^2)) = sqrt(%s / %s) = %.*g, growing as sqrt(L)", K,
              table_num(v_top), table_num(1.0 + cfg->gain * cfg->gain), four, ratio);
    vp_profile_free(pre);
    vp_profile_free(post);
    return EXIT_OK;
}
