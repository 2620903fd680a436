/* The forward pass's kernel tables, one per instruction set. */
#include "nn_variants.h"

#define VP_NN_TABLE(ISA)                                                                          \
    {                                                                                             \
        vp_matmul_packed_floats_##ISA, vp_matmul_pack_##ISA, vp_matmul_workspace_floats_##ISA,   \
            vp_matmul_##ISA, vp_layernorm_##ISA, vp_rmsnorm_##ISA, vp_gelu_##ISA,                 \
            vp_softmax_##ISA, vp_attention_##ISA, vp_residual_##ISA,                              \
    }

static const vp_nn_kernels scalar_kernels = VP_NN_TABLE(scalar);
#if defined(__x86_64__)
static const vp_nn_kernels avx2_kernels = VP_NN_TABLE(avx2);
static const vp_nn_kernels avx512_kernels = VP_NN_TABLE(avx512);
#endif

const vp_nn_kernels *vp_nn_kernels_for(vp_isa isa)
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
