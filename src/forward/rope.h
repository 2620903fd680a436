/* Rotary position embedding's angles, made once per workspace. Private to
 * src/forward. */
#ifndef VARPROF_FORWARD_ROPE_H
#define VARPROF_FORWARD_ROPE_H

#include <stddef.h>

/* cos_t[p][i] = cos(p theta^(-2i/hd)) and sin_t likewise, for positions p <
 * positions and i < hd / 2 (row stride hd / 2), each evaluated in double and
 * rounded once to float: the table the rope kernel (kern_table.h) reads.
 * hd even and theta > 0 are the caller's checks. */
void fw_rope_table(float *cos_t, float *sin_t, size_t positions, size_t hd, double theta);

#endif
