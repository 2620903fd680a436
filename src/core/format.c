/* Number formatting: the figures as the writers print them. */
#include "varprof/format.h"

#include <math.h>
#include <stdio.h>

void vp_format_percent(char *buf, size_t size, double ratio)
{
    const double percent = 100.0 * ratio;
    /* whole percents from 100 up, so 1000 % does not read as "1e+03 %" */
    if (percent >= 100.0 && percent < 1e6)
        snprintf(buf, size, "%.0f %%", percent);
    else if (percent >= 99.95 && percent < 100.0) /* not "100 %" for what falls short */
        snprintf(buf, size, "%.4g %%", percent);
    else
        snprintf(buf, size, "%.3g %%", percent);
}

void vp_format_share(char *buf, size_t size, double share, double log2_share)
{
    const int is_power_of_two = isfinite(log2_share) && log2_share == floor(log2_share);
    if (share == 0.0 && isfinite(log2_share)) {
        if (is_power_of_two)
            snprintf(buf, size, "2^%.0f", log2_share);
        else
            snprintf(buf, size, "10^%.1f", log2_share * log10(2.0));
        return;
    }
    char percent[64];
    vp_format_percent(percent, sizeof percent, share);
    if (is_power_of_two && log2_share <= -10.0)
        snprintf(buf, size, "%s (2^%.0f)", percent, log2_share);
    else
        snprintf(buf, size, "%s", percent);
}
