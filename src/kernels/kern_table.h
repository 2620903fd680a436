/* The kernels: one table per instruction set of everything vectorised (the
 * matmul, the forward pass's other kernels, the residual sums, the Gaussian
 * generator and the Monte Carlo's loops), one of them chosen for the process
 * (kern_current). Private to the library: the public entry points are those
 * of include/varprof/isa.h and gauss.h, which go through these tables.
 *
 * Layouts are PyTorch's: activations row-major [rows][width] with a row
 * stride, projections' weights [out][in] (nn.Linear), so y = x W^T + b.
 * Every forward kernel computes each output row from its input row alone, in
 * an order that does not depend on how many rows a call is given: a caller
 * may split rows across threads and get the same bits (the matmul included:
 * its blocking over k and m is fixed, only n is split).
 *
 * Floats throughout, as PyTorch's float32; the norms' mean and variance are
 * summed in double. The SIMD variants of the forward kernels equal the
 * scalar one within the tolerances their tests state (sums in another
 * order); the residual sums, the Gaussian draws and the Monte Carlo's loops
 * equal it bit for bit. No kernel allocates; the matmul takes a workspace
 * from its caller. Each kernel's signature and contract are its entry in
 * kern_list.h, which makes the table's fields, the prototypes and the
 * tables. */
#ifndef VARPROF_KERN_TABLE_H
#define VARPROF_KERN_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "varprof/isa.h"

/* The sums the residual kernel leaves (sums[...]). */
enum {
    KERN_RESIDUAL_XX_BEFORE, /* |x|^2, the stream before the update */
    KERN_RESIDUAL_OO,        /* |o|^2, what is added */
    KERN_RESIDUAL_XO,        /* <x, o> */
    KERN_RESIDUAL_HH,        /* |h|^2, the branch's input */
    KERN_RESIDUAL_FF,        /* |f|^2, the branch's output */
    KERN_RESIDUAL_XX,        /* |x + o|^2, the stream after (only when adding) */
    KERN_RESIDUAL_SUMS
};

/* The attention backward's query rows a block, and the scratch floats it
   needs for T tokens and heads of hd, T rounded up to 32 keys (whole
   vectors of either set's pairs): one head's k and v transposed, k's rows,
   dk and dv (hd T each), the block's probabilities, ds and softcap's tanh
   (a block times T each), its q and dout (a block times hd each). */
#define KERN_ATTENTION_BACKWARD_BLOCK 16
#define KERN_ATTENTION_BACKWARD_SCRATCH(T, hd)                                                     \
    ((((size_t)(T) + 31) / 32 * 32) * (5 * (size_t)(hd) + 3 * KERN_ATTENTION_BACKWARD_BLOCK) +     \
     2 * KERN_ATTENTION_BACKWARD_BLOCK * (size_t)(hd))

/* One Adam step's constants, each a float as PyTorch's kernels see them
   (src/train/adam.c makes them): decay 1 when there is no weight decay,
   step_size = -lr / (1 - beta1^t). */
typedef struct {
    float decay, beta1, one_minus_beta1, beta2, one_minus_beta2, correction2_sqrt, eps, step_size;
} kern_adam_step;

/* A weight W [m][k] made on demand, panel by panel (the matmul's packed
   layout, matmul_internal.h): fill writes rows j0 .. j0 + nr - 1 of W over
   k's values p0 .. p0 + kc - 1 as panel[p nr + c] = W[j0 + c][p0 + p],
   zeros for rows j0 + c >= m. It must be a pure function of its arguments:
   threads call it at once, each on its own panels. */
typedef struct {
    void (*fill)(const void *ctx, float *panel, size_t nr, size_t j0, size_t p0, size_t kc);
    const void *ctx;
} kern_panel_source;

/* One instruction set's kernels: a field per entry of kern_list.h, in its
   order, where each one's contract is. */
typedef struct {
// NOLINTNEXTLINE(bugprone-macro-parentheses) parameters: a list in parentheses
#define KERN(type, name, parameters) type(*name) parameters;
#include "kernels/kern_list.h"
#undef KERN
} kern_table;

/* The table of the instruction set in use (vp_isa_current(): CPUID, XGETBV
   and $VARPROF_ISA), chosen once per process, thread-safely. Never NULL. */
const kern_table *kern_current(void);

/* The table of an instruction set, for tests and benchmarks: the scalar one
   where this CPU or this build has none (vp_isa_supported() == 0), so that a
   call never faults on an illegal instruction. Never NULL. */
const kern_table *kern_for(vp_isa isa);

/* 1 if this build holds isa's variants (x86-64 builds hold all three). */
int kern_built(vp_isa isa);

#endif
