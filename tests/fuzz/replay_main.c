/* Replays corpora through a fuzz target without libFuzzer: linked with one
 * fuzz_*.c by `make fuzz-replay` (and so by `make check`), it calls
 * LLVMFuzzerTestOneInput once on every file named, and on every file of every
 * directory named (not recursively), and prints how many it ran. A crash or
 * a broken invariant aborts, so the replay fails. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        perror(path);
        return -1;
    }
    size_t capacity = 4096, size = 0, got;
    uint8_t *data = malloc(capacity);
    while (data && (got = fread(data + size, 1, capacity - size, in)) > 0) {
        size += got;
        if (size == capacity) {
            uint8_t *grown = realloc(data, capacity *= 2);
            if (!grown)
                free(data);
            data = grown;
        }
    }
    int failed = !data || ferror(in);
    fclose(in);
    if (failed) {
        fprintf(stderr, "%s: cannot be read\n", path);
        free(data);
        return -1;
    }
    /* an exact-size copy, as libFuzzer gives, so a read past the end is caught */
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact) {
        free(data);
        return -1;
    }
    memcpy(exact, data, size);
    free(data);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir, in name order; returns how many ran, -1 on error. */
static long run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, capacity = 0;
    long ran = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == capacity) {
            char **grown =
                realloc(names, (capacity = capacity ? 2 * capacity : 64) * sizeof *names);
            if (!grown) {
                ran = -1;
                break;
            }
            names = grown;
        }
        size_t length = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(length))) {
            ran = -1;
            break;
        }
        snprintf(names[n++], length, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (ran == 0)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (ran >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
            ran = run_file(names[i]) == 0 ? ran + 1 : -1;
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        long ran;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        ran = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]) == 0 ? 1 : -1;
        if (ran < 0)
            return 1;
        total += ran;
    }
    fprintf(stdout, "%s: %ld inputs replayed\n", argv[0], total);
    return 0;
}
