/* The Post-LN stream's elementwise steps for any machine: the reference
 * the SIMD builds equal bit for bit (stream_body.h). */
#define KERN_ISA scalar
#include "stream_body.h"
