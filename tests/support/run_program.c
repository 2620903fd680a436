#define _GNU_SOURCE /* mkdtemp, strdup */
#include "run_program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(FILE *f, size_t *length)
{
    fflush(f);
    long size = ftell(f);
    char *text = malloc((size_t)size + 1);
    if (!text)
        abort();
    rewind(f);
    size_t got = fread(text, 1, (size_t)size, f);
    text[got] = '\0';
    if (length)
        *length = got;
    return text;
}

static char **make_argv(const char *program, const char *const *args)
{
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = calloc(n + 2, sizeof *argv);
    if (!argv)
        abort();
    argv[0] = (char *)program;
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    return argv;
}

static const char *program_path(void)
{
    const char *program = getenv("VARPROF");
    return program ? program : "build/varprof";
}

/* A signal the next child starts with ignored, or 0. */
static int child_ignored_signal;

/* Starts the program with stdin from /dev/null, stdout to out_fd, stderr to
 * err_fd. $VARPROF_WRAPPER, when set, runs it under a tool (valgrind). */
static pid_t start(const char *const *args, int out_fd, int err_fd)
{
    const char *program = program_path();
    char **argv = make_argv(program, args);
    const char *wrapper = getenv("VARPROF_WRAPPER");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        FILE *null = freopen("/dev/null", "r", stdin);
        (void)null;
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        // exec keeps an ignored signal ignored, and makes a handled one default;
        // the ending signals start at their defaults, as from a terminal, even
        // when the tests run as a background job (whose shell ignores SIGINT)
        // or under nohup (SIGHUP), unless the test ignores one itself
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        if (child_ignored_signal)
            signal(child_ignored_signal, SIG_IGN);
        if (wrapper && *wrapper) {
            /* the wrapper's words, then the program's argv */
            char *words[32];
            size_t n = 0;
            char *copy = strdup(wrapper);
            for (char *w = strtok(copy, " "); w && n < 24; w = strtok(NULL, " "))
                words[n++] = w;
            size_t m = 0;
            while (argv[m])
                m++;
            char **all = calloc(n + m + 1, sizeof *all);
            for (size_t i = 0; i < n; i++)
                all[i] = words[i];
            for (size_t i = 0; i < m; i++)
                all[n + i] = argv[i];
            execvp(all[0], all);
            _exit(127);
        }
        execv(program, argv);
        _exit(127);
    }
    free(argv);
    return pid;
}

static program_run finish(pid_t pid, FILE *out, FILE *err)
{
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    program_run run = {0};
    run.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    run.out = out ? slurp(out, &run.out_length) : calloc(1, 1);
    run.err = slurp(err, NULL);
    if (out)
        fclose(out);
    fclose(err);
    return run;
}

program_run run_varprof(const char *const *args)
{
    FILE *out = tmpfile(), *err = tmpfile();
    if (!out || !err)
        abort();
    pid_t pid = start(args, fileno(out), fileno(err));
    return finish(pid, out, err);
}

program_run run_forward_grad(const char *dir, const char *tokens, const char *isa,
                             const char *grads)
{
    const char *args[] = {"--engine", "forward",     "--weights", dir,    "--token-ids",
                          tokens,     "--grad",      "--loss",    "next", "--format",
                          "csv",      "--grads-out", grads,       NULL};
    if (!grads)
        args[9] = NULL; /* the default format, no gradients' file */
    else
        unlink(grads);
    if (isa)
        setenv("VARPROF_ISA", isa, 1);
    program_run run = run_varprof(args);
    if (isa)
        unsetenv("VARPROF_ISA");
    return run;
}

program_run run_varprof_to(const char *const *args, const char *out_path)
{
    FILE *err = tmpfile();
    int fd = open(out_path, O_WRONLY);
    if (!err || fd < 0)
        abort();
    pid_t pid = start(args, fd, fileno(err));
    close(fd);
    return finish(pid, NULL, err);
}

program_run run_varprof_to_closed_pipe(const char *const *args, int ignore_sigpipe)
{
    FILE *err = tmpfile();
    int ends[2];
    if (!err || pipe(ends) != 0)
        abort();
    close(ends[0]); // the reader is gone before the first byte
    child_ignored_signal = ignore_sigpipe ? SIGPIPE : 0;
    pid_t pid = start(args, ends[1], fileno(err));
    child_ignored_signal = 0;
    close(ends[1]);
    return finish(pid, NULL, err);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

program_run run_varprof_signalled(const char *const *args, int delay_ms, int sig,
                                  double *seconds_after)
{
    FILE *out = tmpfile(), *err = tmpfile();
    if (!out || !err)
        abort();
    pid_t pid = start(args, fileno(out), fileno(err));
    struct timespec delay = {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L};
    nanosleep(&delay, NULL);
    const double sent = now();
    kill(pid, sig);
    program_run run = finish(pid, out, err);
    *seconds_after = now() - sent;
    return run;
}

program_run run_varprof_signalled_while_ignored(const char *const *args, int delay_ms, int sig)
{
    FILE *out = tmpfile(), *err = tmpfile();
    if (!out || !err)
        abort();
    child_ignored_signal = sig;
    pid_t pid = start(args, fileno(out), fileno(err));
    child_ignored_signal = 0;
    struct timespec delay = {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L};
    nanosleep(&delay, NULL);
    kill(pid, sig);
    return finish(pid, out, err);
}

void program_run_free(program_run *run)
{
    free(run->out);
    free(run->err);
    run->out = run->err = NULL;
}

const char *test_data_path(const char *name)
{
    static char path[4096];
    const char *dir = getenv("VARPROF_TESTDATA");
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "tests/data", name);
    return path;
}

const char *test_scratch_dir(void)
{
    static char dir[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/varprof-test-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        abort();
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void test_remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char group_scratch[256];

int test_scratch_setup(void **state)
{
    (void)state;
    snprintf(group_scratch, sizeof group_scratch, "%s", test_scratch_dir());
    return 0;
}

int test_scratch_teardown(void **state)
{
    (void)state;
    test_remove_tree(group_scratch);
    return 0;
}

const char *test_scratch(void)
{
    return group_scratch;
}

const char *in_scratch(const char *name)
{
    static char paths[16][512];
    static int next;
    char *path = paths[next++ % 16];
    snprintf(path, sizeof paths[0], "%s/%s", group_scratch, name);
    return path;
}

const char *write_scratch(const char *name, const char *text)
{
    const char *path = in_scratch(name);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    const int written = fputs(text, f) != EOF;
    return fclose(f) == 0 && written ? path : NULL;
}

size_t widest_line(const char *text)
{
    size_t widest = 0, n = 0;
    for (; *text; text++) {
        if (*text == '\n') {
            widest = n > widest ? n : widest;
            n = 0;
        } else {
            n++;
        }
    }
    return n > widest ? n : widest;
}

size_t list_dir(const char *dir, char *names, size_t size)
{
    DIR *d = opendir(dir);
    if (!d)
        abort();
    size_t n = 0;
    names[0] = '\0';
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        n++;
        strncat(names, e->d_name, size - strlen(names) - 2);
        strcat(names, " ");
    }
    closedir(d);
    return n;
}
