/* The residual update's sums compiled for AVX2 (this file's flags only);
 * the same bits as residual_scalar.c (residual_body.h). */
#if defined(__x86_64__)
#define KERN_ISA avx2
#include "residual_body.h"
#else
typedef int residual_avx2_is_x86_only;
#endif
