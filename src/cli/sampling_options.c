/* The sampled engines' options: the Monte Carlo's and the forward pass's. */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "commands.h"
#include "varprof/hf_checkpoint.h"

size_t default_threads(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = cores >= 1 ? (size_t)cores : 1;
    return n > VP_MC_MAX_THREADS ? VP_MC_MAX_THREADS : n;
}

static int read_norm(const cli_args *args, vp_norm *norm, double *eps)
{
    static const char *const norms[] = {"layernorm", "rmsnorm", NULL};
    int which = 0, rc;
    if ((rc = cli_choice(args, OPT_NORM, norms, &which)) != EXIT_OK)
        return rc;
    *norm = which == 1 ? VP_NORM_RMSNORM : VP_NORM_LAYERNORM;
    if ((rc = cli_double(args, OPT_NORM_EPS, 0.0, 1, eps)) != EXIT_OK)
        return rc;
    if (!(*eps < 1.0))
        return cli_usage_error("--norm-eps: '%s' is out of range; it must be > 0 and < 1",
                               args->value[OPT_NORM_EPS]);
    return EXIT_OK;
}

int read_sampling_options(const cli_args *args, vp_mc_options *mc)
{
    static const char *const methods[] = {"reduced", "full", NULL};
    vp_mc_options_init(mc);
    mc->threads = default_threads();
    int method = 0, rc;
    size_t seed = (size_t)mc->seed;
    if ((rc = read_norm(args, &mc->norm, &mc->eps)) != EXIT_OK ||
        (rc = cli_choice(args, OPT_METHOD, methods, &method)) != EXIT_OK)
        return rc;
    /* the backward half needs every coordinate: --grad makes full the default */
    if (!args->given[OPT_METHOD] && args->given[OPT_GRAD])
        method = 1;
    mc->method = method == 1 ? VP_MC_FULL : VP_MC_REDUCED;
    const size_t min_width = mc->norm == VP_NORM_LAYERNORM ? 2 : 1;
    if ((rc = cli_size(args, OPT_WIDTH, min_width, VP_MC_MAX_WIDTH, &mc->width)) != EXIT_OK ||
        (rc = cli_size(args, OPT_TRIALS, 2, VP_MC_MAX_TRIALS, &mc->trials)) != EXIT_OK ||
        (rc = cli_size(args, OPT_THREADS, 1, VP_MC_MAX_THREADS, &mc->threads)) != EXIT_OK ||
        (rc = cli_size(args, OPT_SEED, 0, SIZE_MAX, &seed)) != EXIT_OK)
        return rc;
    mc->seed = seed;
    return EXIT_OK;
}

/* --positions, --residual and --rope-fraction, and --rope-theta, which only rope takes */
static int read_positions(const cli_args *args, vp_forward_options *fw)
{
    /* the library's names, so that a new row reaches the option */
    const char *names[VP_POSITIONS_COUNT + 1] = {NULL};
    for (int p = 0; p < VP_POSITIONS_COUNT; p++)
        names[p] = vp_positions_name((vp_positions)p);
    int which = VP_POSITIONS_NONE, rc;
    if ((rc = cli_choice(args, OPT_POSITIONS, names, &which)) != EXIT_OK)
        return rc;
    fw->positions = (vp_positions)which;
    static const char *const forms[] = {"sequential", "parallel-shared-norm", "parallel-two-norms",
                                        NULL};
    int form = VP_RESIDUAL_SEQUENTIAL;
    if ((rc = cli_choice(args, OPT_RESIDUAL, forms, &form)) != EXIT_OK)
        return rc;
    fw->residual = (vp_residual)form;
    if (args->given[OPT_ROPE_FRACTION] && !vp_positions_traits_of(fw->positions)->rotary &&
        !(args->given[OPT_WEIGHTS] && vp_hf_is_checkpoint_dir(args->value[OPT_WEIGHTS])))
        return cli_usage_error("--rope-fraction applies to rotary positions only: add "
                               "--positions rope or rope-interleaved, or drop --rope-fraction");
    if (args->given[OPT_ROPE_FRACTION] &&
        (rc = cli_double(args, OPT_ROPE_FRACTION, 0.0, 1, &fw->rope_fraction)) != EXIT_OK)
        return rc;
    if (!args->given[OPT_ROPE_THETA])
        return EXIT_OK;
    /* a checkpoint directory's config.json says the positions, and weighs
       --rope-theta against its own (weights_arch_adopt) */
    const int checkpoint =
        args->given[OPT_WEIGHTS] && vp_hf_is_checkpoint_dir(args->value[OPT_WEIGHTS]);
    if (!vp_positions_traits_of(fw->positions)->rotary && !checkpoint)
        return cli_usage_error("--rope-theta applies to rotary positions only: add "
                               "--positions rope, or drop --rope-theta");
    if ((rc = cli_double(args, OPT_ROPE_THETA, 0.0, 1, &fw->rope_theta)) != EXIT_OK)
        return rc;
    if (!isfinite(fw->rope_theta))
        return cli_usage_error("--rope-theta: '%s' is out of range; it must be finite and > 0",
                               args->value[OPT_ROPE_THETA]);
    return EXIT_OK;
}

/* --logit-scale, for a network whose head says none: a checkpoint
   directory's config.json says its own (Cohere's logit_scale) */
static int read_logit_scale(const cli_args *args, vp_forward_options *fw)
{
    if (!args->given[OPT_LOGIT_SCALE])
        return EXIT_OK;
    if (args->given[OPT_WEIGHTS] && vp_hf_is_checkpoint_dir(args->value[OPT_WEIGHTS]))
        return cli_usage_error("--logit-scale: a checkpoint directory's config.json says its "
                               "logits' scale (Cohere's logit_scale, 1 elsewhere); drop "
                               "--logit-scale");
    int rc = cli_double(args, OPT_LOGIT_SCALE, 0.0, 1, &fw->logit_scale);
    if (rc == EXIT_OK && !(fw->logit_scale >= 1e-30 && fw->logit_scale <= 1e30))
        return cli_usage_error("--logit-scale: '%s' is out of range; it must be from 1e-30 "
                               "to 1e30",
                               args->value[OPT_LOGIT_SCALE]);
    return rc;
}

/* --sliding-window and --window-pattern: the window on every layer, or on
   all but each N-th; a checkpoint directory's config.json says its own */
static int read_window(const cli_args *args, vp_forward_options *fw)
{
    if (!args->given[OPT_SLIDING_WINDOW] && !args->given[OPT_WINDOW_PATTERN])
        return EXIT_OK;
    if (args->given[OPT_WEIGHTS] && vp_hf_is_checkpoint_dir(args->value[OPT_WEIGHTS]))
        return cli_usage_error("--sliding-window, --window-pattern: a checkpoint directory's "
                               "config.json says its window and which layers slide; drop "
                               "them");
    if (!args->given[OPT_SLIDING_WINDOW])
        return cli_usage_error("--window-pattern needs --sliding-window: the pattern says "
                               "which layers the window is on");
    int rc = cli_size(args, OPT_SLIDING_WINDOW, 1, VP_FORWARD_MAX_TOKENS, &fw->sliding_window);
    if (rc == EXIT_OK)
        rc = cli_size(args, OPT_WINDOW_PATTERN, 2, VP_MAX_LAYERS, &fw->window_pattern);
    return rc;
}

/* --heads against the width, --kv-heads against --heads, --head-dim against
   rope and the queries' width */
/* widthless: --weights, whose file's width the heads are held to when it
   is read (vp_forward_infer); a --width of its own is refused then */
static int read_attention_shape(vp_forward_options *fw, int widthless)
{
    if (!widthless && !fw->head_dim && fw->width % fw->heads != 0)
        return cli_usage_error("--heads: %zu heads do not divide the width %zu; each head "
                               "takes width / heads coordinates, unless --head-dim gives it",
                               fw->heads, fw->width);
    if (fw->kv_heads && fw->heads % fw->kv_heads != 0)
        return cli_usage_error("--kv-heads: %zu does not divide the %zu heads; it must be a "
                               "divisor of --heads (1 multi-query, %zu multi-head)",
                               fw->kv_heads, fw->heads, fw->heads);
    const size_t hd = vp_forward_head_dim(fw);
    if (fw->heads * hd > VP_FORWARD_MAX_WIDTH)
        return cli_usage_error("--head-dim: %zu heads of %zu is %zu; --heads x --head-dim "
                               "must be at most %u",
                               fw->heads, hd, fw->heads * hd, VP_FORWARD_MAX_WIDTH);
    if (vp_positions_traits_of(fw->positions)->rotary && fw->head_dim && fw->head_dim % 2 != 0 &&
        (fw->rope_fraction == 0.0 || fw->rope_fraction == 1.0))
        return cli_usage_error("--head-dim: %zu with --positions rope; rope rotates pairs, so "
                               "it must be even",
                               fw->head_dim);
    return EXIT_OK;
}

/* The network's kinds: MLP, biases, tied head, weight storage, activations kept. */
static int read_kinds(const cli_args *args, vp_forward_options *fw)
{
    int rc;
    /* the MLP: its kind (its width exactly or in widths: read_forward_options) */
    static const char *const mlps[] = {"gelu",  "gelu-tanh",  "relu", "swiglu",
                                       "geglu", "geglu-tanh", NULL};
    int mlp = VP_MLP_GELU;
    if ((rc = cli_choice(args, OPT_MLP, mlps, &mlp)) != EXIT_OK)
        return rc;
    fw->mlp = (vp_mlp)mlp;
    /* the library's names, so that a new row reaches the option */
    const char *biases[VP_BIAS_COUNT + 1] = {NULL};
    for (int b = 0; b < VP_BIAS_COUNT; b++)
        biases[b] = vp_bias_name((vp_bias)b);
    int bias = VP_BIAS_ALL;
    if ((rc = cli_choice(args, OPT_BIAS, biases, &bias)) != EXIT_OK)
        return rc;
    fw->bias = (vp_bias)bias;
    static const char *const answers[] = {"no", "yes", NULL};
    int tie = 0;
    if ((rc = cli_choice(args, OPT_TIE_EMBEDDINGS, answers, &tie)) != EXIT_OK)
        return rc;
    fw->tie_embeddings = tie;
    static const char *const storages[] = {"drawn", "stored", NULL};
    int stored = 0;
    if ((rc = cli_choice(args, OPT_WEIGHT_STORAGE, storages, &stored)) != EXIT_OK)
        return rc;
    fw->stored_weights = stored;
    static const char *const keeps[] = {"auto", "keep", "recompute", NULL};
    int activations = VP_ACTIVATIONS_AUTO;
    if ((rc = cli_choice(args, OPT_ACTIVATIONS, keeps, &activations)) != EXIT_OK)
        return rc;
    fw->activations = activations;
    /* the library's names, so that a new row reaches the option */
    const char *norms[VP_EMBEDDING_NORM_COUNT + 1] = {NULL};
    for (int n = 0; n < VP_EMBEDDING_NORM_COUNT; n++)
        norms[n] = vp_embedding_norm_name((vp_embedding_norm)n);
    int norm = VP_EMBEDDING_NORM_NONE;
    if ((rc = cli_choice(args, OPT_EMBEDDING_NORM, norms, &norm)) != EXIT_OK)
        return rc;
    fw->embedding_norm = (vp_embedding_norm)norm;
    return EXIT_OK;
}

int read_forward_options(const cli_args *args, vp_forward_options *fw)
{
    static const char *const inits[] = {"gain", "torch", NULL};
    vp_forward_options_init(fw);
    fw->threads = default_threads();
    int init = 0, rc;
    size_t seed = (size_t)fw->seed;
    if ((rc = read_norm(args, &fw->norm, &fw->eps)) != EXIT_OK ||
        (rc = cli_choice(args, OPT_INIT, inits, &init)) != EXIT_OK ||
        (rc = cli_size(args, OPT_WIDTH, 1, VP_FORWARD_MAX_WIDTH, &fw->width)) != EXIT_OK ||
        (rc = cli_size(args, OPT_HEADS, 1, VP_FORWARD_MAX_WIDTH, &fw->heads)) != EXIT_OK ||
        (rc = cli_size(args, OPT_KV_HEADS, 1, VP_FORWARD_MAX_WIDTH, &fw->kv_heads)) != EXIT_OK ||
        (rc = cli_size(args, OPT_HEAD_DIM, 1, VP_FORWARD_MAX_WIDTH, &fw->head_dim)) != EXIT_OK ||
        (rc = cli_size(args, OPT_FFN_MULT, 1, VP_FORWARD_MAX_FFN_MULT, &fw->ffn_mult)) != EXIT_OK ||
        (rc = cli_size(args, OPT_VOCAB, 1, VP_FORWARD_MAX_VOCAB, &fw->vocab)) != EXIT_OK ||
        (rc = cli_size(args, OPT_BATCH, 1, VP_FORWARD_MAX_BATCH, &fw->batch)) != EXIT_OK ||
        (rc = cli_size(args, OPT_TOKENS, 1, VP_FORWARD_MAX_TOKENS, &fw->tokens)) != EXIT_OK ||
        (rc = cli_size(args, OPT_THREADS, 1, VP_MC_MAX_THREADS, &fw->threads)) != EXIT_OK ||
        (rc = cli_size(args, OPT_SEED, 0, SIZE_MAX, &seed)) != EXIT_OK)
        return rc;
    fw->init = init == 1 ? VP_INIT_TORCH : VP_INIT_GAIN;
    if ((rc = read_kinds(args, fw)) != EXIT_OK)
        return rc;
    const option_id mult = args->given[OPT_TRAIN_FFN_MULT] ? OPT_TRAIN_FFN_MULT : OPT_FFN_MULT;
    if (args->given[OPT_FFN_WIDTH] && args->given[mult])
        return cli_usage_error("--ffn-width and --ffn-mult both given; --ffn-mult M is the "
                               "width M x --width, so give one of them");
    if ((rc = cli_size(args, OPT_FFN_WIDTH, 1, VP_FORWARD_MAX_FFN_WIDTH, &fw->ffn_width)) !=
        EXIT_OK)
        return rc;
    static const char *const losses[] = {"copy", "next", "random", NULL};
    int loss = VP_LOSS_COPY;
    if ((rc = cli_choice(args, OPT_LOSS, losses, &loss)) != EXIT_OK)
        return rc;
    fw->loss = (vp_loss)loss;
    fw->qk_norm = args->given[OPT_QK_NORM];
    if ((rc = read_positions(args, fw)) != EXIT_OK ||
        (rc = read_logit_scale(args, fw)) != EXIT_OK || (rc = read_window(args, fw)) != EXIT_OK)
        return rc;
    fw->seed = seed;
    return read_attention_shape(fw, args->given[OPT_WEIGHTS]);
}
