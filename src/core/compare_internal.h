/* The comparison's arithmetic that the text writer shares with it (the
 * values it compares and their distance in standard errors); the public
 * half is include/varprof/compare.h. */
#ifndef VARPROF_COMPARE_INTERNAL_H
#define VARPROF_COMPARE_INTERNAL_H

#include "varprof/compare.h"

/* The closed and sampled values of q at row k, and the sampled one's
 * standard error. */
void compare_quantity_values(const vp_profile *closed, const vp_profile *sampled, size_t k,
                             vp_quantity q, double *closed_value, double *sampled_value,
                             double *se);

/* (sampled - closed) / se, +-HUGE_VAL where se is 0 and they differ, 0 where equal. */
double compare_se_units(double closed_value, double sampled_value, double se);

#endif
