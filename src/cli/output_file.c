#include "output_file.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "varprof/cleanup.h"

static void on_signal(int sig)
{
    vp_cleanup_remove_all();
    _exit(128 + sig);
}

void output_watch_signals(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
}

int output_open(output_file *out, const char *path, int force)
{
    memset(out, 0, sizeof *out);
    if (!path || strcmp(path, "-") == 0) {
        out->to_stdout = 1;
        out->stream = stdout;
        return EXIT_OK;
    }
    vp_error err;
    vp_status status = atomic_file_open(&out->file, path, force, &err);
    if (status != VP_OK)
        return cli_library_error(NULL, status, &err);
    out->stream = out->file.stream;
    return EXIT_OK;
}

void output_abort(output_file *out)
{
    if (!out->to_stdout)
        atomic_file_abort(&out->file);
    out->stream = NULL;
}

int output_commit(output_file *out)
{
    out->stream = NULL;
    if (out->to_stdout) {
        if (fflush(stdout) != 0 || ferror(stdout))
            return cli_runtime_error("cannot write to standard output: %s", strerror(errno));
        return EXIT_OK;
    }
    vp_error err;
    vp_status status = atomic_file_commit(&out->file, &err);
    return status == VP_OK ? EXIT_OK : cli_library_error(NULL, status, &err);
}
