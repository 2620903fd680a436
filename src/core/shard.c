/* Shards: a sweep's combinations split into N contiguous runs of near-equal cost. */
#include "varprof/shard.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "varprof/parse.h"

vp_status vp_shard_parse(const char *text, vp_shard *out, vp_error *err)
{
    const char *slash = text ? strchr(text, '/') : NULL;
    char k_text[32];
    if (!slash || (size_t)(slash - text) >= sizeof k_text)
        return vp_fail(err, VP_EINVAL,
                       "'%s' is not K/N: give the part K and the number of "
                       "parts N, 1 <= K <= N <= %d, e.g. 3/8",
                       text ? text : "(null)", VP_SHARD_MAX);
    memcpy(k_text, text, (size_t)(slash - text));
    k_text[slash - text] = '\0';
    size_t k, n;
    vp_error inner;
    if (vp_parse_size(k_text, 1, VP_SHARD_MAX, &k, &inner) != VP_OK ||
        vp_parse_size(slash + 1, 1, VP_SHARD_MAX, &n, &inner) != VP_OK)
        return vp_fail(err, VP_EINVAL, "'%s': %s; give K/N with 1 <= K <= N <= %d", text,
                       inner.message, VP_SHARD_MAX);
    if (k > n)
        return vp_fail(err, VP_EINVAL, "'%s': part %zu of %zu; K counts from 1 to N", text, k, n);
    *out = (vp_shard){k, n};
    return VP_OK;
}

/* How many of the first combinations lie before fraction q of the total:
   those whose cost's midpoint falls below it, so that a combination goes to
   the shard holding most of it. */
static size_t count_before(const double *costs, size_t n, double total, double q)
{
    double before = 0.0;
    size_t i = 0;
    for (; i < n; i++) {
        const double c = total > 0.0 ? costs[i] : 1.0;
        if (before + c / 2.0 >= q)
            break;
        before += c;
    }
    return i;
}

vp_status vp_shard_range(const double *costs, size_t n, vp_shard shard, size_t *first, size_t *end,
                         vp_error *err)
{
    if (shard.count < 1 || shard.index < 1 || shard.index > shard.count)
        return vp_fail(err, VP_EINVAL, "part %zu of %zu; K counts from 1 to N", shard.index,
                       shard.count);
    if (shard.count > n)
        return vp_fail(err, VP_EINVAL,
                       "%zu parts of %zu combination%s: a part would have nothing to run; "
                       "give at most %zu part%s",
                       shard.count, n, n == 1 ? "" : "s", n, n == 1 ? "" : "s");
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!(costs[i] >= 0.0 && isfinite(costs[i])))
            return vp_fail(err, VP_EINVAL, "combination %zu's cost %g; it must be finite and >= 0",
                           i, costs[i]);
        total += costs[i];
    }
    const double whole = total > 0.0 ? total : (double)n;
    /* the boundaries b_0 = 0 < b_1 < ... < b_N = n, each where the cost
       crosses k/N, then moved just enough that no part is empty */
    size_t *b = malloc((shard.count + 1) * sizeof *b);
    if (!b)
        return vp_fail(err, VP_ENOMEM, "no memory for %zu parts", shard.count);
    b[0] = 0;
    b[shard.count] = n;
    for (size_t k = 1; k < shard.count; k++) {
        b[k] = count_before(costs, n, total, whole * (double)k / (double)shard.count);
        if (b[k] < b[k - 1] + 1)
            b[k] = b[k - 1] + 1;
    }
    for (size_t k = shard.count - 1; k >= 1; k--)
        if (b[k] > b[k + 1] - 1)
            b[k] = b[k + 1] - 1;
    *first = b[shard.index - 1];
    *end = b[shard.index];
    free(b);
    return VP_OK;
}
