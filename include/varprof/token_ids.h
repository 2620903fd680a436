/* Reading a batch's token ids (--token-ids FILE.csv): one row per sequence,
 * each of the same number of whole numbers. */
#ifndef VARPROF_TOKEN_IDS_H
#define VARPROF_TOKEN_IDS_H

#include <stddef.h>

#include "varprof/status.h"

#define VP_MAX_TOKEN_IDS (16u * 1024 * 1024)

/* Reads B rows of T ids, each in [0, vocab), into a malloc'd array [B][T]
 * owned by the caller (free). Fails with VP_EIO, or VP_EFORMAT naming the
 * row and column of the first id that is not a whole number or not below
 * vocab, of a row whose length differs from the first's, or an empty file or
 * more than VP_MAX_TOKEN_IDS ids; VP_ENOMEM. On failure *ids is NULL. */
vp_status vp_token_ids_read(const char *path, size_t vocab, unsigned **ids, size_t *batch,
                            size_t *tokens, vp_error *err);

#endif
