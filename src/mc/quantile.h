/* Quantiles by selection: what a sort would give, in O(n). */
#ifndef VARPROF_QUANTILE_H
#define VARPROF_QUANTILE_H

#include <stddef.h>

/* The p-quantile (0 <= p <= 1) of a[0..n), n >= 1, exactly as GSL's
 * gsl_stats_quantile_from_sorted_data gives it on the sorted data: the order
 * statistics at floor(p (n - 1)) and the next, interpolated. Reorders a. */
double quantile_select(double *a, size_t n, double p);

/* The p[j]-quantiles (each 0 <= p[j] <= 1) of a[0..n), n >= 1, into out[j]
 * for j < count <= 8, as quantile_select gives each, from one
 * multi-selection: about 2n comparisons where count single ones take count n.
 * Reorders a. */
void quantiles_select(double *a, size_t n, const double *p, size_t count, double *out);

/* The two steps of quantiles_select, for a caller that maps the order
 * statistics before interpolating: the index lhs[j] = floor(p[j] (n - 1))
 * and weight delta[j] of each quantile (count <= 8); then the selection that
 * puts a[lhs[j]], and a[lhs[j] + 1] where delta[j] > 0, in sorted place. */
void quantile_indices(size_t n, const double *p, size_t count, size_t *lhs, double *delta);
void select_order_statistics(double *a, size_t n, const size_t *lhs, const double *delta,
                             size_t count);

#endif
