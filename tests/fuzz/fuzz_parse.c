/* The number parser: vp_parse_double and vp_parse_size on the input as one
 * NUL-terminated string (a NUL inside ends it, as in argv or a CSV cell). */
#include <math.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "varprof/parse.h"

static int has_nonzero_digit(const char *s)
{
    /* the mantissa only: stop at the exponent */
    for (; *s && *s != 'e' && *s != 'E'; s++)
        if (*s >= '1' && *s <= '9')
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_string(data, size);
    vp_error err;

    double value = 0.0;
    if (vp_parse_double(text, &value, &err) == VP_OK) {
        FUZZ_CHECK(isfinite(value));
        FUZZ_CHECK(value == strtod(text, NULL));
        FUZZ_CHECK(value != 0.0 || !has_nonzero_digit(text));
    } else {
        FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
    }

    static const size_t ranges[][2] = {
        {0, SIZE_MAX}, {1, 1000000}, {1900, 2100}, {0, 0}, {2, 1000000000}, {0, 1048575},
    };
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        size_t n = 0;
        if (vp_parse_size(text, ranges[r][0], ranges[r][1], &n, &err) == VP_OK) {
            FUZZ_CHECK(n >= ranges[r][0] && n <= ranges[r][1]);
            FUZZ_CHECK(text[0] >= '0' && text[0] <= '9');
            FUZZ_CHECK((double)n == strtod(text, NULL) || n > (1ull << 53));
        } else {
            FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
        }
    }
    free(text);
    return 0;
}
