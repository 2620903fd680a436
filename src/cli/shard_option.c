/* --shard K/N: the part of a sweep this process runs (varprof/shard.h). */
#include "shard_option.h"

#include "varprof/shard.h"

int cli_shard_range(const cli_args *args, const double *costs, size_t n, size_t *first, size_t *end)
{
    *first = 0;
    *end = n;
    if (!args->given[OPT_SHARD])
        return EXIT_OK;
    vp_shard shard;
    vp_error err;
    if (vp_shard_parse(args->value[OPT_SHARD], &shard, &err) != VP_OK)
        return cli_usage_error("--shard: %s", err.message);
    if (vp_shard_range(costs, n, shard, first, end, &err) != VP_OK)
        return cli_usage_error("--shard %s: %s", args->value[OPT_SHARD], err.message);
    return EXIT_OK;
}
