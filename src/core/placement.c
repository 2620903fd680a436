#include "varprof/placement.h"

#include <string.h>

static const struct {
    const char *name;
    const char *formula;
} placements[VP_PLACEMENT_COUNT] = {
    [VP_POST_LN] = {"post-ln", "x <- N(x + f(x))"},
    [VP_PRE_NORM] = {"pre-norm", "x <- x + f(N(x))"},
    [VP_SANDWICH] = {"sandwich", "x <- x + gamma * N2(f(N1(x)))"},
    [VP_OUTPUT_NORM] = {"output-norm", "x <- x + gamma * N(f(x))"},
    [VP_DEEPNORM] = {"deepnorm", "x <- N(alpha * x + f(x))"},
    [VP_PARALLEL] = {"parallel", "x <- x + f_attn(N(x)) + f_mlp(N(x))"},
    [VP_NO_NORM] = {"none", "x <- x + f(x)"},
};

static const struct {
    const char *alias;
    vp_placement placement;
} aliases[] = {
    {"pre-ln", VP_PRE_NORM},
    {"peri-norm", VP_SANDWICH},
};

const char *vp_placement_name(vp_placement placement)
{
    return (unsigned)placement < VP_PLACEMENT_COUNT ? placements[placement].name : NULL;
}

const char *vp_placement_formula(vp_placement placement)
{
    return (unsigned)placement < VP_PLACEMENT_COUNT ? placements[placement].formula : NULL;
}

vp_status vp_placement_parse(const char *name, vp_placement *out, vp_error *err)
{
    if (!name || !out)
        return vp_fail(err, VP_EINVAL, "no placement name given");
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++) {
        if (strcmp(name, placements[p].name) == 0) {
            *out = (vp_placement)p;
            return VP_OK;
        }
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strcmp(name, aliases[i].alias) == 0) {
            *out = aliases[i].placement;
            return VP_OK;
        }
    }
    if (strcmp(name, "post-norm") == 0)
        return vp_fail(err, VP_EINVAL,
                       "'post-norm' is ambiguous: it means Post-LN, x <- N(x + f(x)), in the "
                       "original Transformer and BERT, and OLMo 2's output norm, "
                       "x <- x + N(f(x)), in OLMo 2's papers; say 'post-ln' or 'output-norm'");
    return vp_fail(err, VP_EINVAL,
                   "unknown placement '%s'; valid: post-ln, pre-norm (or pre-ln), sandwich (or "
                   "peri-norm), output-norm, deepnorm, parallel, none, all",
                   name);
}

size_t vp_sub_blocks_per_layer(vp_placement placement)
{
    return placement == VP_PARALLEL ? 1 : 2;
}

size_t vp_sub_block_count(vp_placement placement, size_t layers)
{
    return layers * vp_sub_blocks_per_layer(placement);
}

size_t vp_sub_block_layer(vp_placement placement, size_t k)
{
    return k == 0 ? 0 : (k - 1) / vp_sub_blocks_per_layer(placement);
}

vp_part vp_sub_block_part(vp_placement placement, size_t k)
{
    if (k == 0)
        return VP_PART_EMBEDDING;
    if (placement == VP_PARALLEL)
        return VP_PART_BLOCK;
    return (k % 2 == 1) ? VP_PART_ATTN : VP_PART_MLP;
}

const char *vp_part_name(vp_part part)
{
    switch (part) {
    case VP_PART_EMBEDDING: return "embedding";
    case VP_PART_ATTN: return "attn";
    case VP_PART_MLP: return "mlp";
    case VP_PART_BLOCK: return "block";
    }
    return NULL;
}
