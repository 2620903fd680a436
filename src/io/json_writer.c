/* The JSON writer, over cJSON. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/row_fields.h"
#include "varprof/forward.h"
#include "varprof/json.h"
#include "varprof/version.h"

/* Numbers go in as raw %.17g text: cJSON's own printing keeps 15 digits
 * where they read back within its tolerance, which is not exactly. */
static void add_number(cJSON *object, const char *key, double value, int present)
{
    if (present && isfinite(value)) {
        char text[32];
        snprintf(text, sizeof text, "%.17g", value);
        cJSON_AddRawToObject(object, key, text);
    } else {
        cJSON_AddNullToObject(object, key);
    }
}

static void add_text(cJSON *object, const char *key, const char *text)
{
    if (text && *text)
        cJSON_AddStringToObject(object, key, text);
    else
        cJSON_AddNullToObject(object, key);
}

static cJSON *row_object(const vp_profile *profile, size_t k)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    for (size_t f = 0; f < row_field_table_size; f++) {
        const row_field *field = &row_field_table[f];
        if (!(field->appears & ROW_FIELD_JSON))
            continue;
        const int present = row_field_present(field, profile, k);
        if (field->kind == ROW_FIELD_TEXT)
            add_text(o, field->name, present ? row_field_text(field, profile, k) : NULL);
        else if (field->kind == ROW_FIELD_SIZE)
            add_number(o, field->name, present ? (double)row_field_size(field, profile, k) : 0.0,
                       present);
        else
            add_number(o, field->name, present ? row_field_double(field, profile, k) : 0.0,
                       present);
    }
    return o;
}

/* The forward pass's positions, and RoPE's theta and scaling where set. */
static void add_positions(cJSON *sampling, const vp_sampling *sm)
{
    const int positions = sm->positions != VP_POSITIONS_NONE;
    if (positions) /* none goes unsaid: the default's JSON stands */
        add_text(sampling, "positions", vp_positions_name(sm->positions));
    if (positions && sm->rope_theta > 0.0)
        add_number(sampling, "rope_theta", sm->rope_theta, 1);
    if (positions && sm->rope_fraction > 0.0)
        add_number(sampling, "rope_fraction", sm->rope_fraction, 1);
    /* the placement names one norm or none; a second is said */
    if (sm->residual == VP_RESIDUAL_PARALLEL_TWO_NORMS)
        add_text(sampling, "residual", vp_residual_name(sm->residual));
    if (sm->embedding_norm != VP_EMBEDDING_NORM_NONE)
        add_text(sampling, "embedding_norm", vp_embedding_norm_name(sm->embedding_norm));
    if (positions && sm->rope_factor > 0.0) {
        cJSON *scaling = cJSON_AddObjectToObject(sampling, "rope_scaling");
        add_text(scaling, "rope_type", "llama3");
        add_number(scaling, "factor", sm->rope_factor, 1);
        add_number(scaling, "low_freq_factor", sm->rope_low, 1);
        add_number(scaling, "high_freq_factor", sm->rope_high, 1);
        add_number(scaling, "original_max_position_embeddings", sm->rope_context, 1);
    }
    if (positions && sm->rope_linear > 0.0) { /* transformers' linear rope_scaling */
        cJSON *scaling = cJSON_AddObjectToObject(sampling, "rope_scaling");
        add_text(scaling, "rope_type", "linear");
        add_number(scaling, "factor", sm->rope_linear, 1);
    }
    if (positions && sm->rope_local_theta > 0.0)
        add_number(sampling, "rope_local_theta", sm->rope_local_theta, 1);
    if (sm->sliding_window) {
        add_number(sampling, "sliding_window", (double)sm->sliding_window, 1);
        add_number(sampling, "sliding_layers", (double)sm->sliding_layers, 1);
    }
}

/* The forward pass's network: method holds its init ("gain", "torch",
 * "loaded weights"); the loss and what the backward held with --grad. */
static void add_network(cJSON *sampling, const vp_profile *profile)
{
    const vp_sampling *sm = &profile->sampling;
    add_number(sampling, "heads", (double)sm->heads, sm->heads > 0);
    if (sm->kv_heads) /* the defaults go unsaid: their JSON stands */
        add_number(sampling, "kv_heads", (double)sm->kv_heads, 1);
    if (sm->head_dim)
        add_number(sampling, "head_dim", (double)sm->head_dim, 1);
    add_number(sampling, "ffn_mult", (double)sm->ffn_mult, sm->ffn_mult > 0);
    if (sm->mlp != VP_MLP_GELU) /* the default's JSON stands */
        add_text(sampling, "mlp", vp_mlp_name(sm->mlp));
    if (sm->bias != VP_BIAS_ALL)
        add_text(sampling, "bias", vp_bias_name(sm->bias));
    if (sm->ffn_mult == 0)
        add_number(sampling, "ffn_width", (double)sm->ffn_width, 1);
    add_number(sampling, "vocab", (double)sm->vocab, 1);
    add_number(sampling, "batch", (double)sm->batch, 1);
    add_number(sampling, "tokens", (double)sm->tokens, 1);
    cJSON_AddBoolToObject(sampling, "qk_norm", sm->qk_norm);
    if (sm->qk_norm == VP_QK_NORM_FULL) /* OLMo-2's; per head goes unsaid */
        add_text(sampling, "qk_norm_over", "full width");
    if (sm->qk_norm == VP_QK_NORM_HEAD_LAYERNORM) /* Cohere's */
        add_text(sampling, "qk_norm_over", "each head, a LayerNorm with a weight per head");
    if (sm->embed_scale > 0.0 && sm->embed_scale != 1.0)
        add_number(sampling, "embed_scale", sm->embed_scale, 1);
    if (sm->attn_scale > 0.0)
        add_number(sampling, "attn_scale", sm->attn_scale, 1);
    if (sm->attn_softcap > 0.0)
        add_number(sampling, "attn_softcap", sm->attn_softcap, 1);
    if (sm->logit_scale > 0.0 && sm->logit_scale != 1.0)
        add_number(sampling, "logit_scale", sm->logit_scale, 1);
    if (sm->logit_softcap > 0.0)
        add_number(sampling, "logit_softcap", sm->logit_softcap, 1);
    add_positions(sampling, sm);
    if (sm->has_loss && (profile->fields & VP_HAS_GRAD)) { /* --grad only */
        add_text(sampling, "loss", vp_loss_name(sm->loss));
        add_number(sampling, "loss_value", profile->loss, 1);
        /* what the backward held, as the text's summary says */
        add_text(sampling, "activations", sm->recomputed ? "recomputed" : "kept");
        add_number(sampling, "activation_bytes", sm->kept_bytes, 1);
        add_text(sampling, "weights", sm->weights_drawn ? "drawn" : "stored");
    }
}

/* How the rows were sampled: the method, width, tokens, seed, generator
 * and eps, and the forward pass's network. */
static void add_sampling(cJSON *o, const vp_profile *profile)
{
    const vp_sampling *sm = &profile->sampling;
    cJSON *sampling = cJSON_AddObjectToObject(o, "sampling");
    if (!sampling)
        return;
    add_text(sampling, "method", vp_sampling_method_name(sm->method));
    add_number(sampling, "width", (double)sm->width, 1);
    add_number(sampling, "trials", (double)sm->trials, 1);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", sm->seed); /* every digit of a 64-bit seed */
    cJSON_AddRawToObject(sampling, "seed", seed);
    add_text(sampling, "generator", sm->generator);
    add_number(sampling, "eps", sm->eps, 1);
    if (profile->engine == VP_ENGINE_FORWARD)
        add_network(sampling, profile);
}

/* The top of the stack, as vp_profile_get_top gives it. */
static void add_top(cJSON *o, const vp_profile *profile)
{
    const vp_profile_top top = vp_profile_get_top(profile);
    cJSON *summary = cJSON_AddObjectToObject(o, "top");
    if (summary) {
        add_number(summary, "sub_block", (double)top.sub_block, 1);
        add_number(summary, "stream_size", top.stream_size, 1);
        add_number(summary, "update_ratio", top.update_ratio, top.sub_block > 0);
        add_number(summary, "embedding_share", top.embedding_share, 1);
        add_number(summary, "log2_embedding_share", top.log2_share, 1);
    }
}

static cJSON *profile_object(const vp_profile *profile)
{
    const vp_config *cfg = &profile->config;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_text(o, "engine", vp_engine_name(profile->engine));
    add_text(o, "placement", vp_placement_name(cfg->placement));
    add_text(o, "formula", vp_placement_formula(cfg->placement));
    add_text(o, "norm", vp_norm_name(profile->norm));
    add_number(o, "layers", (double)cfg->layers, 1);
    add_number(o, "sub_blocks", (double)profile->sub_blocks, 1);
    /* loaded weights set no gain, gamma (their norms' weights) or beta (an
       init scale); alpha, on the residual, they use */
    const int set = profile->sampling.method != VP_SAMPLING_LOADED;
    add_number(o, "gain", cfg->gain, !profile->gains_from_file && set);
    cJSON_AddBoolToObject(o, "gains_from_file", profile->gains_from_file);
    add_number(o, "gamma", cfg->gamma, set);
    add_number(o, "alpha", cfg->alpha, 1);
    add_number(o, "beta", cfg->beta, set);
    add_number(o, "embedding_var", cfg->embedding_var, 1);
    add_number(o, "overflow_at", (double)profile->overflow_at, profile->overflow_at != 0);
    add_text(o, "overflowed", vp_overflow_name(profile->overflowed));
    /* the backward half's top: where the loss's gradient enters; only with
       it, so that a profile without --grad is written as it always was */
    if (profile->fields & VP_HAS_GRAD)
        cJSON_AddBoolToObject(o, "final_norm", vp_config_has_final_norm(cfg));
    /* the batch's loss to full precision, where the forward's backward made one */
    if ((profile->fields & VP_HAS_GRAD) && profile->sampling.has_loss)
        add_number(o, "loss", profile->loss, 1);
    if (profile->sampling.generator)
        add_sampling(o, profile);
    else
        cJSON_AddNullToObject(o, "sampling");
    add_top(o, profile);
    return o;
}

/* Prints item without its closing brace, so that rows can follow it. */
static vp_status print_open(FILE *out, cJSON *item)
{
    char *text = cJSON_PrintUnformatted(item);
    if (!text)
        return VP_ENOMEM;
    size_t length = strlen(text);
    fwrite(text, 1, length - 1, out); /* drop the final '}' */
    cJSON_free(text);
    return VP_OK;
}

vp_status vp_json_begin(vp_json_writer *writer, FILE *out)
{
    writer->out = out;
    writer->profiles_written = 0;
    fprintf(out, "{\"varprof\":\"%s\",\"profiles\":[", VP_VERSION);
    return ferror(out) ? VP_EIO : VP_OK;
}

vp_status vp_json_add_profile(vp_json_writer *writer, const vp_profile *profile, size_t every)
{
    FILE *out = writer->out;
    cJSON *meta = profile_object(profile);
    if (!meta)
        return VP_ENOMEM;
    if (writer->profiles_written++ > 0)
        fputc(',', out);
    fputc('\n', out);
    vp_status status = print_open(out, meta);
    cJSON_Delete(meta);
    if (status != VP_OK)
        return status;
    fputs(",\"rows\":[", out);
    int first = 1;
    for (size_t k = 0; k < profile->n_rows && status == VP_OK; k++) {
        if (!vp_profile_shows_row(profile, k, every))
            continue;
        cJSON *row = row_object(profile, k);
        char *text = row ? cJSON_PrintUnformatted(row) : NULL;
        if (!text) {
            status = VP_ENOMEM;
        } else {
            fprintf(out, "%s\n%s", first ? "" : ",", text);
            first = 0;
        }
        cJSON_free(text);
        cJSON_Delete(row);
    }
    fputs("]}", out);
    if (status == VP_OK && ferror(out))
        status = VP_EIO;
    return status;
}

vp_status vp_json_end(vp_json_writer *writer)
{
    fputs("\n]}\n", writer->out);
    return ferror(writer->out) ? VP_EIO : VP_OK;
}

vp_status vp_json_write_page_table(FILE *out, const vp_page_table *table)
{
    fprintf(out, "{\"varprof\":\"%s\",\"rows\":[", VP_VERSION);
    vp_status status = VP_OK;
    for (size_t r = 0; r < table->n_rows && status == VP_OK; r++) {
        cJSON *row = cJSON_CreateObject();
        for (size_t c = 0; row && c < table->n_columns; c++) {
            const vp_cell *cell = vp_page_table_cell(table, r, c);
            const char *key = table->columns[c].key;
            if (cell->kind == VP_CELL_TEXT)
                add_text(row, key, cell->text);
            else
                add_number(row, key,
                           cell->kind == VP_CELL_COUNT ? (double)cell->count : cell->number,
                           cell->kind != VP_CELL_EMPTY);
        }
        char *text = row ? cJSON_PrintUnformatted(row) : NULL;
        if (text)
            fprintf(out, "%s\n%s", r ? "," : "", text);
        else
            status = VP_ENOMEM;
        cJSON_free(text);
        cJSON_Delete(row);
    }
    fputs("\n]}\n", out);
    if (status == VP_OK && ferror(out))
        status = VP_EIO;
    return status;
}
