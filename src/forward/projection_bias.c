/* The names of the bias settings: which projections carry a bias. */
#include <string.h>

#include "varprof/forward.h"

static const char *const bias_names[VP_BIAS_COUNT] = {"yes", "no", "qkv"};

const char *vp_bias_name(vp_bias bias)
{
    return (unsigned)bias < VP_BIAS_COUNT ? bias_names[bias] : NULL;
}

vp_status vp_bias_parse(const char *name, vp_bias *out, vp_error *err)
{
    for (int i = 0; i < VP_BIAS_COUNT; i++)
        if (strcmp(name, bias_names[i]) == 0) {
            *out = (vp_bias)i;
            return VP_OK;
        }
    return vp_fail(err, VP_EINVAL,
                   "bias '%s' is not one of: yes (every projection), no (none), qkv (the "
                   "attention's q, k and v alone)",
                   name);
}
