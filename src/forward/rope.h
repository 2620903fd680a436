/* Rotary position embedding's angles, made once per workspace. Private to
 * src/forward. */
#ifndef VARPROF_FORWARD_ROPE_H
#define VARPROF_FORWARD_ROPE_H

#include <stddef.h>

#include "varprof/forward.h"

/* cos_t[p][i] = cos(p f_i) and sin_t likewise, f_i = theta^(-2i/hd) as
 * scaling says (vp_rope_scaling; NULL or factor 0: as it is), for positions
 * p < positions and i < hd / 2 (row stride hd / 2), each evaluated in double
 * and rounded once to float: the table the rope kernel (kern_table.h)
 * reads. hd even, theta > 0 and a valid scaling are the caller's checks. */
void fw_rope_table(float *cos_t, float *sin_t, size_t positions, size_t hd, double theta,
                   const vp_rope_scaling *scaling);

/* fw_rope_table with linear scaling besides: each f_i, after scaling's,
 * divided by linear (rope_type linear's factor; 0 for none), so that
 * position p turns as p / linear would. */
void fw_rope_table_linear(float *cos_t, float *sin_t, size_t positions, size_t hd, double theta,
                          const vp_rope_scaling *scaling, double linear);

#endif
