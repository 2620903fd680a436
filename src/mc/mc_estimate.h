/* Estimates over tokens with their standard errors: the means and ratios of
 * means the Monte Carlo's figures are, by the delta method. */
#ifndef VARPROF_MC_ESTIMATE_H
#define VARPROF_MC_ESTIMATE_H

#include <stddef.h>

typedef struct {
    double estimate, se;
} mc_estimate;

/* The mean of x[0..n) and its standard error; n >= 2. */
mc_estimate mc_mean_of(const double *x, size_t n);

/* sqrt(sum num / sum den) and its standard error: the ratio R of means has
 * variance var(num - R den) / (n mean(den)^2), and sqrt halves the relative
 * error. den_scale multiplies every den (DeepNorm's alpha^2). */
mc_estimate mc_root_of_ratio(const double *num, const double *den, double den_scale, size_t n);

/* sqrt(mean a mean b) and its standard error: each token's influence on it
 * is W/2 ((a_t - A)/A + (b_t - B)/B), a first-order (delta method) figure
 * that counts the correlation of a and b. */
mc_estimate mc_root_of_product(const double *a, const double *b, size_t n);

/* The 95 % bounds estimate -+ z se, the lower one clipped at 0: none of the
 * figures can be negative. */
void mc_bounds(mc_estimate e, double z, double *lo, double *hi);

#endif
