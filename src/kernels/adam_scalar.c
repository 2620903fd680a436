/* Adam's update for any machine: the reference the SIMD builds equal bit
 * for bit (adam_body.h). */
#define KERN_ISA scalar
#include "kernels/adam_body.h"
