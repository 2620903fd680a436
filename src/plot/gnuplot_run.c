/* gnuplot run on a figure: the script through a pipe, the figure into an
 * atomic file (sys/atomic_file.h) that is put in place only when it is whole. */
#include "sys/atomic_file.h"
#include "sys/signal_hold.h"
#include "varprof/cleanup.h"
#include "varprof/plot.h"
#include "plot/plot_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PATH_CAP 4096

const char *plot_gnuplot_program(void)
{
    const char *program = getenv("VARPROF_GNUPLOT");
    return program && *program ? program : "gnuplot";
}

/* Finds program as the shell would: a name with a slash as it is, else the
 * first executable file of that name on $PATH. */
static int find_program(const char *program, char *found, size_t size)
{
    if (strchr(program, '/')) {
        struct stat st;
        if (stat(program, &st) != 0 || !S_ISREG(st.st_mode) || access(program, X_OK) != 0)
            return 0;
        return snprintf(found, size, "%s", program) < (int)size;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        int n = snprintf(found, size, "%.*s/%s", (int)len, len ? path : ".", program);
        if (len == 0)
            n = snprintf(found, size, "./%s", program);
        struct stat st;
        if (n > 0 && (size_t)n < size && stat(found, &st) == 0 && S_ISREG(st.st_mode) &&
            access(found, X_OK) == 0)
            return 1;
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

/* Appends text to buf as one sh single-quoted word ('it'\''s'). */
static int append_shell_quoted(char *buf, size_t size, const char *text)
{
    size_t n = strlen(buf);
    if (n + 1 >= size)
        return 0;
    buf[n++] = '\'';
    for (const char *p = text; *p; p++) {
        const char *piece = *p == '\'' ? "'\\''" : NULL;
        size_t len = piece ? 4 : 1;
        if (n + len + 2 > size)
            return 0;
        if (piece)
            memcpy(buf + n, piece, len);
        else
            buf[n] = *p;
        n += len;
    }
    buf[n++] = '\'';
    buf[n] = '\0';
    return 1;
}

/* The last lines of what gnuplot printed, joined: "line 0: unknown option". */
static void read_message(int fd, char *msg, size_t size)
{
    char buf[2048];
    msg[0] = '\0';
    off_t end = lseek(fd, 0, SEEK_END);
    if (end < 0)
        return;
    off_t start = end > (off_t)(sizeof buf - 1) ? end - (off_t)(sizeof buf - 1) : 0;
    ssize_t got = pread(fd, buf, sizeof buf - 1, start);
    if (got <= 0)
        return;
    buf[got] = '\0';
    // the last three lines with text in them, caret lines left out
    const char *lines[3] = {NULL, NULL, NULL};
    size_t count = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        while (*line == ' ' || *line == '\t')
            line++;
        size_t len = strlen(line);
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\r' || line[len - 1] == '\t'))
            line[--len] = '\0';
        if (len == 0 || strspn(line, "^ ") == len)
            continue;
        lines[0] = lines[1];
        lines[1] = lines[2];
        lines[2] = line;
        count++;
    }
    size_t used = 0;
    for (size_t i = count >= 3 ? 0 : 3 - count; i < 3; i++) {
        int n = snprintf(msg + used, size - used, "%s%s", used ? " | " : "", lines[i]);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
    // what remains must not carry control characters into a one-line message
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
}

/* Runs command with the script on its standard input; returns the wait status,
 * or -1 when the pipe could not be opened. SIGPIPE is held back meanwhile and
 * a SIGPIPE this caused is discarded, so a gnuplot that quits early cannot
 * kill the calling program. */
static int pipe_script(const char *command, const vp_figure *figure, vp_plot_format format,
                       const char *output, const vp_plot_target *target, vp_status *script_status,
                       vp_error *err)
{
    // popen's child must not inherit unwritten buffers; flushed before SIGPIPE
    // is held back, so that a closed standard output ends the program as it
    // would anywhere else (a stream that fails keeps its error indicator,
    // which its writer checks)
    (void)fflush(NULL);
    sigset_t pipe_set, old_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &pipe_set, &old_set);
    sigpending(&pending);
    const int was_pending = sigismember(&pending, SIGPIPE);

    int wait_status = -1;
    // NOLINTNEXTLINE(cert-env33-c) a shell for the redirections; every path in it is shell-quoted
    FILE *pipe = popen(command, "w");
    if (pipe) {
        *script_status = plot_write_script_as(pipe, figure, format, output, target, err);
        wait_status = pclose(pipe);
    }

    sigpending(&pending);
    if (!was_pending && sigismember(&pending, SIGPIPE)) {
        const struct timespec now = {0, 0};
        sigtimedwait(&pipe_set, NULL, &now);
    }
    sigprocmask(SIG_SETMASK, &old_set, NULL);
    return wait_status;
}

static vp_status copy_out(const char *path, FILE *to, vp_error *err)
{
    FILE *from = fopen(path, "rb");
    if (!from)
        return vp_fail(err, VP_EIO, "cannot read gnuplot's text plot: %s", strerror(errno));
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, from)) > 0)
        if (fwrite(buf, 1, n, to) != n)
            break;
    const int failed = ferror(from) || ferror(to) || fflush(to) != 0;
    (void)fclose(from); /* read-only: nothing to lose */
    return failed ? vp_fail(err, VP_EIO, "cannot write the text plot") : VP_OK;
}

/* A scratch file in tmpdir ("tmpdir/varprof-NAME-XXXXXX", mode 0600: it is
 * read back, never shared), registered for removal on a signal. Returns its
 * descriptor, or -1 with err filled. */
static int make_scratch(char *path, size_t size, const char *tmpdir, const char *name, int *slot,
                        vp_error *err)
{
    if (snprintf(path, size, "%s/varprof-%s-XXXXXX", tmpdir, name) >= (int)size) {
        vp_fail(err, VP_EIO, "TMPDIR is too long");
        return -1;
    }
    // made and registered as one step: a signal between the two would leave it
    sigset_t held;
    signals_hold(&held);
    int fd = mkstemp(path);
    const int saved = errno;
    if (fd >= 0)
        *slot = vp_cleanup_register(path);
    signals_release(&held);
    if (fd < 0) {
        vp_fail(err, VP_EIO, "cannot make a temporary file in '%s': %s", tmpdir, strerror(saved));
        return -1;
    }
    return fd;
}

static void remove_scratch(const char *path, int slot)
{
    unlink(path);
    vp_cleanup_unregister(slot);
}

/* The format target's path asks for, the figure and the size checked, the
 * file in the way refused, and gnuplot found (its path in found). */
static vp_status plot_prepare(const vp_figure *figure, const vp_plot_target *target,
                              vp_plot_format *format, char *found, size_t size, vp_error *err)
{
    vp_status status = vp_plot_format_for_path(target->path, format, err);
    if (status != VP_OK)
        return status;
    const int dumb = *format == VP_PLOT_DUMB;
    const char *path = target->path;
    if ((status = plot_figure_check(figure, dumb ? NULL : path, err)) != VP_OK ||
        (status = vp_plot_check_size(*format, target->width, target->height, target->font_size,
                                     err)) != VP_OK)
        return status;
    // refused before gnuplot is looked for: the one failure the caller can fix at once
    if (!dumb && (status = atomic_file_check(path, target->force, NULL, err)) != VP_OK)
        return status;
    const char *program = plot_gnuplot_program();
    if (!find_program(program, found, size))
        return vp_fail(err, VP_EIO,
                       "gnuplot is not installed (no program '%s'%s); install the Debian "
                       "package gnuplot-nox, or set VARPROF_GNUPLOT",
                       program, strchr(program, '/') ? "" : " on PATH");
    return VP_OK;
}

/* exec 'gnuplot' >'messages' 2>&1: gnuplot's words kept for the error.
 * 0 where the command does not fit in size. */
static int gnuplot_command(char *command, size_t size, const char *found, const char *messages)
{
    snprintf(command, size, "exec ");
    int fits = append_shell_quoted(command, size, found);
    fits = fits && strlen(command) + 2 < size;
    if (fits)
        // NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy) the room is checked above
        strcat(command, " >");
    fits = fits && append_shell_quoted(command, size, messages);
    fits = fits && strlen(command) + 6 < size;
    if (fits)
        // NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy) the room is checked above
        strcat(command, " 2>&1");
    return fits;
}

/* What gnuplot's run came to: VP_OK where it drew the figure, else why
 * not, with what it said. */
static vp_status run_verdict(int fits, int wait_status, vp_status script_status, int written,
                             const char *found, const char *said, vp_error *err)
{
    if (!fits)
        return vp_fail(err, VP_EIO, "the gnuplot command line is too long");
    if (wait_status == -1)
        return vp_fail(err, VP_EIO, "cannot start gnuplot ('%s'): %s", found, strerror(errno));
    if (script_status != VP_OK && script_status != VP_EIO)
        return script_status; // refused before a byte was sent: err says why
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
        if (WIFSIGNALED(wait_status))
            return vp_fail(err, VP_EIO, "gnuplot was killed by signal %d%s%s",
                           WTERMSIG(wait_status), said[0] ? ": " : "", said);
        return vp_fail(err, VP_EIO, "gnuplot failed (exit status %d): %s", WEXITSTATUS(wait_status),
                       said[0] ? said : "it said nothing");
    }
    if (script_status != VP_OK)
        return vp_fail(err, VP_EIO, "cannot send the script to gnuplot%s%s", said[0] ? ": " : "",
                       said);
    if (!written)
        return vp_fail(err, VP_EIO, "gnuplot wrote nothing%s%s", said[0] ? ": " : "", said);
    return VP_OK;
}

/* The drawn figure delivered: a text plot copied out, a file given its
 * document title (the one gnuplot cannot set) and put in place. */
static vp_status deliver(const vp_figure *figure, const vp_plot_target *target,
                         vp_plot_format format, const char *text_plot, atomic_file *figure_file,
                         vp_error *err)
{
    if (format == VP_PLOT_DUMB)
        return copy_out(text_plot, target->terminal_out ? target->terminal_out : stdout, err);
    const vp_status status =
        figure_file->direct ? VP_OK
                            : plot_set_document_title(figure_file->write_path, format, figure, err);
    return status == VP_OK ? atomic_file_commit(figure_file, err) : status;
}

vp_status vp_plot_run(const vp_figure *figure, const vp_plot_target *target, vp_error *err)
{
    vp_plot_format format;
    char found[PATH_CAP];
    vp_status status = plot_prepare(figure, target, &format, found, sizeof found, err);
    if (status != VP_OK)
        return status;
    const int dumb = format == VP_PLOT_DUMB;
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = "/tmp";
    /* gnuplot draws into the figure's atomic file, or for "-" into a scratch
       file whose text is then copied out */
    atomic_file figure_file = {0};
    char text_plot[PATH_CAP];
    int text_slot = -1;
    if (dumb) {
        int fd = make_scratch(text_plot, sizeof text_plot, tmpdir, "plot", &text_slot, err);
        if (fd < 0)
            return VP_EIO;
        close(fd);
    } else if ((status = atomic_file_reserve(&figure_file, target->path, target->force, err)) !=
               VP_OK) {
        return status;
    }
    const char *output = dumb ? text_plot : figure_file.write_path;
    char messages[PATH_CAP];
    int messages_slot = -1;
    int msg_fd = make_scratch(messages, sizeof messages, tmpdir, "gnuplot", &messages_slot, err);
    if (msg_fd < 0) {
        if (dumb)
            remove_scratch(text_plot, text_slot);
        atomic_file_abort(&figure_file);
        return VP_EIO;
    }
    char command[3 * PATH_CAP];
    const int fits = gnuplot_command(command, sizeof command, found, messages);
    vp_status script_status = VP_OK;
    int wait_status = -1;
    if (fits)
        wait_status = pipe_script(command, figure, format, output, target, &script_status, err);
    char said[400];
    read_message(msg_fd, said, sizeof said);
    close(msg_fd);
    remove_scratch(messages, messages_slot);
    // a device or a FIFO, written in place, has no size to show it was drawn on
    struct stat st;
    const int written = figure_file.direct || (stat(output, &st) == 0 && st.st_size > 0);
    status = run_verdict(fits, wait_status, script_status, written, found, said, err);
    if (status == VP_OK)
        status = deliver(figure, target, format, text_plot, &figure_file, err);
    if (dumb)
        remove_scratch(text_plot, text_slot);
    atomic_file_abort(&figure_file); // after a commit, nothing is left to remove
    return status;
}
