/* The option parser: the input split at NUL bytes is argv[1..] (argv[0] is
 * "varprof"), then cli_parse and the typed readers of the command's options
 * (read_stack_options, read_sampling_options, read_forward_options, and the
 * choices and sizes profile_cmd.c reads); never an engine. The usage errors
 * the CLI prints go to /dev/null unless FUZZ_VERBOSE is set. */
#include <math.h>

#include "cli/commands.h"
#include "fuzz_common.h"
#include "varprof/placement.h"

#define MAX_ARGS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_choices(const cli_args *args)
{
    static const char *const formats[] = {"text", "csv", "json", NULL};
    static const char *const engines[] = {"closed", "mc", "forward", "all", NULL};
    static const char *const blocks[] = {"attn-mlp", "mlp", NULL};
    static const char *const quantities[] = {"all", "stream", "update", "share", NULL};
    static const char *const figure_formats[] = {"svg", "png", "pdf", NULL};
    int which = -1;
    if (cli_choice(args, OPT_FORMAT, formats, &which) == EXIT_OK && args->given[OPT_FORMAT])
        FUZZ_CHECK(which >= 0 && which < 3);
    (void)cli_choice(args, OPT_ENGINE, engines, &which);
    (void)cli_choice(args, OPT_BLOCK, blocks, &which);
    (void)cli_choice(args, OPT_QUANTITY, quantities, &which);
    (void)cli_choice(args, OPT_FIGURE_FORMAT, figure_formats, &which);
    size_t every = 1;
    if (cli_size(args, OPT_EVERY, 1, 2 * (size_t)VP_MAX_LAYERS, &every) == EXIT_OK)
        FUZZ_CHECK(every >= 1 && every <= 2 * (size_t)VP_MAX_LAYERS);
    if (args->given[OPT_PLACEMENT]) {
        vp_placement p;
        vp_error err;
        if (vp_placement_parse(args->value[OPT_PLACEMENT], &p, &err) == VP_OK)
            FUZZ_CHECK((unsigned)p < VP_PLACEMENT_COUNT);
    }
}

static void read_typed(const cli_args *args)
{
    read_choices(args);
    if (args->command & (CMD_PROFILE | CMD_TABLE)) {
        vp_config cfg = {.placement = VP_PRE_NORM};
        if (read_stack_options(args, VP_DEFAULT_LAYERS, &cfg) == EXIT_OK) {
            vp_error err;
            FUZZ_CHECK(vp_config_check(&cfg, &err) == VP_OK);
        }
    }
    if (args->command & CMD_PROFILE) {
        vp_mc_options mc;
        if (read_sampling_options(args, &mc) == EXIT_OK) {
            FUZZ_CHECK(mc.width >= 1 && mc.width <= VP_MC_MAX_WIDTH);
            FUZZ_CHECK(mc.trials >= 2 && mc.trials <= VP_MC_MAX_TRIALS);
            FUZZ_CHECK(mc.threads >= 1 && mc.threads <= VP_MC_MAX_THREADS);
            FUZZ_CHECK(mc.eps > 0.0 && mc.eps < 1.0);
        }
        vp_forward_options fw;
        if (read_forward_options(args, &fw) == EXIT_OK) {
            FUZZ_CHECK(fw.width >= 1 && fw.width <= VP_FORWARD_MAX_WIDTH);
            FUZZ_CHECK(fw.heads >= 1 && fw.width % fw.heads == 0);
            FUZZ_CHECK(fw.ffn_mult >= 1 && fw.ffn_mult <= VP_FORWARD_MAX_FFN_MULT);
            FUZZ_CHECK(fw.vocab >= 1 && fw.vocab <= VP_FORWARD_MAX_VOCAB);
            FUZZ_CHECK(fw.batch >= 1 && fw.batch <= VP_FORWARD_MAX_BATCH);
            FUZZ_CHECK(fw.tokens >= 1 && fw.tokens <= VP_FORWARD_MAX_TOKENS);
            FUZZ_CHECK(fw.threads >= 1 && fw.threads <= VP_MC_MAX_THREADS);
            FUZZ_CHECK(fw.eps > 0.0 && fw.eps < 1.0);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet_stderr();
    /* one copy, NUL-terminated, cut at each NUL into the arguments (a final NUL
     * ends the last one; "" is no argument, "\0" one empty argument) */
    char *buffer = fuzz_string(data, size);
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"varprof";
    for (size_t start = 0; start < size && argc <= MAX_ARGS;) {
        argv[argc++] = buffer + start;
        start += strlen(buffer + start) + 1;
    }
    argv[argc] = NULL;

    cli_args args;
    if (cli_parse(argc, argv, &args) == EXIT_OK) {
        FUZZ_CHECK(args.command_name != NULL);
        for (int i = 0; i < OPT_COUNT; i++) {
            FUZZ_CHECK(args.given[i] == 0 || args.given[i] == 1);
            FUZZ_CHECK(args.value[i] == NULL || args.given[i]);
            (void)cli_option_name((option_id)i);
        }
        read_typed(&args);
    }
    free(buffer);
    return 0;
}
