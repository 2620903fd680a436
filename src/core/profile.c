/* The profile: its rows, allocated, filled and freed. */
#include "varprof/profile.h"
#include "core/name_table.h"
#include "core/profile_header.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

vp_profile *vp_profile_alloc(size_t sub_blocks)
{
    if (sub_blocks >= (SIZE_MAX - sizeof(vp_profile)) / sizeof(vp_row) - 1)
        return NULL;
    vp_profile *profile = calloc(1, sizeof(vp_profile) + (sub_blocks + 1) * sizeof(vp_row));
    if (profile) {
        profile->sub_blocks = sub_blocks;
        profile->n_rows = sub_blocks + 1;
    }
    return profile;
}

void vp_profile_free(vp_profile *profile)
{
    free(profile);
}

void profile_set_header(vp_profile *profile, vp_engine engine, vp_norm norm, const vp_config *cfg,
                        unsigned fields, const vp_sampling *sampling)
{
    profile->engine = engine;
    profile->norm = norm;
    profile->config = *cfg;
    profile->config.gains = NULL; /* the caller's array: it may not outlive the profile */
    profile->gains_from_file = cfg->gains != NULL;
    profile->fields = fields;
    profile->sampling = sampling ? *sampling : (vp_sampling){0};
}

double vp_profile_stream_size(const vp_profile *profile, size_t k)
{
    /* two roots, not one of the ratio: v_k / v_0 may overflow where both are finite */
    return sqrt(profile->rows[k].stream_var) / sqrt(profile->config.embedding_var);
}

double vp_profile_grad_size(const vp_profile *profile, size_t k)
{
    if (!(profile->fields & VP_HAS_GRAD))
        return NAN;
    /* two roots, as for the stream: G_k / G_K may overflow where both are finite */
    return sqrt(profile->rows[k].grad_var) / sqrt(profile->rows[profile->n_rows - 1].grad_var);
}

vp_profile_top vp_profile_get_top(const vp_profile *profile)
{
    const size_t top = profile->n_rows - 1;
    const vp_row *row = &profile->rows[top];
    return (vp_profile_top){
        .engine = profile->engine,
        .placement = profile->config.placement,
        .sub_blocks = profile->sub_blocks,
        .sub_block = top,
        .stream_size = vp_profile_stream_size(profile, top),
        .stream_var = row->stream_var,
        .update_ratio = row->update_ratio,
        .embedding_share = row->embedding_share,
        .log2_share = row->log2_share,
        .overflow_at = profile->overflow_at,
        .overflowed = profile->overflowed,
    };
}

int vp_profile_shows_row(const vp_profile *profile, size_t k, size_t every)
{
    return k % every == 0 || k + 1 == profile->n_rows;
}

/* The profile's enums' names, "" for a value out of range or for the
   enum's nothing (VP_NORM_ANY, VP_SAMPLING_NONE, VP_OVERFLOW_NONE) */
static const char *const engine_names[VP_ENGINE_COUNT] = {
    [VP_ENGINE_CLOSED] = "closed", [VP_ENGINE_MC] = "mc", [VP_ENGINE_FORWARD] = "forward"};
static const char *const engine_titles[VP_ENGINE_COUNT] = {[VP_ENGINE_CLOSED] = "closed form",
                                                           [VP_ENGINE_MC] = "Monte Carlo",
                                                           [VP_ENGINE_FORWARD] = "forward pass"};
static const char *const norm_names[] = {
    [VP_NORM_ANY] = "", [VP_NORM_LAYERNORM] = "layernorm", [VP_NORM_RMSNORM] = "rmsnorm"};
static const char *const sampling_method_names[] = {[VP_SAMPLING_NONE] = "",
                                                    [VP_SAMPLING_REDUCED] = "reduced",
                                                    [VP_SAMPLING_FULL] = "full",
                                                    [VP_SAMPLING_GAIN_INIT] = "gain",
                                                    [VP_SAMPLING_TORCH_INIT] = "torch",
                                                    [VP_SAMPLING_LOADED] = "loaded weights"};
static const char *const overflow_names[] = {
    [VP_OVERFLOW_NONE] = "",
    [VP_OVERFLOW_STREAM_VAR] = "stream variance",
    [VP_OVERFLOW_UPDATE_RATIO] = "update ratio",
    [VP_OVERFLOW_EMBEDDING_SHARE] = "embedding share",
    [VP_OVERFLOW_FLOAT_STREAM] = "stream (float activations out of range)",
    [VP_OVERFLOW_GRAD_VAR] = "gradient variance",
    [VP_OVERFLOW_FLOAT_GRAD] = "gradient (float gradients out of range)",
};
_Static_assert(sizeof norm_names / sizeof *norm_names == VP_NORM_RMSNORM + 1,
               "a new vp_norm needs a row in norm_names (core/profile.c)");
_Static_assert(sizeof sampling_method_names / sizeof *sampling_method_names ==
                   VP_SAMPLING_LOADED + 1,
               "a new vp_sampling_method needs a row in sampling_method_names (core/profile.c)");
_Static_assert(sizeof overflow_names / sizeof *overflow_names == VP_OVERFLOW_FLOAT_GRAD + 1,
               "a new vp_overflow needs a row in overflow_names (core/profile.c)");

static const char *or_empty(const char *name)
{
    return name ? name : "";
}

const char *vp_engine_name(vp_engine engine)
{
    return or_empty(name_table_name(NAME_LIST(engine_names), (int)engine));
}

const char *vp_engine_title(vp_engine engine)
{
    return or_empty(name_table_name(NAME_LIST(engine_titles), (int)engine));
}

const char *vp_norm_name(vp_norm norm)
{
    return or_empty(name_table_name(NAME_LIST(norm_names), (int)norm));
}

const char *vp_sampling_method_name(vp_sampling_method method)
{
    return or_empty(name_table_name(NAME_LIST(sampling_method_names), (int)method));
}

const char *vp_overflow_name(vp_overflow what)
{
    return or_empty(name_table_name(NAME_LIST(overflow_names), (int)what));
}
