/* A large block of memory backed by transparent huge pages where the
 * kernel offers them (madvise mode): a model's weights of several GiB
 * fault in 2 MiB at a time instead of 4 KiB, which is most of a big
 * network's set-up time in a virtual machine; and a pass's activations,
 * which the elementwise kernels stream through at memory's speed, miss the
 * TLB once per 2 MiB rather than per 4 KiB (the d = 512 backward's GELU
 * derivative took a third of the time, bench_backward).
 *
 * Private to libvarprof (no vp_ prefix). */
#ifndef VARPROF_SYS_BIG_BLOCK_H
#define VARPROF_SYS_BIG_BLOCK_H

#include <stddef.h>

/* bytes of memory aligned to 64 bytes (2 MiB when it is at least that
 * large), huge pages asked for; NULL when memory runs out. Not zeroed. Free
 * with free(). */
void *big_block_alloc(size_t bytes);

#endif
