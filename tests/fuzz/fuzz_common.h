/* Helpers shared by the fuzz targets (tests/fuzz/README.md).
 *
 * The file readers take a path, so each process writes its input to one temp
 * file, made on the first call, rewritten on every call and unlinked at exit:
 * mkstemp in $FUZZ_TMPDIR, else /dev/shm (a disk file makes the CSV targets
 * several times slower), else $TMPDIR, else /tmp. FUZZ_CHECK aborts on a broken invariant,
 * so that libFuzzer and the replay driver both report it as a crash. */
#ifndef VARPROF_FUZZ_COMMON_H
#define VARPROF_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(fuzz_stderr(), "%s:%d: fuzz invariant broken: %s\n", __FILE__, __LINE__,       \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The real standard error, even after fuzz_quiet_stderr. */
static FILE *fuzz_real_stderr;

static inline FILE *fuzz_stderr(void)
{
    return fuzz_real_stderr ? fuzz_real_stderr : stderr;
}

/* Sends the stdio stream stderr (the CLI's usage errors) to /dev/null unless
 * FUZZ_VERBOSE is set. Only the FILE is swapped (glibc lets stderr be
 * assigned); descriptor 2 stays open, so sanitizer reports still appear. */
static inline void fuzz_quiet_stderr(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    if (getenv("FUZZ_VERBOSE"))
        return;
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        fuzz_real_stderr = stderr;
        stderr = null;
    }
}

static char fuzz_path[4096];

static inline void fuzz_remove_file(void)
{
    if (fuzz_path[0])
        unlink(fuzz_path);
}

/* Writes data to this process's temp file and returns its path. */
static inline const char *fuzz_write_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0) {
        const char *dir = getenv("FUZZ_TMPDIR");
        if (!dir || !*dir)
            dir = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
        if (!dir || !*dir)
            dir = "/tmp";
        snprintf(fuzz_path, sizeof fuzz_path, "%s/varprof-fuzz-XXXXXX", dir);
        fd = mkstemp(fuzz_path);
        if (fd < 0) {
            perror(fuzz_path);
            abort();
        }
        atexit(fuzz_remove_file);
    }
    if (ftruncate(fd, 0) != 0) {
        perror(fuzz_path);
        abort();
    }
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
        if (n <= 0) {
            perror(fuzz_path);
            abort();
        }
        done += (size_t)n;
    }
    return fuzz_path;
}

/* data as a malloc'd NUL-terminated string (any NUL inside ends it early). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
