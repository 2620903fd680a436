/* A Hugging Face checkpoint's shards, read and cross-checked against the index. */
#ifndef VARPROF_IO_HF_SHARDS_H
#define VARPROF_IO_HF_SHARDS_H

#include <stddef.h>

#include "varprof/safetensors.h"
#include "varprof/status.h"

typedef struct {
    vp_safetensors *shards;
    char **shard_names; /* as the index spells them */
    size_t n_shards;
    unsigned char **used; /* per shard, per tensor */
} hf_shards;

/* Maps dir's model.safetensors, or every shard its
 * model.safetensors.index.json names, into *c (empty on entry). Fails with
 * VP_EIO or VP_EFORMAT as vp_hf_checkpoint_read says of the shards and the
 * index, the message starting with dir; *c then holds what was read, for
 * hf_shards_free. */
vp_status hf_shards_read(hf_shards *c, const char *dir, vp_error *err);

/* Unmaps the shards and empties *c. */
void hf_shards_free(hf_shards *c);

/* The tensor called name in any shard (the index made them disjoint), its
 * shard in *shard; NULL when none holds it. */
const vp_tensor_info *hf_shards_lookup(const hf_shards *c, const char *name, size_t *shard);

#endif
