/* Rotary position embedding's table of angles (forward/rope.h). */
#include <math.h>

#include "forward/rope.h"

void fw_rope_table(float *cos_t, float *sin_t, size_t positions, size_t hd, double theta)
{
    const size_t half = hd / 2;
    for (size_t i = 0; i < half; i++) {
        /* in double: at position 4095 a float angle would be off by ~1e-4 rad */
        const double freq = pow(theta, -2.0 * (double)i / (double)hd);
        for (size_t p = 0; p < positions; p++) {
            const double angle = (double)p * freq;
            cos_t[p * half + i] = (float)cos(angle);
            sin_t[p * half + i] = (float)sin(angle);
        }
    }
}
