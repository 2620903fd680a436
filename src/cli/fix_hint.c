/* The option that gets past a library refusal, in the command line's words. */
#include "fix_hint.h"

const char *cli_fix_hint(const vp_error *err)
{
    switch (err->fix) {
    case VP_FIX_METHOD_FULL: return "; add --method full";
    case VP_FIX_WIDTH_OR_LAYERS: return ": use a smaller --width or fewer --layers";
    case VP_FIX_WEIGHTS_DRAWN: return "; --weight-storage drawn stores no weight matrix";
    case VP_FIX_RECOMPUTE: return "; --activations recompute keeps each sub-block's input alone";
    case VP_FIX_SMALLER: return "; make it narrower, shallower or the batch smaller";
    default: return "";
    }
}
