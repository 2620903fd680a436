#define _GNU_SOURCE /* mkdtemp */
#include "run_program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
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

program_run run_varprof(const char *const *args)
{
    const char *program = getenv("VARPROF");
    if (!program)
        program = "build/varprof";
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = calloc(n + 2, sizeof *argv);
    if (!argv)
        abort();
    argv[0] = (char *)program;
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    FILE *out = tmpfile(), *err = tmpfile();
    if (!out || !err)
        abort();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        FILE *null = freopen("/dev/null", "r", stdin);
        (void)null;
        dup2(fileno(out), 1);
        dup2(fileno(err), 2);
        execv(program, argv);
        _exit(127);
    }
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    free(argv);
    program_run run = {0};
    run.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    run.out = slurp(out, &run.out_length);
    run.err = slurp(err, NULL);
    fclose(out);
    fclose(err);
    return run;
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
