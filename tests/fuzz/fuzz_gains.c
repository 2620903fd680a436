/* The gains reader (--gains FILE): the input is the file. */
#include <math.h>

#include "fuzz_common.h"
#include "varprof/gains_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size);
    double *gains = NULL;
    size_t count = 0;
    vp_error err;
    if (vp_gains_read(path, &gains, &count, &err) == VP_OK) {
        FUZZ_CHECK(gains != NULL);
        FUZZ_CHECK(count >= 1 && count <= VP_MAX_GAINS);
        for (size_t i = 0; i < count; i++)
            FUZZ_CHECK(isfinite(gains[i]) && gains[i] >= 0.0);
    } else {
        FUZZ_CHECK(gains == NULL);
        FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
    }
    free(gains);
    return 0;
}
