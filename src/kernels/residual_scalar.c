/* The residual update's sums for any machine: the reference the SIMD builds
 * equal bit for bit (residual_body.h). */
#define KERN_ISA scalar
#include "residual_body.h"
