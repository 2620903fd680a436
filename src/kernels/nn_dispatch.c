/* The forward pass's kernel tables, one per instruction set. */
#include "nn_variants.h"

#define KERN_NN_TABLE(ISA)                                                                          \
    {                                                                                             \
        kern_matmul_packed_floats_##ISA, kern_matmul_pack_##ISA, kern_matmul_workspace_floats_##ISA,   \
            kern_matmul_##ISA, kern_layernorm_##ISA, kern_rmsnorm_##ISA, kern_gelu_##ISA,                 \
            kern_softmax_##ISA, kern_attention_##ISA, kern_residual_##ISA,                              \
    }

static const kern_nn_table scalar_kernels = KERN_NN_TABLE(scalar);
#if defined(__x86_64__)
static const kern_nn_table avx2_kernels = KERN_NN_TABLE(avx2);
static const kern_nn_table avx512_kernels = KERN_NN_TABLE(avx512);
#endif

const kern_nn_table *kern_nn_for(vp_isa isa)
{
#if defined(__x86_64__)
    if (isa == VP_ISA_AVX512)
        return &avx512_kernels;
    if (isa == VP_ISA_AVX2)
        return &avx2_kernels;
#endif
    (void)isa;
    return &scalar_kernels;
}
