/* What the full method's forward keeps of a token for its backward sweep
 * (--grad): every sub-block's stream, its branches' noises and the few sums
 * its plan was made from, so that the backward can rebuild each norm's
 * output, each branch's input h and output f = A h without drawing again.
 *
 * One tape per thread, reused token after token: (K + 1) d doubles and
 * K n d floats (n branches per sub-block), plus the backward's vectors.
 */
#ifndef VARPROF_MC_TAPE_H
#define VARPROF_MC_TAPE_H

#include <stddef.h>

#include "mc/mc_step.h"

/* The most bytes one thread's tape may take: past this the run is refused
 * (vp_mc_check) before anything is allocated. */
#define MC_TAPE_MAX_BYTES ((size_t)1 << 30)

typedef struct {
    mc_state before; /* the stream's sums entering the sub-block */
    mc_noise noise;  /* the summed noise's sums, where the plan read them */
    mc_plan plan;    /* what the forward did with them */
    double gain;     /* g_k */
} mc_tape_step;

typedef struct {
    size_t d, sub_blocks, branches;
    double *x;           /* x_k at [k d], k = 0..K: the stream after sub-block k */
    float *xi;           /* branch b's noise in sub-block k at [((k - 1) n + b) d] */
    mc_tape_step *steps; /* steps[k - 1] for sub-block k */
    /* the backward's working vectors, d each */
    double *delta, *delta_y, *delta_h, *delta_f, *h, *y;
    float *zeta;
} mc_tape;

/* The bytes of a tape for K sub-blocks of n branches at width d, 64-byte
 * aligned parts included; 0 when that does not fit in size_t. */
size_t mc_tape_bytes(size_t width, size_t sub_blocks, size_t branches);

/* Lays a tape out over memory (mc_tape_bytes of it, 64-byte aligned). */
mc_tape mc_tape_carve(void *memory, size_t width, size_t sub_blocks, size_t branches);

#endif
