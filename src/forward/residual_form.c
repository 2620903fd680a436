/* The residual form of a forward network (vp_residual): the placement's own, or a parallel
 * one with two norms, and its check. */
#include "forward/network.h"

vp_residual fw_residual_of(const vp_config *cfg, const vp_forward_options *o)
{
    const vp_placement_traits *p = vp_placement_traits_of(cfg->placement);
    if (o->residual == VP_RESIDUAL_SEQUENTIAL && p && p->branches_per_sub_block > 1)
        return VP_RESIDUAL_PARALLEL_SHARED_NORM;
    return o->residual;
}

vp_status fw_residual_check(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    const vp_status in_range = vp_residual_check(o->residual, err);
    if (in_range != VP_OK)
        return in_range;
    const vp_residual_traits *r = vp_residual_traits_of(o->residual);
    const vp_placement_traits *p = vp_placement_traits_of(cfg->placement);
    if (o->residual != VP_RESIDUAL_SEQUENTIAL && p &&
        (p->sub_blocks_per_layer != r->sub_blocks_per_layer || !p->norm_in))
        return vp_fail(err, VP_EINVAL,
                       "residual form %s with placement %s: a parallel form runs both branches "
                       "on the stream's norms in one sub-block a layer, which the parallel "
                       "placement alone lays out",
                       r->name, p->name);
    if (o->residual != VP_RESIDUAL_SEQUENTIAL && cfg->mlp_only)
        return vp_fail(err, VP_EINVAL,
                       "residual form %s with layers of MLPs alone: there is no attention "
                       "branch to run beside the MLP",
                       r->name);
    return VP_OK;
}
