/* vp_forward_header: the forward pass's profile header, for a writer to head a run with. */
#include "varprof/forward.h"

#include "forward/network.h"

vp_status vp_forward_header(vp_profile *out, const vp_config *cfg,
                            const vp_forward_options *options)
{
    if (!out || !cfg || !options || options->width == 0)
        return VP_EINVAL;
    fw_set_header(out, cfg, options);
    out->sub_blocks = vp_config_sub_blocks(cfg);
    return VP_OK;
}
