/* The Monte Carlo's loops for any machine: the reference the SIMD builds equal. */
#define KERN_ISA scalar
#include "mc_loops_body.h"
