/* config.json's activation name, as transformers' ACT2FN spells it, to a
 * two-matrix MLP (the one map gpt2, opt, starcoder2 and falcon share) or
 * to Gemma's gated one (gemma2's and gemma3_text's). */
#include <string.h>

#include "hf_families.h"

vp_status hf_two_matrix_mlp(hf_json *c, const char *key, const char *fallback,
                            vp_hf_architecture *a)
{
    static const struct {
        const char *hf;
        vp_mlp mlp;
    } acts[] = {{"gelu_new", VP_MLP_GELU_TANH},
                {"gelu_pytorch_tanh", VP_MLP_GELU_TANH},
                {"gelu", VP_MLP_GELU},
                {"relu", VP_MLP_RELU}};
    const char *act = NULL;
    const vp_status s = hf_text(c, key, fallback, &act);
    if (s != VP_OK)
        return s;
    for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
        if (strcmp(act, acts[i].hf) == 0) {
            a->mlp = acts[i].mlp;
            return VP_OK;
        }
    return vp_fail(c->err, VP_EFORMAT,
                   "config.json: '%s' '%.40s' is not one varprof runs (gelu_new, "
                   "gelu_pytorch_tanh, gelu, relu)",
                   key, act);
}

vp_status hf_gemma_mlp(hf_json *c, vp_hf_architecture *a)
{
    const char *act = NULL;
    const vp_status s = hf_text(c, "hidden_activation", "gelu_pytorch_tanh", &act);
    if (s != VP_OK)
        return s;
    if (strcmp(act, "gelu_pytorch_tanh") == 0)
        a->mlp = VP_MLP_GEGLU_TANH;
    else if (strcmp(act, "gelu") == 0)
        a->mlp = VP_MLP_GEGLU;
    else
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'hidden_activation' '%.40s': varprof reads gelu_pytorch_tanh "
                       "and gelu",
                       act);
    return VP_OK;
}
