/* varprof: the program. Parses the command line and hands it to a command. */
#include <stdio.h>

#include "commands.h"
#include "output_file.h"
#include "varprof/isa.h"
#include "varprof/version.h"

int main(int argc, char **argv)
{
    output_watch_signals();
    cli_args args;
    int rc = cli_parse(argc, argv, &args);
    if (rc != EXIT_OK)
        return rc;
    if (args.given[OPT_HELP]) {
        cli_print_help(args.command_given ? args.command : 0, args.given[OPT_WIDE]);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
    }
    if (args.given[OPT_VERSION]) {
        printf("varprof %s\n", VP_VERSION);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
    }
    /* the SIMD kernels' instruction set, once: a bad $VARPROF_ISA is said here */
    vp_isa isa;
    vp_error err;
    if (vp_isa_select(&isa, &err) != VP_OK)
        return cli_usage_error("%s", err.message);
    switch (args.command) {
    case CMD_TABLE: return run_table(&args);
    case CMD_MODELS: return run_models(&args);
    case CMD_FIGURES: return run_figures(&args);
    case CMD_TRAIN: return run_train(&args);
    case CMD_MERGE: return run_merge(&args);
    default: return run_profile(&args);
    }
}
