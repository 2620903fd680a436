#include "commands.h"

int read_stack_options(const cli_args *args, size_t default_layers, vp_config *cfg)
{
    size_t layers = default_layers;
    int rc = cli_size(args, OPT_LAYERS, 1, VP_MAX_LAYERS, &layers);
    if (rc != EXIT_OK)
        return rc;
    vp_config_init(cfg, cfg->placement, layers);
    if ((rc = cli_double(args, OPT_GAIN, 0.0, 0, &cfg->gain)) != EXIT_OK ||
        (rc = cli_double(args, OPT_GAMMA, 0.0, 0, &cfg->gamma)) != EXIT_OK ||
        (rc = cli_double(args, OPT_ALPHA, 0.0, 1, &cfg->alpha)) != EXIT_OK ||
        (rc = cli_double(args, OPT_BETA, 0.0, 0, &cfg->beta)) != EXIT_OK ||
        (rc = cli_double(args, OPT_EMBEDDING_VAR, 0.0, 1, &cfg->embedding_var)) != EXIT_OK)
        return rc;
    return EXIT_OK;
}
