/* Writing safetensors files (vp_safetensors_write): the header as JSON
 * through cJSON, then each tensor's floats as little-endian bytes. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "varprof/safetensors.h"

static size_t elements(const vp_tensor_out *t)
{
    return t->shape[0] * (t->rank == 2 ? t->shape[1] : 1);
}

static vp_status check(const vp_tensor_out *tensors, size_t n, vp_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const vp_tensor_out *t = &tensors[i];
        if (!t->name || !*t->name)
            return vp_fail(err, VP_EINVAL, "tensor %zu has no name", i + 1);
        if (t->rank != 1 && t->rank != 2)
            return vp_fail(err, VP_EINVAL, "tensor '%s' has rank %zu; it must be 1 or 2", t->name,
                           t->rank);
        for (size_t j = 0; j < i; j++)
            if (strcmp(tensors[j].name, t->name) == 0)
                return vp_fail(err, VP_EINVAL, "tensor '%s' is given twice", t->name);
    }
    return VP_OK;
}

static char *header_text(const vp_tensor_out *tensors, size_t n)
{
    cJSON *header = cJSON_CreateObject();
    size_t offset = 0;
    for (size_t i = 0; header && i < n; i++) {
        const vp_tensor_out *t = &tensors[i];
        const size_t bytes = elements(t) * 4;
        cJSON *entry = cJSON_AddObjectToObject(header, t->name);
        char shape[64], offsets[64];
        if (t->rank == 2)
            snprintf(shape, sizeof shape, "[%zu,%zu]", t->shape[0], t->shape[1]);
        else
            snprintf(shape, sizeof shape, "[%zu]", t->shape[0]);
        snprintf(offsets, sizeof offsets, "[%zu,%zu]", offset, offset + bytes);
        if (!entry || !cJSON_AddStringToObject(entry, "dtype", "F32") ||
            !cJSON_AddRawToObject(entry, "shape", shape) ||
            !cJSON_AddRawToObject(entry, "data_offsets", offsets)) {
            cJSON_Delete(header);
            return NULL;
        }
        offset += bytes;
    }
    char *text = header ? cJSON_PrintUnformatted(header) : NULL;
    cJSON_Delete(header);
    return text;
}

static void put_u64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

vp_status vp_safetensors_write(FILE *out, const vp_tensor_out *tensors, size_t n, vp_error *err)
{
    vp_status status = check(tensors, n, err);
    if (status != VP_OK)
        return status;
    char *text = header_text(tensors, n);
    if (!text)
        return vp_fail(err, VP_ENOMEM, "no memory for the safetensors header");
    const size_t length = strlen(text), padded = (length + 7) / 8 * 8;
    unsigned char size[8];
    put_u64(size, padded);
    fwrite(size, 1, 8, out);
    fwrite(text, 1, length, out);
    for (size_t i = length; i < padded; i++)
        fputc(' ', out);
    free(text);
    for (size_t i = 0; i < n; i++) {
        const vp_tensor_out *t = &tensors[i];
        for (size_t j = 0; j < elements(t); j++) {
            uint32_t bits;
            memcpy(&bits, &t->data[j], 4);
            const unsigned char b[4] = {(unsigned char)bits, (unsigned char)(bits >> 8),
                                        (unsigned char)(bits >> 16), (unsigned char)(bits >> 24)};
            fwrite(b, 1, 4, out);
        }
    }
    return ferror(out) ? vp_fail(err, VP_EIO, "writing the safetensors file failed") : VP_OK;
}
