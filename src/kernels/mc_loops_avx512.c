/* The Monte Carlo's loops compiled for AVX-512 (this file's flags only). */
#if defined(__x86_64__)
#define KERN_ISA avx512
#include "mc_loops_body.h"
#else
typedef int mc_loops_avx512_is_x86_only;
#endif
