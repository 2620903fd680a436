/* The nearest known name to a misspelt one. */
#include "nearest_name.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#define MAX_NAME 63

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

size_t edit_distance(const char *a, size_t a_length, const char *b)
{
    const size_t n = a_length, m = strlen(b);
    if (n > MAX_NAME || m > MAX_NAME)
        return SIZE_MAX;
    size_t d[MAX_NAME + 1][MAX_NAME + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            const int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
            d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + !same);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1; /* two neighbours swapped */
        }
    return d[n][m];
}

const char *nearest_name(const char *typed, size_t length, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_distance = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        const size_t d = edit_distance(typed, length, names[i]);
        if (d <= 2 && 2 * d < strlen(names[i]) && d < best_distance) {
            best = names[i];
            best_distance = d;
        }
    }
    return best;
}
