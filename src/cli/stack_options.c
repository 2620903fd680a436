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
