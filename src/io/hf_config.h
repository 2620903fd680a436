/* config.json of a Hugging Face checkpoint, read into vp_hf_architecture:
 * the part of vp_hf_checkpoint_read that knows the families' fields. */
#ifndef VARPROF_IO_HF_CONFIG_H
#define VARPROF_IO_HF_CONFIG_H

#include "varprof/hf_checkpoint.h"

/* Most bytes a config.json or an index may have: both are small. */
#define HF_MOST_JSON_BYTES (64u * 1024 * 1024)

/* The whole of path, NUL-terminated, in *text (free()), at most
 * HF_MOST_JSON_BYTES. VP_EIO, VP_EFORMAT (too long), VP_ENOMEM. */
vp_status hf_read_text(const char *path, char **text, size_t *length, vp_error *err);

/* Reads dir/config.json into *arch. Fails as vp_hf_checkpoint_read says of
 * config.json. */
vp_status hf_config_read(const char *dir, vp_hf_architecture *arch, vp_error *err);

#endif
