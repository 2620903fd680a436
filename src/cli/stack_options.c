/* The stack's options: its layers and placements, and the scales checked against the placement table. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

int read_stack_at(const cli_args *args, size_t layers, double gain, vp_config *cfg)
{
    vp_config_init(cfg, cfg->placement, layers);
    cfg->gain = gain;
    int rc;
    if ((rc = cli_double(args, OPT_GAMMA, 0.0, 0, &cfg->gamma)) != EXIT_OK ||
        (rc = cli_double(args, OPT_ALPHA, 0.0, 1, &cfg->alpha)) != EXIT_OK ||
        (rc = cli_double(args, OPT_BETA, 0.0, 0, &cfg->beta)) != EXIT_OK ||
        (rc = cli_double(args, OPT_EMBEDDING_VAR, 0.0, 1, &cfg->embedding_var)) != EXIT_OK)
        return rc;
    cfg->grad = args->given[OPT_GRAD];
    if (args->given[OPT_FINAL_NORM]) {
        /* in the order of vp_final_norm after its default */
        static const char *const answers[] = {"yes", "no", NULL};
        int answer = 0;
        if ((rc = cli_choice(args, OPT_FINAL_NORM, answers, &answer)) != EXIT_OK)
            return rc;
        if (!cfg->grad)
            return cli_usage_error("--final-norm changes only the backward half; add --grad");
        cfg->final_norm = answer == 0 ? VP_FINAL_NORM_YES : VP_FINAL_NORM_NO;
    }
    return EXIT_OK;
}

int read_stack_options(const cli_args *args, size_t default_layers, vp_config *cfg)
{
    /* the profile sweeps lists; here one stack is asked for */
    static const option_id single[] = {OPT_LAYERS, OPT_GAIN};
    for (size_t i = 0; i < sizeof single / sizeof *single; i++)
        if (args->given[single[i]] && strchr(args->value[single[i]], ','))
            return cli_usage_error("%s: '%s' is a list, but 'varprof %s' takes one value; lists "
                                   "sweep the profile",
                                   cli_option_name(single[i]), args->value[single[i]],
                                   args->command_name ? args->command_name : "profile");
    size_t layers = default_layers;
    double gain = 1.0;
    int rc = cli_size(args, OPT_LAYERS, 1, VP_MAX_LAYERS, &layers);
    if (rc != EXIT_OK || (rc = cli_double(args, OPT_GAIN, 0.0, 0, &gain)) != EXIT_OK)
        return rc;
    return read_stack_at(args, layers, gain, cfg);
}

/* A scale option and the part of a placement it scales, read from the
 * placement table's traits, so that the rule is the table's. */
static const struct {
    option_id id;
    size_t trait; /* offset of the int flag in vp_placement_traits */
    const char *part;
} scales[] = {
    {OPT_GAMMA, offsetof(vp_placement_traits, norm_out),
     "the scale of a norm on a branch's output"},
    {OPT_ALPHA, offsetof(vp_placement_traits, residual_alpha), "DeepNorm's residual scale alpha"},
    {OPT_BETA, offsetof(vp_placement_traits, branch_beta), "DeepNet's init scale beta"},
};

static int has_trait(vp_placement p, size_t trait)
{
    return *(const int *)((const char *)vp_placement_traits_of(p) + trait);
}

int check_scales_apply(const cli_args *args, const vp_placement *placements, size_t n)
{
    for (size_t s = 0; s < sizeof scales / sizeof *scales; s++) {
        if (!args->given[scales[s].id])
            continue;
        int applies = 0;
        for (size_t i = 0; i < n; i++)
            applies |= has_trait(placements[i], scales[s].trait);
        if (applies)
            continue;
        char chosen[128] = "", having[128] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(chosen + strlen(chosen), sizeof chosen - strlen(chosen), "%s%s", i ? ", " : "",
                     vp_placement_name(placements[i]));
        for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
            if (has_trait((vp_placement)p, scales[s].trait))
                snprintf(having + strlen(having), sizeof having - strlen(having), "%s%s",
                         having[0] ? ", " : "", vp_placement_name((vp_placement)p));
        return cli_usage_error("%s sets %s, which %s%s %s, so it would change nothing; it "
                               "applies to %s",
                               cli_option_name(scales[s].id), scales[s].part,
                               n == 1 ? "" : "none of ", chosen, n == 1 ? "does not have" : "has",
                               having);
    }
    return EXIT_OK;
}
