/* Numbers as people read them: percentages, and shares too small for a double. */
#ifndef VARPROF_FORMAT_H
#define VARPROF_FORMAT_H

#include <stddef.h>

/* A ratio as a percentage with three significant digits: 0.125 -> "12.5 %",
 * 2.3e-10 -> "2.33e-08 %"; whole percents from 100 % to 1e6 % ("1000 %"). Always NUL-terminates buf (size >= 1). */
void vp_format_percent(char *buf, size_t size, double ratio);

/* An embedding share from its value and its log2: a percentage, followed by
 * the power of two when the share is an exact small power of two
 * ("2.33e-08 % (2^-32)"); where it underflows double, the power of two or of
 * ten alone ("2^-1000000", "10^-4567.8"). */
void vp_format_share(char *buf, size_t size, double share, double log2_share);

#endif
