/* The kernel tables, one per instruction set, and the choice of one for the
 * process. Which sets the CPU supports and which one is in use is isa.c's
 * business; this file only maps a set to its functions. */
#include <pthread.h>

#include "kernels/kern_variants.h"

#define KERN_TABLE(ISA)                                                                            \
    {                                                                                              \
        .matmul_packed_floats = kern_matmul_packed_floats_##ISA,                                   \
        .matmul_pack = kern_matmul_pack_##ISA,                                                     \
        .matmul_workspace_floats = kern_matmul_workspace_floats_##ISA,                             \
        .matmul = kern_matmul_##ISA, .layernorm = kern_layernorm_##ISA,                            \
        .matmul_column_block = kern_matmul_column_block_##ISA,                                     \
        .matmul_columns = kern_matmul_columns_##ISA,                                               \
        .matmul_drawn_workspace_floats = kern_matmul_drawn_workspace_floats_##ISA,                 \
        .matmul_drawn_columns = kern_matmul_drawn_columns_##ISA,                                   \
        .matmul_pack_transposed = kern_matmul_pack_transposed_##ISA,                               \
        .matmul_wt_fits = kern_matmul_wt_fits_##ISA,                                               \
        .matmul_wt_columns = kern_matmul_wt_columns_##ISA,                                         \
        .matmul_accumulate = kern_matmul_accumulate_##ISA,                                         \
        .matmul_weight_grad_workspace_floats = kern_matmul_weight_grad_workspace_floats_##ISA,     \
        .matmul_weight_grad = kern_matmul_weight_grad_##ISA, .norm_stats = kern_norm_stats_##ISA,  \
        .layernorm_backward = kern_layernorm_backward_##ISA,                                       \
        .rmsnorm_backward = kern_rmsnorm_backward_##ISA,                                           \
        .norm_param_grads = kern_norm_param_grads_##ISA,                                           \
        .gelu_backward = kern_gelu_backward_##ISA, .gelu_keep = kern_gelu_keep_##ISA,              \
        .gelu_tanh = kern_gelu_tanh_##ISA, .relu = kern_relu_##ISA,                                \
        .scale_add = kern_scale_add_##ISA, .norm_apply = kern_norm_apply_##ISA,                    \
        .silu_mul = kern_silu_mul_##ISA, .gelu_mul = kern_gelu_mul_##ISA,                          \
        .gelu_tanh_backward = kern_gelu_tanh_backward_##ISA,                                       \
        .relu_backward = kern_relu_backward_##ISA,                                                 \
        .silu_mul_backward = kern_silu_mul_backward_##ISA,                                         \
        .gelu_mul_backward = kern_gelu_mul_backward_##ISA,                                         \
        .attention_backward = kern_attention_backward_##ISA,                                       \
        .cross_entropy = kern_cross_entropy_##ISA, .rope = kern_rope_##ISA,                        \
        .rmsnorm = kern_rmsnorm_##ISA, .gelu = kern_gelu_##ISA, .softmax = kern_softmax_##ISA,     \
        .layernorm_keep = kern_layernorm_keep_##ISA, .rmsnorm_keep = kern_rmsnorm_keep_##ISA,      \
        .attention = kern_attention_##ISA, .residual = kern_residual_##ISA,                        \
        .square_sum = kern_square_sum_##ISA, .adam = kern_adam_##ISA,                              \
        .square_sum_wide = kern_square_sum_wide_##ISA, .gauss_fill = kern_gauss_fill_##ISA,        \
        .gauss_panel = kern_gauss_panel_##ISA, .uniform_panel = kern_uniform_panel_##ISA,          \
        .mc_noise_sums = kern_mc_noise_sums_##ISA, .mc_add_branch = kern_mc_add_branch_##ISA,      \
        .mc_add_and_normalise = kern_mc_add_and_normalise_##ISA,                                   \
    }

static const kern_table scalar_table = KERN_TABLE(scalar);
#if defined(__x86_64__)
static const kern_table avx2_table = KERN_TABLE(avx2);
static const kern_table avx512_table = KERN_TABLE(avx512);
#endif

/* NULL where this build has no variant. */
static const kern_table *const tables[VP_ISA_COUNT] = {
    [VP_ISA_SCALAR] = &scalar_table,
#if defined(__x86_64__)
    [VP_ISA_AVX2] = &avx2_table,
    [VP_ISA_AVX512] = &avx512_table,
#endif
};

int kern_built(vp_isa isa)
{
    return (unsigned)isa < VP_ISA_COUNT && tables[isa] != NULL;
}

const kern_table *kern_for(vp_isa isa)
{
    return vp_isa_supported(isa) ? tables[isa] : &scalar_table;
}

static pthread_once_t current_once = PTHREAD_ONCE_INIT;
static const kern_table *current;

static void choose_current(void)
{
    current = kern_for(vp_isa_current());
}

const kern_table *kern_current(void)
{
    pthread_once(&current_once, choose_current);
    return current;
}
