/* The option that gets past a library refusal, in the command line's words. */
#ifndef VARPROF_CLI_FIX_HINT_H
#define VARPROF_CLI_FIX_HINT_H

#include "varprof/status.h"

/* The option that fixes what err->fix names, with the "; " or ": " that
 * joins it to the message, for the message to end with; "" where the
 * command line has no such option. Never NULL. */
const char *cli_fix_hint(const vp_error *err);

#endif
