// realpath is XSI, beyond the build's _POSIX_C_SOURCE
#define _XOPEN_SOURCE 700 // NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
#include "output_paths.h"
#include "output_file.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* path as "real folder/base name" in resolved; 0 when the folder cannot be
 * resolved (it does not exist: writing there fails anyway, and is said). */
static int resolve(const char *path, char *resolved, size_t size)
{
    const char *slash = strrchr(path, '/');
    char folder[PATH_MAX];
    if (!path_folder(path, folder, sizeof folder))
        return 0;
    char real[PATH_MAX];
    if (!realpath(folder, real))
        return 0;
    const char *base = slash ? slash + 1 : path;
    return snprintf(resolved, size, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base) < (int)size;
}

int outputs_are_one_file(const char *a, const char *b)
{
    struct stat sa, sb;
    const int a_exists = stat(a, &sa) == 0, b_exists = stat(b, &sb) == 0;
    if (a_exists && b_exists) {
        if (S_ISCHR(sa.st_mode) || S_ISFIFO(sa.st_mode))
            return 0;
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    }
    if (a_exists != b_exists)
        return 0;
    char ra[PATH_MAX + NAME_MAX + 2], rb[PATH_MAX + NAME_MAX + 2];
    if (resolve(a, ra, sizeof ra) && resolve(b, rb, sizeof rb))
        return strcmp(ra, rb) == 0;
    return strcmp(a, b) == 0;
}

int check_distinct_outputs(const cli_args *args)
{
    static const option_id files[] = {OPT_OUTPUT, OPT_PLOT, OPT_PLOT_SCRIPT, OPT_GRADS_OUT};
    const size_t n = sizeof files / sizeof *files;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const char *a = args->value[files[i]], *b = args->value[files[j]];
            if (!args->given[files[i]] || !args->given[files[j]] || strcmp(a, "-") == 0 ||
                strcmp(b, "-") == 0)
                continue;
            if (outputs_are_one_file(a, b))
                return cli_usage_error("%s '%s' and %s '%s' name one file; give each its own "
                                       "file",
                                       cli_option_name(files[i]), a, cli_option_name(files[j]), b);
        }
    return EXIT_OK;
}
