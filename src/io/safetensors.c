/* The safetensors reader: the header's tensors by name, shape and offset. */
#include "varprof/safetensors.h"
#include "core/name_table.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* JSON numbers are doubles: integers are exact up to 2^53 */
#define MAX_EXACT_INTEGER 9007199254740992.0

static size_t element_size(vp_dtype dtype)
{
    return dtype == VP_DTYPE_F32 ? 4 : 2;
}

static const char *const dtype_names[] = {
    [VP_DTYPE_F32] = "F32", [VP_DTYPE_F16] = "F16", [VP_DTYPE_BF16] = "BF16"};
_Static_assert(sizeof dtype_names / sizeof *dtype_names == VP_DTYPE_BF16 + 1,
               "a new vp_dtype needs a name in dtype_names (io/safetensors.c)");

const char *vp_dtype_name(vp_dtype dtype)
{
    const char *name = name_table_name(NAME_LIST(dtype_names), (int)dtype);
    return name ? name : "?";
}

static int whole_number(const cJSON *item, size_t *out)
{
    if (!cJSON_IsNumber(item))
        return 0;
    double v = item->valuedouble;
    if (!(v >= 0.0 && v <= MAX_EXACT_INTEGER) || v != floor(v))
        return 0;
    *out = (size_t)v;
    return 1;
}

static vp_status parse_tensor(const cJSON *item, vp_tensor_info *t, size_t data_size, vp_error *err)
{
    const char *name = item->string;
    if (!cJSON_IsObject(item))
        return vp_fail(err, VP_EFORMAT, "tensor '%s': not a JSON object", name);
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dtype) || !cJSON_IsArray(shape) || !cJSON_IsArray(offsets))
        return vp_fail(err, VP_EFORMAT,
                       "tensor '%s': needs a dtype string, a shape array and "
                       "a data_offsets array",
                       name);
    const int dtype_value = name_table_find(NAME_LIST(dtype_names), dtype->valuestring);
    if (dtype_value < 0) {
        char names[32];
        name_table_list(NAME_LIST(dtype_names), names, sizeof names);
        return vp_fail(err, VP_EFORMAT, "tensor '%s': dtype '%.32s' is not one varprof reads (%s)",
                       name, dtype->valuestring, names);
    }
    t->dtype = (vp_dtype)dtype_value;
    const int rank = cJSON_GetArraySize(shape);
    if (rank > VP_SAFETENSORS_MAX_RANK)
        return vp_fail(err, VP_EFORMAT, "tensor '%s': rank %d is above %d", name, rank,
                       VP_SAFETENSORS_MAX_RANK);
    t->rank = (size_t)rank;
    t->elements = 1;
    for (int i = 0; i < rank; i++) {
        size_t dim;
        if (!whole_number(cJSON_GetArrayItem(shape, i), &dim))
            return vp_fail(err, VP_EFORMAT, "tensor '%s': dimension %d is not a whole number", name,
                           i);
        t->shape[i] = dim;
        if (dim != 0 && t->elements > SIZE_MAX / element_size(t->dtype) / dim)
            return vp_fail(err, VP_EFORMAT, "tensor '%s': its shape's product overflows", name);
        t->elements *= dim;
    }
    if (cJSON_GetArraySize(offsets) != 2 ||
        !whole_number(cJSON_GetArrayItem(offsets, 0), &t->begin) ||
        !whole_number(cJSON_GetArrayItem(offsets, 1), &t->end))
        return vp_fail(err, VP_EFORMAT, "tensor '%s': data_offsets must be two whole numbers",
                       name);
    if (t->begin > t->end || t->end > data_size)
        return vp_fail(err, VP_EFORMAT,
                       "tensor '%s': bytes %zu to %zu lie outside the %zu bytes "
                       "of data",
                       name, t->begin, t->end, data_size);
    if (t->end - t->begin != t->elements * element_size(t->dtype))
        return vp_fail(err, VP_EFORMAT,
                       "tensor '%s': %zu bytes for %zu elements of %s (%zu "
                       "bytes needed)",
                       name, t->end - t->begin, t->elements, vp_dtype_name(t->dtype),
                       t->elements * element_size(t->dtype));
    return VP_OK;
}

static int by_begin(const void *a, const void *b)
{
    const vp_tensor_info *x = a, *y = b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

static vp_status parse_header(vp_safetensors *f, const char *json, size_t length, vp_error *err)
{
    cJSON *root = cJSON_ParseWithLength(json, length);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return vp_fail(err, VP_EFORMAT, "the header is not a JSON object");
    }
    size_t n = 0;
    for (const cJSON *item = root->child; item; item = item->next)
        n += strcmp(item->string, "__metadata__") != 0;
    f->tensors = calloc(n ? n : 1, sizeof *f->tensors);
    vp_status status = f->tensors ? VP_OK : vp_fail(err, VP_ENOMEM, "no memory for %zu tensors", n);
    for (const cJSON *item = root->child; item && status == VP_OK; item = item->next) {
        if (strcmp(item->string, "__metadata__") == 0)
            continue;
        vp_tensor_info *t = &f->tensors[f->count];
        status = parse_tensor(item, t, f->data_size, err);
        if (status == VP_OK && vp_safetensors_find(f, item->string))
            status = vp_fail(err, VP_EFORMAT, "tensor '%s' is named twice", item->string);
        if (status == VP_OK && !(t->name = strdup(item->string)))
            status = vp_fail(err, VP_ENOMEM, "no memory for a tensor's name");
        if (status == VP_OK)
            f->count++;
    }
    cJSON_Delete(root);
    if (status != VP_OK)
        return status;
    /* overlapping tensors would alias each other's bytes */
    vp_tensor_info *sorted = malloc((f->count ? f->count : 1) * sizeof *sorted);
    if (!sorted)
        return vp_fail(err, VP_ENOMEM, "no memory to check the offsets");
    memcpy(sorted, f->tensors, f->count * sizeof *sorted);
    qsort(sorted, f->count, sizeof *sorted, by_begin);
    for (size_t i = 1; i < f->count && status == VP_OK; i++)
        if (sorted[i].begin < sorted[i - 1].end && sorted[i].begin < sorted[i].end)
            status = vp_fail(err, VP_EFORMAT, "tensors '%s' and '%s' overlap", sorted[i - 1].name,
                             sorted[i].name);
    free(sorted);
    return status;
}

static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
}

static uint64_t little_endian_u64(const unsigned char b[8])
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

vp_status vp_safetensors_read(const char *path, vp_safetensors *f, vp_error *err)
{
    memset(f, 0, sizeof *f);
    FILE *in = fopen(path, "rb");
    if (!in)
        return vp_fail(err, VP_EIO, "%s: cannot be opened: %s", path, strerror(errno));
    struct stat st;
    vp_status status = VP_OK;
    unsigned char head[8];
    char *json = NULL;
    if (fstat(fileno(in), &st) != 0 || !S_ISREG(st.st_mode))
        status = vp_fail(err, VP_EIO, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size > physical_memory() / 2)
        status = vp_fail(err, VP_ENOMEM, "%s: %.3g GiB, more than half of this machine's memory",
                         path, (double)st.st_size / 1073741824.0);
    else if (st.st_size < 8 || fread(head, 1, 8, in) != 8)
        status = vp_fail(err, VP_EFORMAT, "%s: shorter than the 8 bytes of a header length", path);
    if (status == VP_OK) {
        const uint64_t header = little_endian_u64(head);
        const uint64_t rest = (uint64_t)st.st_size - 8;
        if (header > rest)
            status = vp_fail(err, VP_EFORMAT,
                             "%s: not a safetensors file: header length %llu is beyond "
                             "the file's %llu bytes",
                             path, (unsigned long long)header, (unsigned long long)rest);
        else if (header > VP_SAFETENSORS_MAX_HEADER)
            status = vp_fail(err, VP_EFORMAT, "%s: header length %llu is above %u bytes", path,
                             (unsigned long long)header, VP_SAFETENSORS_MAX_HEADER);
        else if (!(json = malloc((size_t)header + 1)) ||
                 !(f->data = malloc((size_t)(rest - header) + 1)))
            status = vp_fail(err, VP_ENOMEM, "%s: no memory for %llu bytes", path,
                             (unsigned long long)rest);
        else if (fread(json, 1, (size_t)header, in) != header ||
                 fread(f->data, 1, (size_t)(rest - header), in) != rest - header)
            status = vp_fail(err, VP_EIO, "%s: cannot be read: %s", path, strerror(errno));
        if (status == VP_OK) {
            f->data_size = (size_t)(rest - header);
            vp_error why;
            status = parse_header(f, json, (size_t)header, &why);
            if (status != VP_OK)
                vp_fail(err, status, "%s: %s", path, why.message);
        }
    }
    free(json);
    (void)fclose(in); /* read-only: nothing to lose */
    if (status != VP_OK)
        vp_safetensors_free(f);
    return status;
}

vp_status vp_safetensors_map(const char *path, vp_safetensors *f, vp_error *err)
{
    memset(f, 0, sizeof *f);
    const int fd = open(path, O_RDONLY);
    if (fd < 0)
        return vp_fail(err, VP_EIO, "%s: cannot be opened: %s", path, strerror(errno));
    struct stat st;
    vp_status status = VP_OK;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        status = vp_fail(err, VP_EIO, "%s: not a regular file", path);
    else if (st.st_size < 8)
        status = vp_fail(err, VP_EFORMAT, "%s: shorter than the 8 bytes of a header length", path);
    else if ((uint64_t)st.st_size > SIZE_MAX ||
             (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
        status = vp_fail(err, VP_EIO, "%s: cannot be mapped: %s", path, strerror(errno));
    (void)close(fd); /* the mapping stays */
    if (status != VP_OK)
        return status;
    f->mapping = map;
    f->mapping_size = (size_t)st.st_size;
    const uint64_t header = little_endian_u64(map);
    const uint64_t rest = (uint64_t)st.st_size - 8;
    if (header > rest)
        status = vp_fail(err, VP_EFORMAT,
                         "%s: not a safetensors file: header length %llu is beyond the "
                         "file's %llu bytes",
                         path, (unsigned long long)header, (unsigned long long)rest);
    else if (header > VP_SAFETENSORS_MAX_HEADER)
        status = vp_fail(err, VP_EFORMAT, "%s: header length %llu is above %u bytes", path,
                         (unsigned long long)header, VP_SAFETENSORS_MAX_HEADER);
    if (status == VP_OK) {
        f->data = (unsigned char *)map + 8 + header;
        f->data_size = (size_t)(rest - header);
        vp_error why;
        status = parse_header(f, (const char *)map + 8, (size_t)header, &why);
        if (status != VP_OK)
            vp_fail(err, status, "%s: %s", path, why.message);
    }
    if (status != VP_OK)
        vp_safetensors_free(f);
    return status;
}

void vp_safetensors_free(vp_safetensors *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->count; i++)
        free(f->tensors[i].name);
    free(f->tensors);
    if (f->mapping)
        (void)munmap(f->mapping, f->mapping_size); /* read-only: nothing to lose */
    else
        free(f->data);
    if (f->source)
        f->source->free(f->source);
    memset(f, 0, sizeof *f);
}

const vp_tensor_info *vp_safetensors_find(const vp_safetensors *f, const char *name)
{
    for (size_t i = 0; i < f->count; i++)
        if (f->tensors[i].name && strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i];
    return NULL;
}

/* IEEE half to float, subnormals, infinities and NaNs included. */
static float half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits;
    if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent == 0) {
        if (mantissa == 0) {
            bits = sign;
        } else { /* subnormal: normalise it */
            exponent = 127 - 15 + 1;
            while (!(mantissa & 0x400)) {
                mantissa <<= 1;
                exponent--;
            }
            bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
        }
    } else {
        bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void vp_safetensors_to_float(const vp_safetensors *file, const vp_tensor_info *t, float *out)
{
    if (file->source) {
        file->source->to_float(file->source, (size_t)(t - file->tensors), out);
        return;
    }
    const unsigned char *p = file->data + t->begin;
    for (size_t i = 0; i < t->elements; i++) {
        if (t->dtype == VP_DTYPE_F32) {
            uint32_t bits = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                            (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
            memcpy(&out[i], &bits, sizeof bits);
        } else {
            uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
            if (t->dtype == VP_DTYPE_BF16) {
                uint32_t bits = (uint32_t)h << 16;
                memcpy(&out[i], &bits, sizeof bits);
            } else {
                out[i] = half_to_float(h);
            }
        }
    }
}
