/* Means and ratios of means over tokens, with standard errors (mc_estimate.h). */
#include "mc/mc_estimate.h"

#include <math.h>

mc_estimate mc_root_of_ratio(const double *num, const double *den, double den_scale, size_t n)
{
    double sum_num = 0.0, sum_den = 0.0;
    for (size_t t = 0; t < n; t++) {
        sum_num += num[t];
        sum_den += den_scale * den[t];
    }
    const double ratio = sum_num / sum_den;
    double residual = 0.0;
    for (size_t t = 0; t < n; t++) {
        double r = num[t] - ratio * den_scale * den[t];
        residual += r * r;
    }
    const double mean_den = sum_den / (double)n;
    const double se_ratio = sqrt(residual / (double)(n - 1) / (double)n) / mean_den;
    const double root = sqrt(ratio);
    return (mc_estimate){root, root > 0.0 ? se_ratio / (2.0 * root) : se_ratio};
}

mc_estimate mc_mean_of(const double *x, size_t n)
{
    double sum = 0.0;
    for (size_t t = 0; t < n; t++)
        sum += x[t];
    const double mean = sum / (double)n;
    double squares = 0.0;
    for (size_t t = 0; t < n; t++)
        squares += (x[t] - mean) * (x[t] - mean);
    return (mc_estimate){mean, sqrt(squares / (double)(n - 1) / (double)n)};
}

mc_estimate mc_root_of_product(const double *a, const double *b, size_t n)
{
    const double mean_a = mc_mean_of(a, n).estimate, mean_b = mc_mean_of(b, n).estimate;
    const double root = sqrt(mean_a * mean_b);
    if (!(mean_a > 0.0 && mean_b > 0.0))
        return (mc_estimate){root, 0.0};
    double squares = 0.0;
    for (size_t t = 0; t < n; t++) {
        const double influence = 0.5 * root * ((a[t] - mean_a) / mean_a + (b[t] - mean_b) / mean_b);
        squares += influence * influence;
    }
    return (mc_estimate){root, sqrt(squares / (double)(n - 1) / (double)n)};
}

void mc_bounds(mc_estimate e, double z, double *lo, double *hi)
{
    *lo = fmax(e.estimate - z * e.se, 0.0);
    *hi = e.estimate + z * e.se;
}
