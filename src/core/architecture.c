/* The architecture's axis tables: one row per MLP kind, activation,
 * positions setting, bias setting and loss (varprof/architecture.h). */
#include "varprof/architecture.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

#include "core/name_table.h"

/* A new value of an axis fails here until every table that reads the axis
 * has its row: this file's, and src/forward/activation_kernels.c's for an
 * activation (HACKING.md, "Architecture axes"). */
_Static_assert(VP_MLP_COUNT == 6, "a new MLP kind needs a row in mlps (core/architecture.c)");
_Static_assert(VP_ACTIVATION_COUNT == 4,
               "a new activation needs a row in activations (core/architecture.c) and in "
               "fw_activation_kernels (forward/activation_kernels.c)");
_Static_assert(VP_POSITIONS_COUNT == 5,
               "a new positions setting needs a row in positions (core/architecture.c)");
_Static_assert(VP_BIAS_COUNT == 4,
               "a new bias setting needs a row in biases (core/architecture.c)");
_Static_assert(VP_LOSS_COUNT == 3, "a new loss needs a row in losses (core/architecture.c)");
_Static_assert(VP_EMBEDDING_NORM_COUNT == 2,
               "a new embedding norm needs a row in embedding_norms (core/architecture.c)");
_Static_assert(VP_RESIDUAL_COUNT == 3,
               "a new residual form needs a row in residuals (core/architecture.c)");

static const vp_mlp_traits mlps[VP_MLP_COUNT] = {
    [VP_MLP_GELU] = {"gelu", 0, VP_ACTIVATION_GELU_ERF, 1},
    [VP_MLP_GELU_TANH] = {"gelu-tanh", 0, VP_ACTIVATION_GELU_TANH, 0},
    [VP_MLP_RELU] = {"relu", 0, VP_ACTIVATION_RELU, 0},
    [VP_MLP_SWIGLU] = {"swiglu", 1, VP_ACTIVATION_SILU, 0},
    [VP_MLP_GEGLU] = {"geglu", 1, VP_ACTIVATION_GELU_ERF, 0},
    [VP_MLP_GEGLU_TANH] = {"geglu-tanh", 1, VP_ACTIVATION_GELU_TANH, 0},
};

/* act(z) / z: GELU's is Phi (the same function as ever, so that the gain
   init's weights keep their bits); the tanh GELU's the sigmoid of 2u; SiLU's
   the sigmoid */
static double gelu_erf_ratio(double z)
{
    return gsl_cdf_ugaussian_P(z);
}

static double gelu_tanh_ratio(double z)
{
    return 1.0 / (1.0 + exp(-2.0 * 0.79788456080286535588 * (z + 0.044715 * z * z * z)));
}

static double relu_ratio(double z)
{
    return z > 0.0 ? 1.0 : 0.0;
}

static double silu_ratio(double z)
{
    return 1.0 / (1.0 + exp(-z));
}

static const vp_activation_traits activations[VP_ACTIVATION_COUNT] = {
    [VP_ACTIVATION_GELU_ERF] = {"gelu-erf", gelu_erf_ratio, 0.0},
    [VP_ACTIVATION_GELU_TANH] = {"gelu-tanh", gelu_tanh_ratio, 0.0},
    [VP_ACTIVATION_RELU] = {"relu", relu_ratio, 0.5}, /* half the Gaussian, exactly */
    [VP_ACTIVATION_SILU] = {"silu", silu_ratio, 0.0},
};

static const vp_positions_traits positions[VP_POSITIONS_COUNT] = {
    [VP_POSITIONS_NONE] = {"none", 0, VP_ROTARY_NONE, 0},
    [VP_POSITIONS_LEARNED] = {"learned", 1, VP_ROTARY_NONE, 0},
    [VP_POSITIONS_ROPE] = {"rope", 0, VP_ROTARY_HALF, 0},
    [VP_POSITIONS_ROPE_INTERLEAVED] = {"rope-interleaved", 0, VP_ROTARY_INTERLEAVED, 0},
    [VP_POSITIONS_ALIBI] = {"alibi", 0, VP_ROTARY_NONE, 1},
};

/* b^n for b = 2^(-8 / p), b rounded to float first and the power then
   rounded once: transformers' float32 base and torch.pow */
static float alibi_power(size_t p, size_t n)
{
    const float base = (float)exp2(-8.0 / (double)p);
    return (float)pow((double)base, (double)n);
}

void vp_alibi_slopes(float *slopes, size_t H)
{
    if (H == 0)
        return;
    size_t p = 1;
    while (2 * p <= H)
        p *= 2;
    for (size_t h = 0; h < p; h++)
        slopes[h] = alibi_power(p, h + 1);
    /* the heads past P: odd powers of the next power of two's base */
    for (size_t i = 0; p + i < H; i++)
        slopes[p + i] = alibi_power(2 * p, 2 * i + 1);
}

static const vp_residual_traits residuals[VP_RESIDUAL_COUNT] = {
    [VP_RESIDUAL_SEQUENTIAL] = {"sequential", 1, 2, 1},
    [VP_RESIDUAL_PARALLEL_SHARED_NORM] = {"parallel-shared-norm", 2, 1, 1},
    [VP_RESIDUAL_PARALLEL_TWO_NORMS] = {"parallel-two-norms", 2, 1, 2},
};

static const vp_embedding_norm_traits embedding_norms[VP_EMBEDDING_NORM_COUNT] = {
    [VP_EMBEDDING_NORM_NONE] = {"none", 0, NULL},
    [VP_EMBEDDING_NORM_LAYERNORM] = {"layernorm", 1, "embed_norm"},
};

static const vp_bias_traits biases[VP_BIAS_COUNT] = {
    [VP_BIAS_ALL] = {"yes", "every projection", 1, 1, 1},
    [VP_BIAS_NONE] = {"no", "none", 0, 0, 0},
    [VP_BIAS_QKV] = {"qkv", "the attention's q, k and v alone", 1, 0, 0},
    [VP_BIAS_MLP] = {"mlp", "the MLP's and the head's alone", 0, 1, 0},
};

static const vp_loss_traits losses[VP_LOSS_COUNT] = {
    [VP_LOSS_COPY] = {"copy", 1, 0},
    [VP_LOSS_NEXT] = {"next", 1, 0},
    [VP_LOSS_RANDOM] = {"random", 0, 1},
};

const vp_mlp_traits *vp_mlp_traits_of(vp_mlp mlp)
{
    return (unsigned)mlp < VP_MLP_COUNT ? &mlps[mlp] : NULL;
}

const vp_activation_traits *vp_activation_traits_of(vp_activation activation)
{
    return (unsigned)activation < VP_ACTIVATION_COUNT ? &activations[activation] : NULL;
}

const vp_positions_traits *vp_positions_traits_of(vp_positions p)
{
    return (unsigned)p < VP_POSITIONS_COUNT ? &positions[p] : NULL;
}

const vp_bias_traits *vp_bias_traits_of(vp_bias bias)
{
    return (unsigned)bias < VP_BIAS_COUNT ? &biases[bias] : NULL;
}

const vp_loss_traits *vp_loss_traits_of(vp_loss loss)
{
    return (unsigned)loss < VP_LOSS_COUNT ? &losses[loss] : NULL;
}

const char *vp_mlp_name(vp_mlp mlp)
{
    return name_table_name(NAME_ROWS(mlps), (int)mlp);
}

vp_status vp_mlp_parse(const char *name, vp_mlp *out, vp_error *err)
{
    int value = 0;
    const vp_status s = name_table_parse(NAME_ROWS(mlps), "MLP", name, &value, err);
    if (s == VP_OK)
        *out = (vp_mlp)value;
    return s;
}

int vp_mlp_gated(vp_mlp mlp)
{
    return (unsigned)mlp < VP_MLP_COUNT && mlps[mlp].gated;
}

const char *vp_activation_name(vp_activation activation)
{
    return name_table_name(NAME_ROWS(activations), (int)activation);
}

const char *vp_bias_name(vp_bias bias)
{
    return name_table_name(NAME_ROWS(biases), (int)bias);
}

vp_status vp_bias_parse(const char *name, vp_bias *out, vp_error *err)
{
    name_table t = NAME_ROWS(biases);
    t.gloss = &biases[0].gloss;
    int value = 0;
    const vp_status s = name_table_parse(t, "bias", name, &value, err);
    if (s == VP_OK)
        *out = (vp_bias)value;
    return s;
}

const char *vp_loss_name(vp_loss loss)
{
    return name_table_name(NAME_ROWS(losses), (int)loss);
}

vp_status vp_loss_parse(const char *name, vp_loss *out, vp_error *err)
{
    int value = 0;
    const vp_status s = name_table_parse(NAME_ROWS(losses), "loss", name, &value, err);
    if (s == VP_OK)
        *out = (vp_loss)value;
    return s;
}

const char *vp_positions_name(vp_positions p)
{
    return name_table_name(NAME_ROWS(positions), (int)p);
}

vp_status vp_positions_parse(const char *name, vp_positions *out, vp_error *err)
{
    int value = 0;
    const vp_status s = name_table_parse(NAME_ROWS(positions), "positions", name, &value, err);
    if (s == VP_OK)
        *out = (vp_positions)value;
    return s;
}

vp_status vp_mlp_check(vp_mlp mlp, vp_error *err)
{
    return name_table_check(NAME_ROWS(mlps), "MLP kind", (int)mlp, err);
}

vp_status vp_bias_check(vp_bias bias, vp_error *err)
{
    return name_table_check(NAME_ROWS(biases), "bias setting", (int)bias, err);
}

vp_status vp_loss_check(vp_loss loss, vp_error *err)
{
    return name_table_check(NAME_ROWS(losses), "loss", (int)loss, err);
}

vp_status vp_positions_check(vp_positions p, vp_error *err)
{
    return name_table_check(NAME_ROWS(positions), "positions", (int)p, err);
}

const vp_residual_traits *vp_residual_traits_of(vp_residual residual)
{
    return (unsigned)residual < VP_RESIDUAL_COUNT ? &residuals[residual] : NULL;
}

const char *vp_residual_name(vp_residual residual)
{
    return name_table_name(NAME_ROWS(residuals), (int)residual);
}

vp_status vp_residual_parse(const char *name, vp_residual *out, vp_error *err)
{
    int value = 0;
    const vp_status s = name_table_parse(NAME_ROWS(residuals), "residual form", name, &value, err);
    if (s == VP_OK)
        *out = (vp_residual)value;
    return s;
}

vp_status vp_residual_check(vp_residual residual, vp_error *err)
{
    return name_table_check(NAME_ROWS(residuals), "residual form", (int)residual, err);
}

const vp_embedding_norm_traits *vp_embedding_norm_traits_of(vp_embedding_norm norm)
{
    return (unsigned)norm < VP_EMBEDDING_NORM_COUNT ? &embedding_norms[norm] : NULL;
}

const char *vp_embedding_norm_name(vp_embedding_norm norm)
{
    return name_table_name(NAME_ROWS(embedding_norms), (int)norm);
}

vp_status vp_embedding_norm_parse(const char *name, vp_embedding_norm *out, vp_error *err)
{
    int value = 0;
    const vp_status s =
        name_table_parse(NAME_ROWS(embedding_norms), "embedding norm", name, &value, err);
    if (s == VP_OK)
        *out = (vp_embedding_norm)value;
    return s;
}

vp_status vp_embedding_norm_check(vp_embedding_norm norm, vp_error *err)
{
    return name_table_check(NAME_ROWS(embedding_norms), "embedding norm", (int)norm, err);
}
