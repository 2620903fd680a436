/* Quantiles by selection, for the Monte Carlo's percentiles. */
#include "mc/quantile.h"

#include <gsl/gsl_sort.h>

/* Moves the elements of a[0..n) for which (x < pivot), or (x <= pivot) with
 * or_equal, to the front, returning how many. Branchless: every step swaps
 * and only the count depends on the comparison, so random data costs no
 * mispredicted branches (a branching partition loses half its comparisons to
 * them). */
static size_t partition(double *a, size_t n, double pivot, int or_equal)
{
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        const double x = a[i];
        const int front = or_equal ? x <= pivot : x < pivot;
        a[i] = a[j];
        a[j] = x;
        j += (size_t)front;
    }
    return j;
}

static double median_of_three(double x, double y, double z)
{
    if (x > y) {
        double t = x;
        x = y;
        y = t;
    }
    return z <= x ? x : (z >= y ? y : z);
}

/* The k-th smallest of a[0..n) (from 0), leaving a[0..k) <= a[k] <= a[k+1..n):
 * selection by three-way partitions around a median of three. Ranges that
 * shrink too slowly (adversarial data) are sorted instead, by GSL's heapsort:
 * O(n log n) at worst. */
static double select_kth(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the k-th lies in a[lo..hi) */
    int budget = 64;
    while (hi - lo > 16) {
        if (budget-- == 0) {
            gsl_sort(a + lo, 1, hi - lo);
            return a[k];
        }
        double *r = a + lo;
        const size_t m = hi - lo;
        const double pivot = median_of_three(r[0], r[m / 2], r[m - 1]);
        const size_t less = partition(r, m, pivot, 0);
        if (k < lo + less) {
            hi = lo + less;
            continue;
        }
        const size_t equal = partition(r + less, m - less, pivot, 1);
        if (k < lo + less + equal)
            return a[k]; /* a[lo+less .. lo+less+equal) all equal the pivot */
        lo += less + equal;
    }
    /* a few left: insertion sort them */
    for (size_t i = lo + 1; i < hi; i++)
        for (size_t j2 = i; j2 > lo && a[j2 - 1] > a[j2]; j2--) {
            double t = a[j2];
            a[j2] = a[j2 - 1];
            a[j2 - 1] = t;
        }
    return a[k];
}

/* The p-quantile as GSL's gsl_stats_quantile_from_sorted_data defines it
 * (interpolating between the order statistics around p (n - 1)), found by
 * selection instead of a sort: O(n) where sorting is O(n log n). */
double quantile_select(double *a, size_t n, double p)
{
    const double index = p * (double)(n - 1);
    const size_t lhs = (size_t)index;
    const double delta = index - (double)lhs;
    const double low = select_kth(a, n, lhs);
    if (lhs + 1 >= n || delta == 0.0)
        return low;
    double high = a[lhs + 1];
    for (size_t t = lhs + 2; t < n; t++)
        high = a[t] < high ? a[t] : high;
    return (1.0 - delta) * low + delta * high;
}

/* Puts the order statistics idx[0..m) (sorted, distinct, within [lo, hi]) in
 * place: the middle one first, then each side within its own part. */
static void select_indices(double *a, size_t lo, size_t hi, const size_t *idx, size_t m)
{
    if (m == 0)
        return;
    const size_t mid = m / 2, k = idx[mid];
    select_kth(a + lo, hi - lo + 1, k - lo);
    if (mid > 0)
        select_indices(a, lo, k - 1, idx, mid);
    if (mid + 1 < m)
        select_indices(a, k + 1, hi, idx + mid + 1, m - mid - 1);
}

void quantile_indices(size_t n, const double *p, size_t count, size_t *lhs, double *delta)
{
    for (size_t j = 0; j < count; j++) {
        const double index = p[j] * (double)(n - 1);
        lhs[j] = (size_t)index;
        delta[j] = lhs[j] + 1 < n ? index - (double)lhs[j] : 0.0;
    }
}

void select_order_statistics(double *a, size_t n, const size_t *lhs, const double *delta,
                             size_t count)
{
    size_t idx[16] = {0}, m = 0;
    for (size_t j = 0; j < count && j < 8; j++) {
        idx[m++] = lhs[j];
        if (delta[j] > 0.0)
            idx[m++] = lhs[j] + 1;
    }
    /* sort the few indices and drop repeats */
    for (size_t i = 1; i < m; i++)
        for (size_t j = i; j > 0 && idx[j - 1] > idx[j]; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    size_t distinct = 0;
    for (size_t i = 0; i < m; i++)
        if (distinct == 0 || idx[distinct - 1] != idx[i])
            idx[distinct++] = idx[i];
    select_indices(a, 0, n - 1, idx, distinct);
}

void quantiles_select(double *a, size_t n, const double *p, size_t count, double *out)
{
    if (count > 8) { /* beyond the contract's few: one at a time */
        for (size_t j = 0; j < count; j++)
            out[j] = quantile_select(a, n, p[j]);
        return;
    }
    size_t lhs[8] = {0};
    double delta[8] = {0};
    quantile_indices(n, p, count, lhs, delta);
    select_order_statistics(a, n, lhs, delta, count);
    for (size_t j = 0; j < count; j++)
        out[j] =
            delta[j] > 0.0 ? (1.0 - delta[j]) * a[lhs[j]] + delta[j] * a[lhs[j] + 1] : a[lhs[j]];
}
