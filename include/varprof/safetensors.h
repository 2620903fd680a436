/* Reading safetensors files: an 8-byte little-endian header length, a JSON
 * header naming each tensor's dtype, shape and byte range, then the raw
 * little-endian data. Every field is checked before any byte of data is
 * read through it: a malformed file is an error, never a crash or a read out
 * of bounds. */
#ifndef VARPROF_SAFETENSORS_H
#define VARPROF_SAFETENSORS_H

#include <stddef.h>
#include <stdio.h>

#include "varprof/status.h"

#define VP_SAFETENSORS_MAX_RANK 8
#define VP_SAFETENSORS_MAX_HEADER (100u * 1024 * 1024)

typedef enum { VP_DTYPE_F32, VP_DTYPE_F16, VP_DTYPE_BF16 } vp_dtype;

typedef struct {
    char *name; /* owned by the file */
    vp_dtype dtype;
    size_t rank;
    size_t shape[VP_SAFETENSORS_MAX_RANK];
    size_t elements;   /* the shape's product */
    size_t begin, end; /* bytes of the data section */
} vp_tensor_info;

/* Where a file's tensors come from when they are made on demand rather
 * than read (a Hugging Face checkpoint, vp_hf_checkpoint_read): to_float
 * converts tensor `index` of the file into out, free releases the source.
 * Not for two threads at once. */
typedef struct vp_tensor_source {
    void (*to_float)(struct vp_tensor_source *source, size_t index, float *out);
    void (*free)(struct vp_tensor_source *source);
} vp_tensor_source;

typedef struct vp_safetensors_file {
    vp_tensor_info *tensors;
    size_t count;
    unsigned char *data; /* the data section; NULL with a source */
    size_t data_size;
    void *mapping; /* vp_safetensors_map's: the whole file, read-only; else NULL */
    size_t mapping_size;
    vp_tensor_source *source; /* tensors made on demand, owned; else NULL */
} vp_safetensors;

/* Reads and checks a whole file. Fails with VP_EIO (cannot be read) or
 * VP_EFORMAT naming what is wrong: a file shorter than its header length, a
 * header length beyond the file or above VP_SAFETENSORS_MAX_HEADER, a header
 * that is not a JSON object, a tensor without dtype, shape or data_offsets,
 * an unknown dtype, a shape of negative, fractional or overflowing
 * dimensions or above the maximum rank, offsets out of the data or
 * overlapping another tensor's, a byte range that does not match the shape,
 * a name given twice; VP_ENOMEM. On failure *file is empty. */
vp_status vp_safetensors_read(const char *path, vp_safetensors *file, vp_error *err);

/* As vp_safetensors_read, but the file is mapped read-only instead of read:
 * its data stay in the page cache, not in memory of the process's own, and
 * no size limit beyond the address space applies. The data must not be
 * written; a file truncated while mapped ends the process with SIGBUS, as
 * any mapping does. VP_EIO also when mmap fails. */
vp_status vp_safetensors_map(const char *path, vp_safetensors *file, vp_error *err);

/* Frees what vp_safetensors_read or vp_safetensors_map made; an empty or
 * NULL file is allowed. */
void vp_safetensors_free(vp_safetensors *file);

/* The tensor of that name, or NULL. */
const vp_tensor_info *vp_safetensors_find(const vp_safetensors *file, const char *name);

/* "F32", "F16", "BF16". */
const char *vp_dtype_name(vp_dtype dtype);

/* Converts a tensor's elements to float into out[0 .. t->elements); with
 * a source, the source makes them. */
void vp_safetensors_to_float(const vp_safetensors *file, const vp_tensor_info *t, float *out);

/* One float tensor to write. */
typedef struct {
    const char *name;
    size_t rank;     /* 1 or 2 */
    size_t shape[2]; /* shape[1] unused for rank 1 */
    const float *data;
} vp_tensor_out;

/* Writes the tensors to out as a safetensors file that vp_safetensors_read
 * and PyTorch's safetensors read back: F32 little-endian, in the given
 * order, the header padded with spaces to a multiple of 8 bytes. VP_EINVAL
 * (naming it) for a rank that is not 1 or 2, an empty name or a name given
 * twice; VP_ENOMEM; VP_EIO when writing fails. */
vp_status vp_safetensors_write(FILE *out, const vp_tensor_out *tensors, size_t n, vp_error *err);

#endif
