/* Rotary position embedding's table of angles (forward/rope.h). */
#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include "forward/rope.h"

/* Llama 3's frequency for f (forward.h, vp_rope_scaling), Hugging Face's
   _compute_llama3_parameters in double */
static double llama3_frequency(double f, const vp_rope_scaling *s)
{
    const double wavelength = 2.0 * M_PI / f;
    const double low_wavelength = s->original_context / s->low_freq_factor;
    const double high_wavelength = s->original_context / s->high_freq_factor;
    if (wavelength > low_wavelength)
        return f / s->factor;
    if (wavelength < high_wavelength)
        return f;
    const double smooth = (s->original_context / wavelength - s->low_freq_factor) /
                          (s->high_freq_factor - s->low_freq_factor);
    return (1.0 - smooth) * f / s->factor + smooth * f;
}

void fw_rope_table(float *cos_t, float *sin_t, size_t positions, size_t hd, double theta,
                   const vp_rope_scaling *scaling)
{
    fw_rope_table_linear(cos_t, sin_t, positions, hd, theta, scaling, 0.0);
}

void fw_rope_table_linear(float *cos_t, float *sin_t, size_t positions, size_t hd, double theta,
                          const vp_rope_scaling *scaling, double linear)
{
    const size_t half = hd / 2;
    for (size_t i = 0; i < half; i++) {
        /* in double: at position 4095 a float angle would be off by ~1e-4 rad */
        double freq = pow(theta, -2.0 * (double)i / (double)hd);
        if (scaling && scaling->factor > 0.0)
            freq = llama3_frequency(freq, scaling);
        if (linear > 0.0) /* transformers' _compute_linear_scaling_rope_parameters */
            freq = freq / linear;
        for (size_t p = 0; p < positions; p++) {
            const double angle = (double)p * freq;
            cos_t[p * half + i] = (float)cos(angle);
            sin_t[p * half + i] = (float)sin(angle);
        }
    }
}
