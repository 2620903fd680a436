/* The output file: written through a temporary, removed on a signal. */
#include "output_file.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"
#include "varprof/cleanup.h"

/* Removes the temporary files, then dies of the signal itself, so that the
 * parent sees a death by signal (a shell's loop stops on SIGINT, and `$?` is
 * 128 + the signal: 130, 141, 143) rather than an exit code that mimics one. */
static void on_signal(int sig)
{
    vp_cleanup_remove_all();
    (void)signal(sig, SIG_DFL); // in a handler there is no one to tell of a failure
    sigset_t just_this;
    sigemptyset(&just_this);
    sigaddset(&just_this, sig);
    sigprocmask(SIG_UNBLOCK, &just_this, NULL);
    (void)raise(sig);
    // cppcheck-suppress unreachableCode ; cppcheck takes raise() as noreturn; it is not
    _exit(128 + sig); // not reached when the default action ends the process
}

static void remove_at_exit(void)
{
    vp_cleanup_remove_all();
}

void output_watch_signals(void)
{
    static const int endings[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < sizeof endings / sizeof *endings; i++)
        sigaddset(&action.sa_mask, endings[i]); // one handler at a time
    for (size_t i = 0; i < sizeof endings / sizeof *endings; i++) {
        struct sigaction before;
        // a signal ignored on entry stays ignored (nohup, a background job);
        // an ignored SIGPIPE becomes EPIPE, which output_reader_gone tells apart
        if (sigaction(endings[i], NULL, &before) == 0 && before.sa_handler == SIG_IGN)
            continue;
        (void)sigaction(endings[i], &action, NULL); // fails only for a bad signal number
    }
    // every return path: nothing registered outlives the run; fails only past 32 handlers
    (void)atexit(remove_at_exit);
}

int output_reader_gone(void)
{
    struct stat st;
    if (fstat(STDOUT_FILENO, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
        return 0;
    // a pipe's write end polls POLLERR once no reader is left; a socket, POLLHUP
    struct pollfd fd = {.fd = STDOUT_FILENO, .events = POLLOUT};
    return poll(&fd, 1, 0) == 1 && (fd.revents & (POLLERR | POLLHUP));
}

int path_folder(const char *path, char *folder, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return snprintf(folder, size, ".") < (int)size;
    if (slash == path)
        return snprintf(folder, size, "/") < (int)size;
    return snprintf(folder, size, "%.*s", (int)(slash - path), path) < (int)size;
}

/* A file that cannot be made for its folder (missing, not a folder, not
 * writable) names the folder, not the temporary file tried beside it.
 * EXIT_RUNTIME after saying so; EXIT_OK where the folder is not the cause. */
static int refuse_folder(const char *path)
{
    char folder[4096];
    struct stat st;
    if (!path_folder(path, folder, sizeof folder))
        return EXIT_OK;
    if (stat(folder, &st) != 0)
        return cli_runtime_error("cannot write '%s': its folder '%s': %s", path, folder,
                                 strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cli_runtime_error("cannot write '%s': '%s' is not a folder", path, folder);
    if (access(folder, W_OK | X_OK) != 0)
        return cli_runtime_error("cannot write '%s': its folder '%s': %s", path, folder,
                                 strerror(errno));
    return EXIT_OK;
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
    if (status == VP_EIO && refuse_folder(path) != EXIT_OK)
        return EXIT_RUNTIME;
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
