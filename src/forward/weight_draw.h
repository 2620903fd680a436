/* A weight as a pure function of its position: W[row][col] of a drawn
 * tensor is draw number row * cols + col of the tensor's own Philox stream,
 * keyed by the seed (varprof-maths(7), FORWARD PASS). So the whole matrix,
 * one row, or one panel of the matmul's packed layout come out with the
 * same bits, and a network can make each weight panel right before the
 * matmul reads it instead of storing the matrix (fw_draw_source). */
#ifndef VARPROF_FORWARD_WEIGHT_DRAW_H
#define VARPROF_FORWARD_WEIGHT_DRAW_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kern_table.h"
#include "sys/thread_pool.h"

/* The streams of the tensors that are not a layer's (a layer's are
   1 + 16 layer + which, fw_layer_stream_of). */
#define FW_STREAM_EMBEDDING 0u
#define FW_STREAM_POSITIONS 0x7FFFFFFFu /* beyond every layer's streams */

typedef enum {
    FW_DRAW_NONE,    /* not drawn: the weight is stored (packed) */
    FW_DRAW_NORMAL,  /* N(0, scale^2): vp_gauss_fill's draws, times scale in double */
    FW_DRAW_UNIFORM, /* uniform in (-scale, scale), PyTorch's nn.Linear init, then
                        times factor (DeepNet's beta) unless factor is 1 */
} fw_draw_kind;

typedef struct {
    fw_draw_kind kind;
    unsigned long long seed;
    uint32_t stream;
    double scale, factor;
    size_t rows, cols; /* W [rows][cols]: a linear layer's [out][in] */
    int transposed;    /* panels of W^T [cols][rows], for the backward's dX = dY W */
} fw_draw;

/* The stream of weight `which` of layer l. */
uint32_t fw_layer_stream_of(size_t layer, unsigned which);

/* Entries first .. first + n - 1 of d's W, row-major, into out. */
void fw_draw_values(const fw_draw *d, float *out, size_t n, uint64_t first);

/* Draws a thread is given at the least when a tensor is drawn whole: a
   Box-Muller normal costs tens of vector operations, so 2^18 of them cost
   many times what handing a task to a thread does. */
#define FW_DRAWS_PER_THREAD ((size_t)1 << 18)

/* All n entries of d's W from the first on, into out, as tasks of pool
   where there are at least two threads' worth (FW_DRAWS_PER_THREAD), else
   on the calling thread (pool may be NULL): the bits of fw_draw_values
   whatever the split, each entry its position's draw. For a stored tensor
   drawn whole at init (network_init.c). */
void fw_draw_whole(const fw_draw *d, float *out, size_t n, thread_pool *pool);

/* The matmul's source of d's panels (of W, or of W^T when d->transposed),
   reading d, which must outlive the matmul. */
kern_panel_source fw_draw_source(const fw_draw *d);

#endif
