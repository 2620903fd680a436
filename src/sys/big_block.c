/* madvise is not POSIX: _DEFAULT_SOURCE declares it under glibc. */
#define _DEFAULT_SOURCE // NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
#include "sys/big_block.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *big_block_alloc(size_t bytes)
{
    const size_t alignment = bytes >= HUGE_PAGE ? HUGE_PAGE : 64;
    void *p = NULL;
    if (posix_memalign(&p, alignment, bytes ? bytes : 1) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (bytes >= HUGE_PAGE) /* a hint: refused or ignored, the block stays as it is */
        (void)madvise(p, bytes - bytes % HUGE_PAGE, MADV_HUGEPAGE);
#endif
    return p;
}
