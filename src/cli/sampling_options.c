#include <stdint.h>
#include <unistd.h>

#include "commands.h"

int read_sampling_options(const cli_args *args, vp_mc_options *mc)
{
    static const char *const norms[] = {"layernorm", "rmsnorm", NULL};
    static const char *const methods[] = {"reduced", "full", NULL};
    vp_mc_options_init(mc);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    mc->threads = cores >= 1 ? (size_t)cores : 1;
    if (mc->threads > VP_MC_MAX_THREADS)
        mc->threads = VP_MC_MAX_THREADS;
    int norm = 0, method = 0, rc;
    size_t seed = (size_t)mc->seed;
    if ((rc = cli_choice(args, OPT_NORM, norms, &norm)) != EXIT_OK ||
        (rc = cli_choice(args, OPT_METHOD, methods, &method)) != EXIT_OK)
        return rc;
    mc->norm = norm == 1 ? VP_NORM_RMSNORM : VP_NORM_LAYERNORM;
    mc->method = method == 1 ? VP_MC_FULL : VP_MC_REDUCED;
    const size_t min_width = mc->norm == VP_NORM_LAYERNORM ? 2 : 1;
    if ((rc = cli_size(args, OPT_WIDTH, min_width, VP_MC_MAX_WIDTH, &mc->width)) != EXIT_OK ||
        (rc = cli_size(args, OPT_TRIALS, 2, VP_MC_MAX_TRIALS, &mc->trials)) != EXIT_OK ||
        (rc = cli_size(args, OPT_THREADS, 1, VP_MC_MAX_THREADS, &mc->threads)) != EXIT_OK ||
        (rc = cli_size(args, OPT_SEED, 0, SIZE_MAX, &seed)) != EXIT_OK)
        return rc;
    mc->seed = seed;
    return EXIT_OK;
}
