/* Where the program writes: standard output, or a file through
 * sys/atomic_file.h, which makes it appear only when complete, never
 * replaces one without --force, and writes a device or a FIFO in place. This
 * layer adds standard output ("-") and prints what the library reports. */
#ifndef VARPROF_CLI_OUTPUT_FILE_H
#define VARPROF_CLI_OUTPUT_FILE_H

#include <stdio.h>

#include "sys/atomic_file.h"

typedef struct {
    FILE *stream;
    atomic_file file; /* unused for standard output */
    int to_stdout;
} output_file;

/* SIGINT, SIGTERM, SIGHUP and SIGPIPE: remove every temporary file being
 * written (vp_cleanup_remove_all), then die of the signal (the shell says
 * 128 + it: 130, 143, 129, 141). A signal ignored on entry stays ignored.
 * Every registered file is also removed at exit. */
void output_watch_signals(void);

/* Whether standard output is a pipe or socket whose reader has gone: a write
 * error then means "the reader has had enough" (`varprof | head`), which
 * ends the program quietly, as it ends other filters. */
int output_reader_gone(void);

/* The folder path is in: what comes before its last '/', "/" for a file at
 * the root, "." for a bare name. 0 when it does not fit in size bytes. */
int path_folder(const char *path, char *folder, size_t size);

/* Opens path ("-" or NULL: standard output; else atomic_file_open). Returns
 * EXIT_OK or EXIT_RUNTIME after printing why (the file exists and force is 0,
 * with the hint to add --force; it is a directory; its folder does not
 * exist, is not a folder or cannot be written, said of the folder, ...). */
int output_open(output_file *out, const char *path, int force);

/* Flushes standard output, or commits the file (atomic_file_commit).
 * Returns EXIT_OK, or EXIT_RUNTIME after printing why; no temporary file is
 * left either way. */
int output_commit(output_file *out);

/* Closes and removes the temporary file; for a run that failed. Safe on a
 * zeroed struct and after output_commit. */
void output_abort(output_file *out);

#endif
