/* Adam's update of one tensor (kern_table.h's adam), written once: the
 * scalar loop is the specification and does the elements a vector leaves
 * over; after a mapping header (simd_avx2.h, simd_avx512.h) the same
 * operations run SIMD_W elements at a time first. Each operation is one
 * correctly rounded float multiply, add, division or square root in the
 * scalar order, none fused (the kernels are compiled -ffp-contract=off): every
 * variant gives the scalar one's bits. Included once per set with KERN_ISA
 * set (kern_variants.h). */
#include <math.h>

#include "kernels/kern_variants.h"

void KERN_FN(kern_adam)(float *restrict p, float *restrict m, float *restrict v,
                        const float *restrict g, size_t n, const kern_adam_step *s)
{
    // p, m, v, g: (n)
    size_t i = 0;
#ifdef SIMD_W
    const vf decay = vf_set1(s->decay), b1 = vf_set1(s->beta1), b2 = vf_set1(s->beta2);
    const vf one_minus_b1 = vf_set1(s->one_minus_beta1), one_minus_b2 = vf_set1(s->one_minus_beta2);
    const vf c2 = vf_set1(s->correction2_sqrt), eps = vf_set1(s->eps);
    const vf step_size = vf_set1(s->step_size);
    for (; i + SIMD_W <= n; i += SIMD_W) {
        const vf g_i = vf_load(g + i);
        const vf p_decayed = vf_mul(vf_load(p + i), decay);
        const vf m_new = vf_add(vf_mul(vf_load(m + i), b1), vf_mul(one_minus_b1, g_i));
        const vf v_new = vf_add(vf_mul(vf_load(v + i), b2), vf_mul(vf_mul(one_minus_b2, g_i), g_i));
        const vf denom = vf_add(vf_div(vf_sqrt(v_new), c2), eps);
        vf_store(p + i, vf_add(p_decayed, vf_mul(step_size, vf_div(m_new, denom))));
        vf_store(m + i, m_new);
        vf_store(v + i, v_new);
    }
#endif
    for (; i < n; i++) {
        const float p_decayed = p[i] * s->decay;
        const float m_new = m[i] * s->beta1 + s->one_minus_beta1 * g[i];
        const float v_new = v[i] * s->beta2 + s->one_minus_beta2 * g[i] * g[i];
        const float denom = sqrtf(v_new) / s->correction2_sqrt + s->eps;
        p[i] = p_decayed + s->step_size * (m_new / denom);
        m[i] = m_new;
        v[i] = v_new;
    }
}
