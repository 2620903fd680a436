/* The public entry, vp_forward_profile, and the profile's header of a forward pass. */
#include <Random123/philox.h>
#include <stdlib.h>
#include <string.h>

#include "forward/network.h"
#include "forward/run.h"
#include "core/profile_header.h"

#define TOKEN_WORD 0x544f4b4eu /* "TOKN": the token ids' Philox stream */

static void draw_tokens(uint32_t *ids, size_t batch, size_t tokens, size_t vocab,
                        unsigned long long seed)
{
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    for (size_t b = 0; b < batch; b++)
        for (size_t t = 0; t < tokens; t++) {
            philox4x32_ctr_t ctr = {{(uint32_t)b, (uint32_t)t, TOKEN_WORD, 0}};
            philox4x32_ctr_t x = philox4x32(ctr, key);
            ids[b * tokens + t] = (uint32_t)(((uint64_t)x.v[0] * vocab) >> 32);
        }
}
void fw_set_header(vp_profile *profile, const vp_config *cfg, const vp_forward_options *o)
{
    const vp_sampling sampling = {
        .width = o->width,
        .trials = o->batch * o->tokens,
        .seed = o->seed,
        .generator = "philox4x32-10",
        .method = o->weights ? VP_SAMPLING_LOADED : fw_init_method(o->init),
        .eps = o->eps,
        .heads = cfg->mlp_only ? 0 : o->heads,
        .kv_heads =
            cfg->mlp_only || vp_forward_kv_heads(o) == o->heads ? 0 : vp_forward_kv_heads(o),
        .head_dim = cfg->mlp_only || o->heads * vp_forward_head_dim(o) == o->width
                        ? 0
                        : vp_forward_head_dim(o),
        .ffn_mult =
            vp_forward_ffn_width(o) % o->width == 0 ? vp_forward_ffn_width(o) / o->width : 0,
        .ffn_width = vp_forward_ffn_width(o),
        .mlp = o->mlp,
        .bias = o->bias,
        .vocab = o->vocab,
        .batch = o->batch,
        .tokens = o->tokens,
        .qk_norm = o->qk_norm,
        .embed_scale = o->embed_scale,
        .attn_scale = o->attn_scale,
        .attn_softcap = o->attn_softcap,
        .logit_softcap = o->logit_softcap,
        .logit_scale = o->logit_scale > 0.0 ? o->logit_scale : 1.0,
        .tokens_drawn = o->token_ids == NULL};
    profile_set_header(profile, VP_ENGINE_FORWARD, o->norm, cfg,
                       VP_HAS_MEASURED | VP_HAS_STREAM_NORM, &sampling);
    /* a weights file decides the final norm: the profile says what ran, and
       so does the prediction made from its config */
    if (o->weights)
        profile->config.final_norm = vp_safetensors_find(o->weights, "final_norm.weight")
                                         ? VP_FINAL_NORM_YES
                                         : VP_FINAL_NORM_NO;
    fw_model shape = {0};
    fw_model_shape(&shape, cfg, o);
    profile->sampling.weights_drawn = shape.drawn;
    profile->sampling.recomputed = shape.recompute;
    if (cfg->grad)
        profile->sampling.kept_bytes =
            (double)fw_saved_floats(&shape, o->batch * o->tokens) * sizeof(float);
    profile->sampling.residual = fw_residual_of(cfg, o);
    profile->sampling.embedding_norm = o->embedding_norm;
    profile->sampling.sliding_window = o->sliding_window;
    profile->sampling.sliding_layers = fw_sliding_layers(cfg, o);
    if (o->positions != VP_POSITIONS_NONE) {
        const int rotary = vp_positions_traits_of(o->positions)->rotary != VP_ROTARY_NONE;
        profile->sampling.positions = o->positions;
        profile->sampling.rope_theta = rotary ? o->rope_theta : 0.0;
        if (rotary && o->rope_fraction > 0.0 && o->rope_fraction < 1.0)
            profile->sampling.rope_fraction = o->rope_fraction;
        if (rotary) {
            profile->sampling.rope_local_theta = o->rope_local_theta;
            profile->sampling.rope_linear = o->rope_linear > 1.0 ? o->rope_linear : 0.0;
        }
        if (o->positions == VP_POSITIONS_ROPE && o->rope_scaling.factor > 0.0) {
            profile->sampling.rope_factor = o->rope_scaling.factor;
            profile->sampling.rope_low = o->rope_scaling.low_freq_factor;
            profile->sampling.rope_high = o->rope_scaling.high_freq_factor;
            profile->sampling.rope_context = o->rope_scaling.original_context;
        }
    }
}

vp_status vp_forward_profile(const vp_config *cfg, const vp_forward_options *o, vp_profile **out,
                             vp_error *err)
{
    *out = NULL;
    vp_status status = vp_forward_check(cfg, o, err);
    if (status != VP_OK)
        return status;
    const kern_table *kern = kern_current();
    fw_model *m = fw_model_alloc(cfg, o, kern);
    uint32_t *ids = calloc(o->batch * o->tokens, sizeof *ids);
    vp_profile *profile = vp_profile_alloc(vp_config_sub_blocks(cfg));
    if (!m || !ids || !profile)
        status = vp_fail(err, VP_ENOMEM, "no memory for the network");
    if (status == VP_OK)
        status = o->weights ? fw_model_load(m, o->weights, err) : fw_model_init(m, cfg, o, err);
    if (status == VP_OK) {
        if (o->token_ids)
            memcpy(ids, o->token_ids, o->batch * o->tokens * sizeof *ids);
        else
            draw_tokens(ids, o->batch, o->tokens, o->vocab, o->seed);
        fw_set_header(profile, cfg, o);
        status = fw_run_network(m, cfg, o, ids, profile, NULL, err);
    }
    /* loaded weights set no embedding variance: the stream is measured
       against the embedding they give, v_0 as measured (0 where the rows
       looked up are zero, and then no size is finite) */
    if (status == VP_OK && o->weights)
        profile->config.embedding_var = profile->rows[0].stream_var;
    fw_model_free(m);
    free(ids);
    if (status != VP_OK) {
        vp_profile_free(profile);
        return status;
    }
    *out = profile;
    return VP_OK;
}
