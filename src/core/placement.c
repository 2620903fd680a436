/* The placement table: each placement's norms, residual scale and branches. */
#include "varprof/placement.h"

#include <stdio.h>
#include <string.h>

#include "core/name_table.h"

_Static_assert(VP_PLACEMENT_COUNT == 7, "a new placement needs a row in placements "
                                        "(core/placement.c) and its engines' arithmetic");

/* One row per placement: every fact about it, read by every engine and writer. */
static const vp_placement_traits placements[VP_PLACEMENT_COUNT] = {
    [VP_POST_LN] = {.name = "post-ln",
                    .display_name = "Post-LN",
                    .formula = "x <- N(x + f(x))",
                    .norm_stream = 1,
                    .branches_per_sub_block = 1,
                    .sub_blocks_per_layer = 2},
    [VP_PRE_NORM] = {.name = "pre-norm",
                     .display_name = "Pre-norm",
                     .formula = "x <- x + f(N(x))",
                     .norm_in = 1,
                     .branches_per_sub_block = 1,
                     .sub_blocks_per_layer = 2,
                     .final_norm = 1},
    [VP_SANDWICH] = {.name = "sandwich",
                     .display_name = "Sandwich",
                     .formula = "x <- x + gamma * N2(f(N1(x)))",
                     .norm_in = 1,
                     .norm_out = 1,
                     .branches_per_sub_block = 1,
                     .sub_blocks_per_layer = 2,
                     .final_norm = 1},
    [VP_OUTPUT_NORM] = {.name = "output-norm",
                        .display_name = "Output norm",
                        .formula = "x <- x + gamma * N(f(x))",
                        .norm_out = 1,
                        .branches_per_sub_block = 1,
                        .sub_blocks_per_layer = 2,
                        .final_norm = 1},
    [VP_DEEPNORM] = {.name = "deepnorm",
                     .display_name = "DeepNorm",
                     .formula = "x <- N(alpha * x + f(x))",
                     .norm_stream = 1,
                     .residual_alpha = 1,
                     .branch_beta = 1,
                     .branches_per_sub_block = 1,
                     .sub_blocks_per_layer = 2},
    [VP_PARALLEL] = {.name = "parallel",
                     .display_name = "Parallel",
                     .formula = "x <- x + f_attn(N(x)) + f_mlp(N(x))",
                     .norm_in = 1,
                     .branches_per_sub_block = 2,
                     .sub_blocks_per_layer = 1,
                     .final_norm = 1},
    [VP_NO_NORM] = {.name = "none",
                    .display_name = "None",
                    .formula = "x <- x + f(x)",
                    .branches_per_sub_block = 1,
                    .sub_blocks_per_layer = 2},
};

static const struct {
    const char *alias;
    vp_placement placement;
} aliases[] = {
    {"pre-ln", VP_PRE_NORM},
    {"peri-norm", VP_SANDWICH},
};

const vp_placement_traits *vp_placement_traits_of(vp_placement placement)
{
    return (unsigned)placement < VP_PLACEMENT_COUNT ? &placements[placement] : NULL;
}

const char *vp_placement_name(vp_placement placement)
{
    return name_table_name(NAME_ROWS(placements), (int)placement);
}

const char *vp_placement_display_name(vp_placement placement)
{
    return (unsigned)placement < VP_PLACEMENT_COUNT ? placements[placement].display_name : NULL;
}

const char *vp_placement_formula(vp_placement placement)
{
    return (unsigned)placement < VP_PLACEMENT_COUNT ? placements[placement].formula : NULL;
}

/* Appends to buf as snprintf would, never past size. */
static void append(char *buf, size_t size, const char *a, const char *b)
{
    const size_t used = strlen(buf);
    if (used + 1 < size)
        snprintf(buf + used, size - used, "%s%s", a, b);
}

/* "post-ln, pre-norm (or pre-ln), ...": every name in the table, with its aliases. */
static void list_names(char *buf, size_t size)
{
    buf[0] = '\0';
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++) {
        append(buf, size, p ? ", " : "", placements[p].name);
        for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
            if (aliases[i].placement == (vp_placement)p) {
                append(buf, size, " (or ", aliases[i].alias);
                append(buf, size, ")", "");
            }
    }
}

vp_status vp_placement_parse(const char *name, vp_placement *out, vp_error *err)
{
    if (!name || !out)
        return vp_fail(err, VP_EINVAL, "no placement name given");
    const int p = name_table_find(NAME_ROWS(placements), name);
    if (p >= 0) {
        *out = (vp_placement)p;
        return VP_OK;
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
    char valid[256];
    list_names(valid, sizeof valid);
    return vp_fail(err, VP_EINVAL, "unknown placement '%s'; valid: %s, all", name, valid);
}

size_t vp_sub_blocks_per_layer(vp_placement placement)
{
    return (unsigned)placement < VP_PLACEMENT_COUNT ? placements[placement].sub_blocks_per_layer
                                                    : 2;
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
    /* branches summed in one sub-block make a block, neither attn nor mlp */
    const vp_placement_traits *traits = vp_placement_traits_of(placement);
    if (traits && traits->branches_per_sub_block > 1)
        return VP_PART_BLOCK;
    return (k % 2 == 1) ? VP_PART_ATTN : VP_PART_MLP;
}

const char *vp_part_name(vp_part part)
{
    static const char *const names[] = {[VP_PART_EMBEDDING] = "embedding",
                                        [VP_PART_ATTN] = "attn",
                                        [VP_PART_MLP] = "mlp",
                                        [VP_PART_BLOCK] = "block"};
    _Static_assert(sizeof names / sizeof *names == VP_PART_BLOCK + 1,
                   "a new vp_part needs a name in vp_part_name (core/placement.c)");
    return name_table_name(NAME_LIST(names), (int)part);
}
