/* vp_mc_header: the Monte Carlo profile's header, for a writer to head a run with. */
#include "varprof/mc.h"

#include "mc/mc_internal.h"

vp_status vp_mc_header(vp_profile *out, const vp_config *cfg, const vp_mc_options *options)
{
    if (!out || !cfg || !options)
        return VP_EINVAL;
    mc_set_header(out, cfg, options);
    out->sub_blocks = vp_config_sub_blocks(cfg);
    return VP_OK;
}
