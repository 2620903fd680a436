/* The configuration: its defaults and its checks. */
#include "varprof/config.h"

#include <math.h>

void vp_config_init(vp_config *cfg, vp_placement placement, size_t layers)
{
    *cfg = (vp_config){
        .placement = placement,
        .layers = layers,
        .gain = 1.0,
        .gamma = 1.0,
        .alpha = vp_deepnet_alpha(layers),
        .beta = vp_deepnet_beta(layers),
        .embedding_var = 1.0,
    };
}

double vp_deepnet_alpha(size_t layers)
{
    return pow(2.0 * (double)layers, 0.25);
}

double vp_deepnet_beta(size_t layers)
{
    return pow(8.0 * (double)layers, -0.25);
}

size_t vp_config_sub_blocks(const vp_config *cfg)
{
    return cfg->mlp_only ? cfg->layers : vp_sub_block_count(cfg->placement, cfg->layers);
}

size_t vp_config_branches(const vp_config *cfg)
{
    return cfg->mlp_only ? 1 : vp_placement_traits_of(cfg->placement)->branches_per_sub_block;
}

size_t vp_config_layer_of(const vp_config *cfg, size_t k)
{
    if (cfg->mlp_only)
        return k == 0 ? 0 : k - 1;
    return vp_sub_block_layer(cfg->placement, k);
}

vp_part vp_config_part_of(const vp_config *cfg, size_t k)
{
    if (cfg->mlp_only)
        return k == 0 ? VP_PART_EMBEDDING : VP_PART_MLP;
    return vp_sub_block_part(cfg->placement, k);
}

double vp_config_gain(const vp_config *cfg, size_t k)
{
    return cfg->gains ? cfg->gains[k - 1] : cfg->gain;
}

static int is_nonnegative(double x)
{
    return isfinite(x) && x >= 0.0;
}

vp_status vp_config_check(const vp_config *cfg, vp_error *err)
{
    if ((unsigned)cfg->placement >= VP_PLACEMENT_COUNT)
        return vp_fail(err, VP_EINVAL, "placement %d is not one of the %d placements",
                       (int)cfg->placement, VP_PLACEMENT_COUNT);
    if (cfg->layers < 1 || cfg->layers > VP_MAX_LAYERS)
        return vp_fail(err, VP_EINVAL, "layers is %zu; it must be from 1 to %u", cfg->layers,
                       VP_MAX_LAYERS);
    /* MLP-only layers have one branch: nothing is left to sum in a sub-block */
    if (cfg->mlp_only && vp_placement_traits_of(cfg->placement)->branches_per_sub_block > 1)
        return vp_fail(err, VP_EINVAL,
                       "a parallel layer of an MLP alone is a pre-norm layer: "
                       "use pre-norm with MLP-only blocks");
    if (!is_nonnegative(cfg->gain))
        return vp_fail(err, VP_EINVAL, "gain is %g; it must be a finite number >= 0", cfg->gain);
    if (cfg->gains) {
        size_t k_total = vp_config_sub_blocks(cfg);
        if (cfg->n_gains != k_total)
            return vp_fail(err, VP_EINVAL,
                           "%zu gains given, but %zu layers of %s have %zu sub-blocks",
                           cfg->n_gains, cfg->layers, vp_placement_name(cfg->placement), k_total);
        for (size_t i = 0; i < cfg->n_gains; i++)
            if (!is_nonnegative(cfg->gains[i]))
                return vp_fail(err, VP_EINVAL,
                               "the gain of sub-block %zu is %g; it must be a finite number >= 0",
                               i + 1, cfg->gains[i]);
    }
    if (!is_nonnegative(cfg->gamma))
        return vp_fail(err, VP_EINVAL, "gamma is %g; it must be a finite number >= 0", cfg->gamma);
    if (!(isfinite(cfg->alpha) && cfg->alpha > 0.0))
        return vp_fail(err, VP_EINVAL, "alpha is %g; it must be a finite number > 0", cfg->alpha);
    if (!is_nonnegative(cfg->beta))
        return vp_fail(err, VP_EINVAL, "beta is %g; it must be a finite number >= 0", cfg->beta);
    if (!(isfinite(cfg->embedding_var) && cfg->embedding_var > 0.0))
        return vp_fail(err, VP_EINVAL, "embedding variance is %g; it must be a finite number > 0",
                       cfg->embedding_var);
    if ((unsigned)cfg->final_norm > VP_FINAL_NORM_NO)
        return vp_fail(err, VP_EINVAL, "final norm is %d; it must be default, yes or no",
                       (int)cfg->final_norm);
    return VP_OK;
}

int vp_config_has_final_norm(const vp_config *cfg)
{
    switch (cfg->final_norm) {
    case VP_FINAL_NORM_YES: return 1;
    case VP_FINAL_NORM_NO: return 0;
    case VP_FINAL_NORM_DEFAULT: break;
    }
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    return t ? t->final_norm : 0;
}
