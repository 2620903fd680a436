/* Whole small files for the tests that copy a checkpoint and edit it: each
 * fails the test (cmocka) when a file cannot be read or written. */
#ifndef VARPROF_TESTS_TEXT_FILE_H
#define VARPROF_TESTS_TEXT_FILE_H

/* The file's text, at most 64 KiB, in a static buffer. */
char *read_text(const char *path);

/* Writes text as the whole of path. */
void write_text(const char *path, const char *text);

/* Copies a file byte for byte. */
void copy_file(const char *from, const char *to);

#endif
