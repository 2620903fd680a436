/* The Post-LN stream's elementwise steps compiled for AVX2 (this file's
 * flags only); the same bits as stream_scalar.c (stream_body.h). */
#if defined(__x86_64__)
#define KERN_ISA avx2
#include "stream_body.h"
#else
typedef int stream_avx2_is_x86_only;
#endif
