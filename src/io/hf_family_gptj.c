/* GPT-J's config.json (GPTJConfig): one LayerNorm (ln_1) shared by attention and the MLP
 * side by side, RoPE on the first rotary_dim coordinates of each head in GPT-J's
 * every-two pairing, no biases in attention, the MLP's and the head's biased. */
#include <string.h>

#include "hf_config_keys.h"
#include "hf_families.h"

const hf_key hf_gptj_keys[] = {
    {"n_embd", HF_KEY_READ, NULL},
    {"hidden_size", HF_KEY_READ, NULL},
    {"n_head", HF_KEY_READ, NULL},
    {"n_layer", HF_KEY_READ, NULL},
    {"vocab_size", HF_KEY_READ, NULL},
    {"n_inner", HF_KEY_READ, NULL},
    {"rotary_dim", HF_KEY_READ, NULL},
    {"activation_function", HF_KEY_READ, NULL},
    {"layer_norm_epsilon", HF_KEY_READ, NULL},
    {"tie_word_embeddings", HF_KEY_READ, NULL},
    {"n_positions", HF_KEY_HARMLESS,
     "the longest context: GPT-J's sinusoids are a table of its rows, each row's angles "
     "independent of the count"},
    {"pad_token_id", HF_KEY_HARMLESS, "GPT-J's embedding has no padding row"},
    {NULL, HF_KEY_READ, NULL},
};

/* GPTJAttention's sinusoids: base 10000 over rotary_dim, fixed by the model
   (no rope_theta key); GPTJConfig's rotary_dim is 64 where absent. With
   rotary_dim null the table spans the whole width n_embd while it rotates
   heads of n_embd / n_head, which only one head survives, so varprof asks
   for a rotary_dim. */
static vp_status rotary(hf_json *c, vp_hf_architecture *a)
{
    size_t r = 0;
    const size_t fallback = hf_field(c, "rotary_dim") ? 0 : 64;
    vp_status s = hf_whole(c, "rotary_dim", 0, fallback, 1, VP_FORWARD_MAX_WIDTH, &r);
    if (s != VP_OK)
        return s;
    if (r == 0)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'rotary_dim' null rotates each head with sinusoids of the "
                       "full width; varprof reads GPT-J with a rotary_dim, even and at most the "
                       "head's %zu",
                       a->head_dim);
    if (r % 2 != 0 || r > a->head_dim)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'rotary_dim' %zu must be even and at most the head's %zu", r,
                       a->head_dim);
    a->rope_fraction = (double)r / (double)a->head_dim;
    a->rope_theta = 10000.0;
    a->positions = VP_POSITIONS_ROPE_INTERLEAVED;
    return VP_OK;
}

static vp_status activation(hf_json *c, vp_hf_architecture *a)
{
    const char *act = NULL;
    vp_status s = hf_text(c, "activation_function", "gelu_new", &act);
    if (s != VP_OK)
        return s;
    if (strcmp(act, "gelu_new") == 0 || strcmp(act, "gelu_pytorch_tanh") == 0)
        a->mlp = VP_MLP_GELU_TANH;
    else if (strcmp(act, "gelu") == 0)
        a->mlp = VP_MLP_GELU;
    else
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: 'activation_function' '%.40s' is not one varprof runs "
                       "(gelu_new, gelu_pytorch_tanh, gelu)",
                       act);
    return VP_OK;
}

vp_status hf_read_gptj(hf_json *c, vp_hf_architecture *a)
{
    size_t inner = 0;
    vp_status s = hf_width_and_heads(c, "n_embd", "n_head", 0, a);
    if (s == VP_OK)
        s = hf_whole(c, "n_layer", 1, 0, 1, VP_MAX_LAYERS, &a->layers);
    if (s == VP_OK)
        s = hf_whole(c, "vocab_size", 1, 0, 1, VP_FORWARD_MAX_VOCAB, &a->vocab);
    if (s == VP_OK)
        s = hf_whole(c, "n_inner", 0, 0, 1, VP_FORWARD_MAX_FFN_WIDTH, &inner);
    if (s == VP_OK)
        s = hf_real(c, "layer_norm_epsilon", 1e-5, &a->eps);
    if (s == VP_OK)
        s = hf_boolean(c, "tie_word_embeddings", 0, &a->tied);
    if (s == VP_OK)
        s = activation(c, a);
    if (s == VP_OK)
        s = rotary(c, a);
    if (s != VP_OK)
        return s;
    a->ffn_width = inner ? inner : 4 * a->width; /* GPTJMLP's 4 n_embd for n_inner null */
    if (a->ffn_width > VP_FORWARD_MAX_FFN_WIDTH)
        return vp_fail(c->err, VP_EFORMAT,
                       "config.json: the MLP's width 4 n_embd = %zu is above %u", a->ffn_width,
                       VP_FORWARD_MAX_FFN_WIDTH);
    a->bias = VP_BIAS_MLP;
    a->head_bias = 1; /* GPTJForCausalLM's lm_head is an nn.Linear with its bias */
    a->norm = VP_NORM_LAYERNORM;
    a->placement = VP_PARALLEL;
    a->residual = VP_RESIDUAL_PARALLEL_SHARED_NORM;
    return VP_OK;
}
