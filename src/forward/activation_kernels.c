/* The one table from an activation (vp_activation, core's) to the kernels
 * that run it forward and back, plain and gated; the MLP's activation step
 * and its backward read it and nothing else. */
#include "forward/network.h"

/* The kernels of one activation; NULL where no MLP kind uses that form. */
typedef struct {
    void (*plain)(const kern_table *kern, float *out, const float *a, size_t n);
    void (*gated)(const kern_table *kern, float *out, const float *a, const float *b, size_t n);
    /* da of act(a): cdf is the erf GELU's kept Phi (vp_mlp_traits.keeps_cdf) */
    void (*plain_backward)(const kern_table *kern, float *da, const float *dy, const float *a,
                           const float *cdf, size_t n);
    /* da and db of act(a) b */
    void (*gated_backward)(const kern_table *kern, float *da, float *db, const float *dy,
                           const float *a, const float *b, size_t n);
} activation_kernels;

static void gelu(const kern_table *kern, float *out, const float *a, size_t n)
{
    kern->gelu(out, a, n);
}

static void gelu_mul(const kern_table *kern, float *out, const float *a, const float *b, size_t n)
{
    kern->gelu_mul(out, a, b, n);
}

static void gelu_backward(const kern_table *kern, float *da, const float *dy, const float *a,
                          const float *cdf, size_t n)
{
    kern->gelu_backward(da, dy, a, cdf, n);
}

static void gelu_mul_backward(const kern_table *kern, float *da, float *db, const float *dy,
                              const float *a, const float *b, size_t n)
{
    kern->gelu_mul_backward(da, db, dy, a, b, n);
}

static void gelu_tanh(const kern_table *kern, float *out, const float *a, size_t n)
{
    kern->gelu_tanh(out, a, n);
}

/* Gemma's: PyTorch's gelu_tanh(gate) * up, two float steps */
static void gelu_tanh_mul(const kern_table *kern, float *out, const float *a, const float *b,
                          size_t n)
{
    kern->gelu_tanh(out, a, n);
    for (size_t i = 0; i < n; i++)
        out[i] *= b[i];
}

static void gelu_tanh_backward(const kern_table *kern, float *da, const float *dy, const float *a,
                               const float *cdf, size_t n)
{
    (void)cdf;
    kern->gelu_tanh_backward(da, dy, a, n);
}

/* Gemma's gelu_tanh(a) b, as autograd takes it apart: db = dy gelu_tanh(a),
   da = gelu_tanh'(a) (dy b), from the tanh GELU's kernels */
static void gelu_tanh_mul_backward(const kern_table *kern, float *da, float *db, const float *dy,
                                   const float *a, const float *b, size_t n)
{
    kern->gelu_tanh(db, a, n);
    for (size_t i = 0; i < n; i++) {
        db[i] *= dy[i];
        da[i] = dy[i] * b[i];
    }
    kern->gelu_tanh_backward(da, da, a, n);
}

static void relu(const kern_table *kern, float *out, const float *a, size_t n)
{
    kern->relu(out, a, n);
}

static void relu_backward(const kern_table *kern, float *da, const float *dy, const float *a,
                          const float *cdf, size_t n)
{
    (void)cdf;
    kern->relu_backward(da, dy, a, n);
}

static void silu_mul(const kern_table *kern, float *out, const float *a, const float *b, size_t n)
{
    kern->silu_mul(out, a, b, n);
}

static void silu_mul_backward(const kern_table *kern, float *da, float *db, const float *dy,
                              const float *a, const float *b, size_t n)
{
    kern->silu_mul_backward(da, db, dy, a, b, n);
}

_Static_assert(VP_ACTIVATION_COUNT == 4,
               "a new activation needs a row in activations (forward/activation_kernels.c)");

static const activation_kernels activations[VP_ACTIVATION_COUNT] = {
    [VP_ACTIVATION_GELU_ERF] = {gelu, gelu_mul, gelu_backward, gelu_mul_backward},
    [VP_ACTIVATION_GELU_TANH] = {gelu_tanh, gelu_tanh_mul, gelu_tanh_backward,
                                 gelu_tanh_mul_backward},
    [VP_ACTIVATION_RELU] = {relu, NULL, relu_backward, NULL},
    [VP_ACTIVATION_SILU] = {NULL, silu_mul, NULL, silu_mul_backward},
};

void fw_activate(const kern_table *kern, vp_mlp mlp, float *out, const float *a, const float *b,
                 size_t n)
{
    const vp_mlp_traits *t = vp_mlp_traits_of(mlp);
    const activation_kernels *k = &activations[t->activation];
    if (t->gated)
        k->gated(kern, out, a, b, n);
    else
        k->plain(kern, out, a, n);
}

void fw_activate_backward(const kern_table *kern, vp_mlp mlp, float *da, float *db, const float *dy,
                          const float *a, const float *b, const float *cdf, size_t n)
{
    const vp_mlp_traits *t = vp_mlp_traits_of(mlp);
    const activation_kernels *k = &activations[t->activation];
    if (t->gated)
        k->gated_backward(kern, da, db, dy, a, b, n);
    else
        k->plain_backward(kern, da, dy, a, cdf, n);
}
