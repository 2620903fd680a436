/* The closed form's backward half at a finite width d: the expectation of
 * the Monte Carlo's model itself (Gaussian maps, real norms), derived in
 * varprof-maths(7), GRADIENTS, Finite width. */
#ifndef VARPROF_CLOSED_GRAD_WIDTH_H
#define VARPROF_CLOSED_GRAD_WIDTH_H

#include <stddef.h>

#include "varprof/profile.h"

/* The narrowest width the finite-width gradient takes with this placement
 * and norm (p + 4, or 16 under an output norm). */
size_t closed_grad_min_width(const vp_placement_traits *t, vp_norm norm);

/* Sets grad_var on rows 0..top and weight_grad on rows 1..top of profile at
 * width d (>= closed_grad_min_width), norm LayerNorm or RMSNorm, reading its
 * config, rows[0].stream_var (v_0) and the rows' gains. A figure beyond
 * double is left as it comes (inf or NaN) for the caller to mark. Fails
 * with VP_ENOMEM (and err) when GSL's workspace cannot be allocated,
 * VP_EOVERFLOW when an integral does not converge. */
vp_status closed_grad_width(vp_profile *profile, size_t top, size_t width, vp_norm norm,
                            vp_error *err);

#endif
