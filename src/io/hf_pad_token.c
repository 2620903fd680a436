/* pad_token_id as transformers' nn.Embedding reads it: padding_idx, the
 * row its lookups give no gradient. */
#include <cjson/cJSON.h>
#include <math.h>

#include "hf_families.h"

vp_status hf_pad_token(hf_json *c, long fallback, vp_hf_architecture *a)
{
    const cJSON *v = hf_field(c, "pad_token_id");
    if (cJSON_IsNull(v) || (!v && fallback < 0))
        return VP_OK;
    const double vocab = (double)a->vocab;
    const double id = v ? v->valuedouble : (double)fallback;
    if (!v && id >= vocab) /* nn.Embedding refuses a padding_idx outside it */
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'pad_token_id' is absent, which is %ld for model_type "
                       "'%s', outside the vocabulary of %zu; give it (or null for none)",
                       fallback, a->model_type, a->vocab);
    if ((v && !cJSON_IsNumber(v)) || id != floor(id) || id < -vocab || id >= vocab)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'pad_token_id' must be a whole number from -%zu to %zu "
                       "(a negative id counts from the end of the vocabulary)",
                       a->vocab, a->vocab - 1);
    a->pad_token_id = (long)(id < 0 ? id + vocab : id);
    return VP_OK;
}
