/* The safetensors loader (--weights FILE): the input is the file. Every
 * tensor it accepts is converted to float, as the forward engine does. */
#include <stdint.h>

#include "fuzz_common.h"
#include "varprof/safetensors.h"

/* Tensors past this many elements are checked but not converted. */
#define MAX_CONVERTED 1000000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size);
    vp_safetensors file;
    vp_error err;
    if (vp_safetensors_read(path, &file, &err) != VP_OK) {
        FUZZ_CHECK(file.tensors == NULL && file.count == 0 && file.data == NULL);
        FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
        return 0;
    }
    FUZZ_CHECK(file.data_size <= size);
    for (size_t i = 0; i < file.count; i++) {
        const vp_tensor_info *t = &file.tensors[i];
        FUZZ_CHECK(t->name != NULL);
        FUZZ_CHECK(vp_safetensors_find(&file, t->name) == t);
        FUZZ_CHECK(t->rank <= VP_SAFETENSORS_MAX_RANK);
        FUZZ_CHECK(t->begin <= t->end && t->end <= file.data_size);
        size_t elements = 1;
        for (size_t r = 0; r < t->rank; r++)
            elements *= t->shape[r];
        FUZZ_CHECK(elements == t->elements);
        const size_t bytes = t->dtype == VP_DTYPE_F32 ? 4 : 2;
        FUZZ_CHECK(t->end - t->begin == t->elements * bytes);
        (void)vp_dtype_name(t->dtype);
        if (t->elements < MAX_CONVERTED) {
            /* exactly t->elements floats, so ASan catches a write past them */
            float *out = malloc(t->elements * sizeof *out);
            FUZZ_CHECK(out != NULL || t->elements == 0);
            vp_safetensors_to_float(&file, t, out);
            free(out);
        }
    }
    vp_safetensors_free(&file);
    return 0;
}
