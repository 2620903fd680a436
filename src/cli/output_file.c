#include "output_file.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    out->force = force;
    out->cleanup_slot = -1;
    if (!path || strcmp(path, "-") == 0) {
        out->stream = stdout;
        return EXIT_OK;
    }
    out->path = path;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return cli_runtime_error("cannot write %s: it is a directory", path);
        if (!S_ISREG(st.st_mode))
            return cli_runtime_error("cannot write %s: it is not a regular file (a device or "
                                     "a pipe is never replaced); write to standard output and "
                                     "redirect instead", path);
        if (!force)
            return cli_runtime_error("%s already exists; add --force to replace it", path);
    }
    size_t length = strlen(path);
    out->temp_path = malloc(length + sizeof ".tmp.XXXXXX");
    if (!out->temp_path)
        return cli_runtime_error("out of memory");
    memcpy(out->temp_path, path, length);
    memcpy(out->temp_path + length, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkstemp(out->temp_path);
    if (fd < 0) {
        int saved = errno;
        free(out->temp_path);
        out->temp_path = NULL;
        return cli_runtime_error("cannot write %s: %s", path, strerror(saved));
    }
    out->cleanup_slot = vp_cleanup_register(out->temp_path);
    fchmod(fd, 0644 & ~umask(umask(0))); /* mkstemp makes 0600; a result is for sharing */
    out->stream = fdopen(fd, "w");
    if (!out->stream) {
        close(fd);
        output_abort(out);
        return cli_runtime_error("cannot write %s: %s", path, strerror(errno));
    }
    return EXIT_OK;
}

static void forget_temp(output_file *out)
{
    vp_cleanup_unregister(out->cleanup_slot);
    out->cleanup_slot = -1;
    free(out->temp_path);
    out->temp_path = NULL;
}

void output_abort(output_file *out)
{
    if (out->stream && out->stream != stdout)
        (void)fclose(out->stream); /* abandoned: its write errors no longer matter */
    out->stream = NULL;
    if (out->temp_path) {
        unlink(out->temp_path);
        forget_temp(out);
    }
}

int output_commit(output_file *out)
{
    if (out->stream == stdout) {
        if (fflush(stdout) != 0 || ferror(stdout))
            return cli_runtime_error("cannot write to standard output: %s", strerror(errno));
        return EXIT_OK;
    }
    int failed = ferror(out->stream) || fflush(out->stream) != 0 ||
                 fsync(fileno(out->stream)) != 0;
    int saved = errno;
    if (fclose(out->stream) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    out->stream = NULL;
    if (failed) {
        output_abort(out);
        return cli_runtime_error("cannot write %s: %s", out->path, strerror(saved));
    }
    /* link() refuses to replace, so a file made meanwhile is not lost either */
    int moved = out->force ? rename(out->temp_path, out->path) : link(out->temp_path, out->path);
    saved = errno;
    if (moved != 0) {
        output_abort(out);
        if (saved == EEXIST)
            return cli_runtime_error("%s already exists; add --force to replace it", out->path);
        return cli_runtime_error("cannot write %s: %s", out->path, strerror(saved));
    }
    if (!out->force)
        unlink(out->temp_path);
    forget_temp(out);
    return EXIT_OK;
}
