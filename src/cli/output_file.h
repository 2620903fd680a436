/* Where the program writes: standard output, or a file that appears only
 * when complete and never replaces one the user has without --force. */
#ifndef VARPROF_CLI_OUTPUT_FILE_H
#define VARPROF_CLI_OUTPUT_FILE_H

#include <stdio.h>

typedef struct {
    FILE *stream;
    const char *path;  /* the final name; NULL for standard output */
    char *temp_path;   /* the file being written beside it */
    int cleanup_slot;  /* its vp_cleanup registration */
    int force;
} output_file;

/* SIGINT and SIGTERM: remove every temporary file being written
 * (vp_cleanup_remove_all) and exit with 128 + the signal, 130 or 143. */
void output_watch_signals(void);

/* Opens path ("-" or NULL: standard output). A file is written to a temporary
 * name beside path. Returns EXIT_OK or EXIT_RUNTIME after printing why (the
 * file exists and force is 0, it is not a regular file, its directory does
 * not exist, ...). */
int output_open(output_file *out, const char *path, int force);

/* Flushes and closes, then moves the temporary file into place (without
 * replacing an existing file unless forced). Returns EXIT_OK, or
 * EXIT_RUNTIME after printing why and removing the temporary file. */
int output_commit(output_file *out);

/* Closes and removes the temporary file; for a run that failed. */
void output_abort(output_file *out);

#endif
