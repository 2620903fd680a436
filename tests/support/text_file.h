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

/* text (malloc'd, freed here) with its first `from` made `to`, malloc'd;
   fails the test when text has no `from`. */
char *replace_first(char *text, const char *from, const char *to);

/* dir (made when missing) holding config.json with the text config and,
   unless weights is NULL, a copy of weights/model.safetensors: a
   checkpoint's twin with another config.json. */
void checkpoint_twin(const char *dir, const char *config, const char *weights);

#endif
