/* The text's heading: what a profile was set to, and the network or the
 * sampling it ran, in the words the outputs have always used; before a run,
 * from the header its engine publishes. */
#include <stdio.h>
#include <string.h>

#include "varprof/forward.h"
#include "varprof/mc.h"
#include "varprof/placement.h"
#include "varprof/profile.h"
#include "varprof/text.h"
#include "varprof/version.h"
#include "core/profile_header.h"
#include "io/text_internal.h"

/* Gemma-2's departures and Cohere's logit scale, each said where it is on */
static void write_scales(FILE *out, const vp_sampling *s)
{
    const int logit_scale = s->logit_scale > 0.0 && s->logit_scale != 1.0;
    if (!((s->embed_scale > 0.0 && s->embed_scale != 1.0) || s->attn_scale > 0.0 ||
          s->attn_softcap > 0.0 || s->logit_softcap > 0.0 || logit_scale))
        return;
    char what[200] = "";
    size_t n = 0;
    if (s->embed_scale > 0.0 && s->embed_scale != 1.0)
        n += (size_t)snprintf(what + n, sizeof what - n, ", embedding x %.6g", s->embed_scale);
    if (s->attn_scale > 0.0)
        n += (size_t)snprintf(what + n, sizeof what - n, ", scores x %.6g", s->attn_scale);
    if (s->attn_softcap > 0.0)
        n +=
            (size_t)snprintf(what + n, sizeof what - n, ", scores capped at %.6g", s->attn_softcap);
    if (logit_scale)
        n += (size_t)snprintf(what + n, sizeof what - n, ", logits x %.6g", s->logit_scale);
    if (s->logit_softcap > 0.0)
        snprintf(what + n, sizeof what - n, ", logits capped at %.6g", s->logit_softcap);
    fprintf(out, "scales: %s\n", what + 2);
}

/* RoPE's linear scaling, said after its theta: ", linear scaling x8 on the
   full layers" where the sliding layers turn by a base of their own; "" for
   none, and where every layer slides and so none is scaled. */
static void linear_scaling(const vp_sampling *s, size_t layers, char *text, size_t size)
{
    const int own_base = s->rope_local_theta > 0.0 && s->sliding_layers;
    text[0] = '\0';
    if (s->rope_linear > 0.0 && !(own_base && s->sliding_layers == layers))
        snprintf(text, size, ", linear scaling x%.6g%s", s->rope_linear,
                 own_base ? " on the full layers" : "");
}

/* The sliding window, where the run had one: "window: 1024 tokens on 52 of
   62 layers, which turn by rope theta 10000". */
static void write_window(FILE *out, const vp_sampling *s, size_t layers)
{
    if (!s->sliding_window)
        return;
    fprintf(out, "window: %zu tokens on %zu of %zu layers", s->sliding_window, s->sliding_layers,
            layers);
    if (s->rope_local_theta > 0.0 && s->sliding_layers)
        fprintf(out, ", which turn by rope theta %.6g", s->rope_local_theta);
    fputc('\n', out);
}

/* "batch 2 x 64 tokens, gain init, eps 1e-05, seed 1": the batch, the
 * weights (drawn or loaded) and the norms' eps. Loaded weights run on
 * random token ids only where none were given, and a trained network's
 * figures on them are not its figures on text: that is said. The seed is
 * said where something was drawn from it: weights, tokens or the random
 * loss's r_t. */
static void format_batch(char *batch, size_t size, const vp_profile *p)
{
    const vp_sampling *s = &p->sampling;
    const int loaded = s->method == VP_SAMPLING_LOADED;
    const int seeded =
        !loaded || s->tokens_drawn ||
        (s->has_loss && (p->fields & VP_HAS_GRAD) && vp_loss_traits_of(s->loss)->seeded);
    char weights[48];
    if (loaded)
        snprintf(weights, sizeof weights, "weights from file");
    else
        snprintf(weights, sizeof weights, "%s init", vp_sampling_method_name(s->method));
    const int n = snprintf(batch, size, "batch %zu x %zu %stokens, %s, eps %.3g", s->batch,
                           s->tokens, loaded && s->tokens_drawn ? "random " : "", weights, s->eps);
    if (seeded && n > 0 && (size_t)n < size)
        snprintf(batch + n, size - (size_t)n, ", seed %llu", s->seed);
}

void text_write_network(FILE *out, const vp_profile *p)
{
    const vp_sampling *s = &p->sampling;
    char batch[160];
    format_batch(batch, sizeof batch, p);
    /* "MLP 4 x wide" for the GELU MLP (as always); another kind is named,
       a hidden width the width does not divide given whole */
    char mlp[64];
    const int named = s->mlp != VP_MLP_GELU;
    const char *kind = named ? vp_mlp_name(s->mlp) : "";
    if (s->ffn_mult)
        snprintf(mlp, sizeof mlp, "%s%sMLP %zu x wide", kind, named ? " " : "", s->ffn_mult);
    else
        snprintf(mlp, sizeof mlp, "%s%sMLP %zu wide", kind, named ? " " : "", s->ffn_width);
    /* biases are the default and go unsaid; their absence is said */
    if (s->bias == VP_BIAS_NONE)
        snprintf(mlp + strlen(mlp), sizeof mlp - strlen(mlp), ", no biases");
    else if (s->bias == VP_BIAS_QKV)
        snprintf(mlp + strlen(mlp), sizeof mlp - strlen(mlp), ", biases on q, k, v alone");
    else if (s->bias == VP_BIAS_MLP)
        snprintf(mlp + strlen(mlp), sizeof mlp - strlen(mlp),
                 ", biases on the MLP and the head alone");
    /* "8 heads of 128 sharing 2 kv heads": a width or kv heads of their own
       are said, the defaults (d / H, H) not */
    char heads[96];
    int at = snprintf(heads, sizeof heads, "%zu heads", s->heads);
    if (s->head_dim)
        at += snprintf(heads + at, sizeof heads - (size_t)at, " of %zu", s->head_dim);
    if (s->kv_heads)
        snprintf(heads + at, sizeof heads - (size_t)at, " sharing %zu kv head%s", s->kv_heads,
                 s->kv_heads == 1 ? "" : "s");
    if (s->heads)
        fprintf(out, "network: width %zu, %s%s, %s, vocab %zu, %s\n", s->width, heads,
                s->qk_norm == VP_QK_NORM_FULL             ? " with QK-norm over the full width"
                : s->qk_norm == VP_QK_NORM_HEAD_LAYERNORM ? " with QK-norm, a LayerNorm per head"
                : s->qk_norm == VP_QK_NORM_HEAD           ? " with QK-norm"
                                                          : "",
                mlp, s->vocab, batch);
    else
        fprintf(out, "network: MLP-only layers, width %zu, %s, vocab %zu, %s\n", s->width, mlp,
                s->vocab, batch);
    /* --grad: the loss differentiated, and its value on the batch */
    if (s->has_loss && (p->fields & VP_HAS_GRAD))
        fprintf(out, "backward: loss %s = %.6g on the batch\n", vp_loss_name(s->loss), p->loss);
    write_scales(out, s);
    /* positions other than none, which goes unsaid */
    char linear[64];
    linear_scaling(s, p->config.layers, linear, sizeof linear);
    const char *positions =
        s->positions != VP_POSITIONS_NONE ? vp_positions_name(s->positions) : NULL;
    if (positions && s->rope_theta > 0.0 && s->rope_factor > 0.0)
        fprintf(out,
                "positions: %s, theta %.6g, llama3 scaling (factor %.6g, low_freq_factor "
                "%.6g, high_freq_factor %.6g, original context %.6g)\n",
                positions, s->rope_theta, s->rope_factor, s->rope_low, s->rope_high,
                s->rope_context);
    else if (positions && s->rope_theta > 0.0 && s->rope_fraction > 0.0)
        fprintf(out, "positions: %s, theta %.6g%s, on the first %.6g of each head\n", positions,
                s->rope_theta, linear, s->rope_fraction);
    else if (positions && s->rope_theta > 0.0)
        fprintf(out, "positions: %s, theta %.6g%s\n", positions, s->rope_theta, linear);
    else if (positions)
        fprintf(out, "positions: %s\n", positions);
    write_window(out, s, p->config.layers);
    if (s->embedding_norm != VP_EMBEDDING_NORM_NONE)
        fprintf(out, "embedding: a %s on the looked-up rows\n",
                vp_embedding_norm_name(s->embedding_norm));
}

/* The heading's second line: what the run was set to. Loaded weights set
 * no gain, no gamma (their norms' weights), no beta (an init scale) and no
 * embedding variance: their stream is measured against the embedding they
 * give, and the line says so. Alpha, on the residual, they use. */
static void write_settings(FILE *out, const vp_profile *p)
{
    const vp_config *c = &p->config;
    const int loaded = p->sampling.method == VP_SAMPLING_LOADED;
    const char *sep = loaded ? "" : ", "; /* loaded: the gains are measured, row by row */
    if (!loaded && p->gains_from_file)
        fprintf(out, "gains per sub-block from file");
    else if (!loaded)
        fprintf(out, "gain %.6g", c->gain);
    /* only the scales this placement has */
    const vp_placement_traits *t = vp_placement_traits_of(c->placement);
    if (t->norm_out && !loaded)
        fprintf(out, ", gamma %.6g", c->gamma);
    if (t->residual_alpha) {
        fprintf(out, "%salpha %.6g", sep, c->alpha);
        sep = ", ";
    }
    if (t->branch_beta && !loaded)
        fprintf(out, ", beta %.6g", c->beta);
    if (p->norm != VP_NORM_ANY) {
        fprintf(out, "%s%s", sep, vp_norm_name(p->norm));
        sep = ", ";
    }
    if (loaded)
        fprintf(out, "%sstream size in units of the measured embedding's RMS\n", sep);
    else
        fprintf(out, ", embedding variance %.6g\n", c->embedding_var);
}

void text_write_heading_lines(FILE *out, const vp_profile *p)
{
    const vp_config *c = &p->config;
    /* a parallel block with two norms normalises each branch's input apart */
    const char *formula = p->sampling.residual == VP_RESIDUAL_PARALLEL_TWO_NORMS
                              ? "x <- x + f_attn(N_1(x)) + f_mlp(N_2(x))"
                              : vp_placement_formula(c->placement);
    fprintf(out, "varprof %s: %s, %s (%s), %zu layer%s = %zu sub-block%s\n", VP_VERSION,
            vp_engine_title(p->engine), vp_placement_name(c->placement), formula, c->layers,
            c->layers == 1 ? "" : "s", p->sub_blocks, p->sub_blocks == 1 ? "" : "s");
    write_settings(out, p);
    if (c->grad) /* the top of the backward half, which the final norm decides */
        fprintf(out, "gradients from the head, %s%s\n",
                vp_config_has_final_norm(c) ? "through a final norm" : "no final norm",
                p->sampling.method == VP_SAMPLING_LOADED ? " (the weights file's)"
                : c->final_norm == VP_FINAL_NORM_DEFAULT ? " (the placement's default)"
                                                         : " (--final-norm)");
    if (p->engine == VP_ENGINE_FORWARD)
        text_write_network(out, p);
    else if (p->sampling.generator)
        fprintf(out, "%s method, width %zu, %zu tokens, eps %.3g, generator %s, seed %llu\n",
                vp_sampling_method_name(p->sampling.method), p->sampling.width, p->sampling.trials,
                p->sampling.eps, p->sampling.generator, p->sampling.seed);
    fputc('\n', out);
}

static void write_heading_text(FILE *out, const void *profile)
{
    text_write_heading_lines(out, profile);
}

void text_write_heading(FILE *out, const vp_profile *p, vp_text_width width)
{
    text_write_lines_in_width(out, width, 0, write_heading_text, p); /* at commas only */
}

vp_status vp_text_write_heading(FILE *out, vp_engine engine, const vp_config *cfg,
                                const vp_mc_options *mc, const vp_forward_options *forward,
                                vp_text_width width)
{
    vp_profile header = {0}; /* what the engine will say of its profile, without rows */
    vp_status status = VP_EINVAL;
    if (engine == VP_ENGINE_MC)
        status = vp_mc_header(&header, cfg, mc);
    else if (engine == VP_ENGINE_FORWARD)
        status = vp_forward_header(&header, cfg, forward);
    else if (engine == VP_ENGINE_CLOSED && cfg) {
        profile_set_header(&header, VP_ENGINE_CLOSED, VP_NORM_ANY, cfg, 0, NULL);
        header.sub_blocks = vp_config_sub_blocks(cfg);
        status = VP_OK;
    }
    if (status != VP_OK)
        return status;
    text_write_heading(out, &header, width);
    return ferror(out) ? VP_EIO : VP_OK;
}
