/* The residual update's sums for any machine: the reference the SIMD builds
 * equal bit for bit (residual_body.h). */
#include "kernels/nn_variants.h"

#define RESIDUAL_NAME kern_residual_scalar
#include "residual_body.h"
