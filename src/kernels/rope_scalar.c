/* Rotary position embedding for any machine: plain loops, the reference the
 * SIMD builds equal bit for bit (rope_body.h). */
#define KERN_ISA scalar
#include "kernels/rope_body.h"
