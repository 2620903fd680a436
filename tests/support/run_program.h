/* Running the program as a user does, for the tests of the command line. */
#ifndef VARPROF_TESTS_RUN_PROGRAM_H
#define VARPROF_TESTS_RUN_PROGRAM_H

#include <stddef.h>

typedef struct {
    int status; /* the exit code, or 128 + signal when killed */
    char *out;  /* standard output, NUL-terminated */
    size_t out_length;
    char *err; /* standard error, NUL-terminated */
} program_run;

/* Runs $VARPROF (default build/varprof) with the NULL-terminated arguments,
 * standard input from /dev/null. Aborts the test process if it cannot run. */
program_run run_varprof(const char *const *args);

/* As run_varprof, with standard output sent to out_path instead (e.g.
 * /dev/full); run.out is then empty. */
program_run run_varprof_to(const char *const *args, const char *out_path);

/* As run_varprof, with standard output a pipe whose reader has already
 * gone (`varprof | head` once head has quit); with ignore_sigpipe, the
 * program starts with SIGPIPE ignored, so that writes fail with EPIPE
 * instead. run.out is empty. */
program_run run_varprof_to_closed_pipe(const char *const *args, int ignore_sigpipe);

/* Starts the program, sends it `sig` after delay_ms, and waits: run.status is
 * its exit code (or 128 + the signal that killed it) and *seconds_after how
 * long it took to end once signalled. */
program_run run_varprof_signalled(const char *const *args, int delay_ms, int sig,
                                  double *seconds_after);

/* As run_varprof_signalled, with the program started with sig ignored, as
 * nohup starts it with SIGHUP ignored. */
program_run run_varprof_signalled_while_ignored(const char *const *args, int delay_ms, int sig);

/* `varprof --engine forward --weights dir --token-ids tokens --grad --loss
 * next`, under VARPROF_ISA isa when isa is not NULL; with grads, also
 * `--format csv --grads-out grads` (grads removed first). The run of the
 * tests that hold a checkpoint's figures or compare two checkpoints' bytes. */
program_run run_forward_grad(const char *dir, const char *tokens, const char *isa,
                             const char *grads);

/* Frees a run's buffers. */
void program_run_free(program_run *run);

/* The path of a file in the test data folder ($VARPROF_TESTDATA, default
 * tests/data), in a static buffer. */
const char *test_data_path(const char *name);

/* A fresh empty directory for a test's files, in a static buffer. */
const char *test_scratch_dir(void);

/* A group's scratch directory: test_scratch_setup makes it (a cmocka group
 * setup), test_scratch_teardown removes it with everything in it,
 * test_scratch() is its path and in_scratch(name) a file in it (one of 16
 * rotating static buffers). */
int test_scratch_setup(void **state);
int test_scratch_teardown(void **state);
const char *test_scratch(void);
const char *in_scratch(const char *name);

/* Writes text as the whole of in_scratch(name) and returns its path, or
 * NULL when it cannot be written (for a group setup, which returns -1). */
const char *write_scratch(const char *name, const char *text);

/* Removes a scratch directory and everything in it. */
void test_remove_tree(const char *dir);

/* The longest line of text, in bytes (the outputs checked are ASCII). */
size_t widest_line(const char *text);

/* The names in dir other than . and .., space-separated into names (of size
 * bytes); returns how many. Aborts if dir cannot be read. */
size_t list_dir(const char *dir, char *names, size_t size);

#endif
