/* The Monte Carlo's loops compiled for AVX2 (this file's flags only). */
#if defined(__x86_64__)
#define KERN_ISA avx2
#include "mc_loops_body.h"
#else
typedef int mc_loops_avx2_is_x86_only;
#endif
