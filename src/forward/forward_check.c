/* The forward pass's checks (vp_forward_check) and the memory estimate they rest on. */
#include <math.h>
#include <unistd.h>

#include "forward/network.h"
#include "forward/run.h"

static size_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)-1;
}

/* The bytes a run of a model shaped with recompute as given would take, in
   double, and of those the weights'; HUGE_VAL when what the backward keeps
   would not even fit in an address (it grows with depth times batch, so it
   is sized in double first, before any size_t product can wrap). */
static double run_bytes_as(const vp_config *cfg, const vp_forward_options *o, int recompute,
                           double *weights)
{
    /* every size was range-checked, so the other products stay far below 2^64 */
    const kern_table *kern = kern_current();
    fw_model shape = {0};
    fw_model_shape_as(&shape, cfg, o, recompute);
    shape.kernels = kern;
    *weights = (double)fw_model_shape_floats(&shape, kern) * sizeof(float);
    const double kept = (double)fw_saved_row_floats(&shape) * (double)(o->batch * o->tokens);
    if (shape.backward && kept * sizeof(float) > 9e18)
        return HUGE_VAL;
    return *weights + (double)fw_run_bytes(&shape, o->batch * o->tokens, o->threads, o->tokens);
}

int fw_recomputes(const vp_config *cfg, const vp_forward_options *o)
{
    if (!cfg->grad || o->activations == VP_ACTIVATIONS_KEEP)
        return 0;
    if (o->activations == VP_ACTIVATIONS_RECOMPUTE)
        return 1;
    const double half = (double)physical_memory() / 2.0;
    double weights;
    return run_bytes_as(cfg, o, 0, &weights) > half && run_bytes_as(cfg, o, 1, &weights) <= half;
}

vp_status fw_memory_needed(const vp_config *cfg, const vp_forward_options *o, size_t *bytes,
                           size_t *weight_bytes, vp_error *err)
{
    double weights;
    const double total = run_bytes_as(cfg, o, fw_recomputes(cfg, o), &weights);
    if (total == HUGE_VAL)
        return vp_fail(err, VP_EOVERFLOW, "the backward's activations do not fit in an address");
    if (total > 9e18)
        return vp_fail(err, VP_EOVERFLOW, "the network's memory does not fit in an address");
    *bytes = (size_t)total;
    *weight_bytes = (size_t)weights;
    return VP_OK;
}

/* The backward's own demands: a loss it has, tokens for next, and in a
   weights file a head of the vocabulary's shape and a final norm as asked. */
static vp_status check_grad(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    vp_status s = vp_loss_check(o->loss, err);
    if (s != VP_OK)
        return s;
    if (o->loss == VP_LOSS_NEXT && o->tokens < 2)
        return vp_fail(err, VP_EINVAL,
                       "loss next with 1 token per sequence: no token has a next one to "
                       "predict; use at least 2 tokens, or loss copy");
    if (!o->weights)
        return VP_OK;
    /* the head reads the embedding's width: OPT's project_out maps the stream to it */
    const size_t e = o->embed_dim ? o->embed_dim : o->width;
    const vp_tensor_info *head = vp_safetensors_find(o->weights, "head.weight");
    if (!head && o->loss != VP_LOSS_RANDOM && !o->tie_embeddings)
        return vp_fail(err, VP_EINVAL,
                       "tensor 'head.weight' is missing: loss %s needs the output head "
                       "(head.weight [%zu, %zu], head.bias [%zu]); add it to the file, tie "
                       "the head to the embedding, or use loss random",
                       vp_loss_name(o->loss), o->vocab, e, o->vocab);
    if (head && (head->rank != 2 || head->shape[0] != o->vocab || head->shape[1] != e))
        return vp_fail(err, VP_EINVAL,
                       "tensor 'head.weight' is not [%zu, %zu]: the head must map the width "
                       "%zu to the vocabulary of %zu (embed.weight's)",
                       o->vocab, e, e, o->vocab);
    const int in_file = vp_safetensors_find(o->weights, "final_norm.weight") != NULL;
    if (cfg->final_norm != VP_FINAL_NORM_DEFAULT &&
        in_file != (cfg->final_norm == VP_FINAL_NORM_YES))
        return vp_fail(err, VP_EINVAL,
                       "final norm %s asked, but the weights file %s final_norm.weight; the "
                       "file decides: drop the final-norm option",
                       in_file ? "no" : "yes", in_file ? "has" : "has no");
    return VP_OK;
}

/* vp_forward_check's caps beyond forward.h's VP_FORWARD_MAX_*: threads; tokens
   in all (batch x tokens); Gemma-2's factors and the embedding variance, whose
   float weights must hold them; a gain's, likewise (its messages say the same
   numbers). */
#define FW_MAX_THREADS 1024
#define FW_MAX_ROWS (16u * 1024 * 1024)
#define FW_FACTOR_MIN 1e-30
#define FW_FACTOR_MAX 1e30
#define FW_GAIN_MIN 1e-15
#define FW_GAIN_MAX 1e15

/* The shape: each size in its range, the heads dividing what they share,
   the enums' values known, the token ids in the vocabulary. */
static vp_status check_shape(const vp_forward_options *o, vp_error *err)
{
    const struct {
        const char *name;
        size_t value, min, max;
    } sizes[] = {
        {"width", o->width, 1, VP_FORWARD_MAX_WIDTH},
        {"heads", o->heads, 1, VP_FORWARD_MAX_WIDTH},
        {"kv-heads", o->kv_heads ? o->kv_heads : 1, 1, o->heads},
        {"head-dim", o->head_dim ? o->head_dim : 1, 1, VP_FORWARD_MAX_WIDTH},
        {"ffn-mult", o->ffn_mult, 1, VP_FORWARD_MAX_FFN_MULT},
        /* an exact width when given; ffn-mult's stays bounded by its own range */
        {"ffn-width", o->ffn_width ? o->ffn_width : 1, 1, VP_FORWARD_MAX_FFN_WIDTH},
        {"vocab", o->vocab, 1, VP_FORWARD_MAX_VOCAB},
        {"batch", o->batch, 1, VP_FORWARD_MAX_BATCH},
        {"tokens", o->tokens, 1, VP_FORWARD_MAX_TOKENS},
        {"threads", o->threads, 1, FW_MAX_THREADS},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (sizes[i].value < sizes[i].min || sizes[i].value > sizes[i].max)
            return vp_fail(err, VP_EINVAL, "%s is %zu; it must be from %zu to %zu", sizes[i].name,
                           sizes[i].value, sizes[i].min, sizes[i].max);
    if (o->norm == VP_NORM_LAYERNORM && o->width < 2)
        return vp_fail(err, VP_EINVAL,
                       "width 1 with LayerNorm: centring leaves every coordinate "
                       "0; use a width from 2, or RMSNorm");
    if (!o->head_dim && o->width % o->heads != 0)
        return vp_fail(err, VP_EINVAL,
                       "%zu heads do not divide the width %zu: each head needs "
                       "width / heads coordinates, or a head-dim of its own",
                       o->heads, o->width);
    if (o->kv_heads && o->heads % o->kv_heads != 0)
        return vp_fail(err, VP_EINVAL,
                       "kv-heads %zu does not divide the %zu heads: each key and value head "
                       "serves heads / kv-heads query heads; use a divisor of %zu",
                       o->kv_heads, o->heads, o->heads);
    if (o->heads * vp_forward_head_dim(o) > VP_FORWARD_MAX_WIDTH)
        return vp_fail(err, VP_EINVAL,
                       "heads x head-dim is %zu x %zu = %zu; the queries may be at most %u "
                       "wide",
                       o->heads, vp_forward_head_dim(o), o->heads * vp_forward_head_dim(o),
                       VP_FORWARD_MAX_WIDTH);
    if (o->batch * o->tokens > FW_MAX_ROWS)
        return vp_fail(err, VP_EINVAL, "batch x tokens is %zu; at most %u tokens in all",
                       o->batch * o->tokens, FW_MAX_ROWS);
    if (o->norm != VP_NORM_LAYERNORM && o->norm != VP_NORM_RMSNORM)
        return vp_fail(err, VP_EINVAL, "the norm must be LayerNorm or RMSNorm");
    vp_status s = vp_mlp_check(o->mlp, err);
    if (s != VP_OK || (s = vp_bias_check(o->bias, err)) != VP_OK)
        return s;
    for (size_t i = 0; o->token_ids && i < o->batch * o->tokens; i++)
        if (o->token_ids[i] >= o->vocab)
            return vp_fail(err, VP_EINVAL,
                           "token id %u at row %zu, column %zu is not below the "
                           "vocab size %zu",
                           o->token_ids[i], i / o->tokens + 1, i % o->tokens + 1, o->vocab);
    return VP_OK;
}

/* The scales: eps, the tied head against the file's, QK-norm's setting,
   Gemma-2's factors, and the embedding variance and gains the float
   weights must hold. */
static vp_status check_scales(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    if (!(o->eps > 0.0 && o->eps < 1.0))
        return vp_fail(err, VP_EINVAL, "eps is %g; it must be > 0 and < 1", o->eps);
    if (o->tie_embeddings && o->weights && vp_safetensors_find(o->weights, "head.weight"))
        return vp_fail(err, VP_EINVAL,
                       "tied embeddings asked, but the weights file has its own head.weight; "
                       "the head is then embed.weight: drop the option or the tensor");
    if ((unsigned)o->qk_norm > VP_QK_NORM_HEAD_LAYERNORM)
        return vp_fail(err, VP_EINVAL,
                       "QK-norm setting %d is not none, per head, full width or a LayerNorm "
                       "per head",
                       o->qk_norm);
    /* Gemma-2's factors: floats' range, 0 where 0 means off */
    const struct {
        const char *name;
        double value;
        int zero_is_off;
    } factors[] = {{"embedding scale", o->embed_scale, 1},
                   {"attention scale", o->attn_scale, 1},
                   {"attention soft cap", o->attn_softcap, 1},
                   {"logit soft cap", o->logit_softcap, 1},
                   {"logit scale", o->logit_scale, 1}};
    for (size_t i = 0; i < sizeof factors / sizeof *factors; i++)
        if (!(factors[i].zero_is_off && factors[i].value == 0.0) &&
            !(factors[i].value >= FW_FACTOR_MIN && factors[i].value <= FW_FACTOR_MAX))
            return vp_fail(err, VP_EINVAL, "the %s is %g; it must be %sfrom 1e-30 to 1e30",
                           factors[i].name, factors[i].value,
                           factors[i].zero_is_off ? "0 (none) or " : "");
    /* the network runs in float: its scales must be floats' */
    if (!o->weights &&
        !(cfg->embedding_var >= FW_FACTOR_MIN && cfg->embedding_var <= FW_FACTOR_MAX))
        return vp_fail(err, VP_EINVAL,
                       "embedding variance %g is beyond what the forward pass's "
                       "float weights hold; it must be from 1e-30 to 1e30",
                       cfg->embedding_var);
    for (size_t k = 1; o->init == VP_INIT_GAIN && !o->weights && k <= vp_config_sub_blocks(cfg);
         k++) {
        const double g = vp_config_gain(cfg, k);
        if (g != 0.0 && !(g >= FW_GAIN_MIN && g <= FW_GAIN_MAX))
            return vp_fail(err, VP_EINVAL,
                           "gain %g (sub-block %zu) is beyond what the forward "
                           "pass's float weights hold; it must be 0 or from 1e-15 to 1e15",
                           g, k);
    }
    return VP_OK;
}

/* The memory: weights and activations within half of the machine's, or
   what would bring them there. */
static vp_status check_memory(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    vp_status status;
    size_t bytes, weight_bytes;
    if ((status = fw_memory_needed(cfg, o, &bytes, &weight_bytes, err)) != VP_OK)
        return status;
    const size_t have = physical_memory();
    const double gib = 1073741824.0;
    /* drawn weights are made as they are used: then the activations and
       the few stored tensors (norms, biases) are all there is */
    const int drawable = !o->weights && o->stored_weights && weight_bytes > bytes / 2;
    double weights;
    const int recomputable = cfg->grad && o->activations == VP_ACTIVATIONS_KEEP &&
                             run_bytes_as(cfg, o, 1, &weights) <= (double)have / 2.0;
    if (bytes > have / 2)
        return vp_fail_fix(err, VP_ENOMEM,
                           drawable       ? VP_FIX_WEIGHTS_DRAWN
                           : recomputable ? VP_FIX_RECOMPUTE
                                          : VP_FIX_SMALLER,
                           "the network would need %.3g GiB, %.3g of stored weights and %.3g of "
                           "activations and workspace, more than half of this machine's %.3g "
                           "GiB",
                           (double)bytes / gib, (double)weight_bytes / gib,
                           (double)(bytes - weight_bytes) / gib, (double)have / gib);
    return VP_OK;
}

vp_status vp_forward_check(const vp_config *cfg, const vp_forward_options *o, vp_error *err)
{
    vp_status status = vp_config_check(cfg, err);
    if (status != VP_OK)
        return status;
    if ((status = check_shape(o, err)) != VP_OK)
        return status;
    if ((status = check_scales(cfg, o, err)) != VP_OK)
        return status;
    if ((status = fw_positions_check(cfg, o, err)) != VP_OK)
        return status;
    if (cfg->grad && (status = check_grad(cfg, o, err)) != VP_OK)
        return status;
    return check_memory(cfg, o, err);
}
