/* A token's row of the embedding, as the forward's embedding step makes it
 * (run.c) and as the backward makes it again for project_in's gradient
 * (network_backward.c). Private to src/forward. */
#ifndef VARPROF_FORWARD_EMBEDDING_H
#define VARPROF_FORWARD_EMBEDDING_H

#include <stdint.h>

#include "forward/network.h"

/* Token's row of the embedding, m->embed_dim floats into out: looked up, or
 * drawn in a drawn model, times m->embed_scale unless that is 1. */
void fw_embed_row(const fw_model *m, float *out, uint32_t token);

/* o's embed_dim: 0, the width, or narrower with weights (project_in and
 * project_out are read, never drawn). VP_EINVAL naming the widths. */
vp_status fw_embedding_check(const vp_forward_options *o, vp_error *err);

#endif
