/* The profile: its rows, allocated, filled and freed. */
#include "varprof/profile.h"
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

const char *vp_engine_name(vp_engine engine)
{
    switch (engine) {
    case VP_ENGINE_CLOSED: return "closed";
    case VP_ENGINE_MC: return "mc";
    case VP_ENGINE_FORWARD: return "forward";
    case VP_ENGINE_COUNT: break;
    }
    return "";
}

const char *vp_engine_title(vp_engine engine)
{
    switch (engine) {
    case VP_ENGINE_CLOSED: return "closed form";
    case VP_ENGINE_MC: return "Monte Carlo";
    case VP_ENGINE_FORWARD: return "forward pass";
    case VP_ENGINE_COUNT: break;
    }
    return "";
}

const char *vp_norm_name(vp_norm norm)
{
    switch (norm) {
    case VP_NORM_LAYERNORM: return "layernorm";
    case VP_NORM_RMSNORM: return "rmsnorm";
    case VP_NORM_ANY: break;
    }
    return "";
}

const char *vp_sampling_method_name(vp_sampling_method method)
{
    switch (method) {
    case VP_SAMPLING_REDUCED: return "reduced";
    case VP_SAMPLING_FULL: return "full";
    case VP_SAMPLING_GAIN_INIT: return "gain";
    case VP_SAMPLING_TORCH_INIT: return "torch";
    case VP_SAMPLING_LOADED: return "loaded weights";
    case VP_SAMPLING_NONE: break;
    }
    return "";
}

const char *vp_overflow_name(vp_overflow what)
{
    switch (what) {
    case VP_OVERFLOW_STREAM_VAR: return "stream variance";
    case VP_OVERFLOW_UPDATE_RATIO: return "update ratio";
    case VP_OVERFLOW_EMBEDDING_SHARE: return "embedding share";
    case VP_OVERFLOW_FLOAT_STREAM: return "stream (float activations out of range)";
    case VP_OVERFLOW_GRAD_VAR: return "gradient variance";
    case VP_OVERFLOW_FLOAT_GRAD: return "gradient (float gradients out of range)";
    case VP_OVERFLOW_NONE: break;
    }
    return "";
}
