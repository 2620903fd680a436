/* What --weights fixes: the options a weights file or checkpoint decides, refused up front. */
#include "weights_options.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "output_file.h"
#include "varprof/forward_setup.h"
#include "varprof/hf_checkpoint.h"

int weights_refuse_settings(const cli_args *args)
{
    /* what each would set, and why loaded weights leave nothing to set */
    static const struct {
        option_id id;
        const char *why;
    } fixed[] = {
        {OPT_GAIN, "loaded weights have gains of their own, measured sub-block by sub-block "
                   "(the gain column)"},
        {OPT_GAINS, "loaded weights have gains of their own, measured sub-block by sub-block "
                    "(the gain column)"},
        {OPT_EMBEDDING_VAR, "the stream is measured against the embedding the weights give, "
                            "whose variance is measured too"},
        {OPT_GAMMA, "the weights' output norms carry their own scale"},
        {OPT_BETA, "beta scales drawn weights, and these are loaded"},
        {OPT_INIT, "loaded weights are not drawn"},
    };
    if (!args->given[OPT_WEIGHTS])
        return EXIT_OK;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (args->given[fixed[i].id])
            return cli_usage_error("%s %s: %s; with --weights, leave %s out",
                                   cli_option_name(fixed[i].id), args->value[fixed[i].id],
                                   fixed[i].why, cli_option_name(fixed[i].id));
    return EXIT_OK;
}

/* Whether dir holds a config.json: a Hugging Face checkpoint's folder. */
static int has_config(const char *dir)
{
    char config[4096];
    struct stat st;
    return (size_t)snprintf(config, sizeof config, "%s/config.json", dir) < sizeof config &&
           stat(config, &st) == 0 && S_ISREG(st.st_mode);
}

int weights_refuse_json(const cli_args *args)
{
    const char *path = args->value[OPT_WEIGHTS];
    const size_t n = strlen(path);
    if (n < 5 || strcmp(path + n - 5, ".json") != 0 || vp_hf_is_checkpoint_dir(path))
        return EXIT_OK;
    char dir[4096];
    if (path_folder(path, dir, sizeof dir) && has_config(dir))
        return cli_usage_error("--weights %s: a file of the Hugging Face checkpoint in %s; "
                               "give the folder: --weights %s",
                               path, dir, dir);
    return cli_usage_error("--weights %s: a JSON file; --weights takes a safetensors file of "
                           "varprof's names or a Hugging Face checkpoint's folder",
                           path);
}

/* The name of the file's embedding under a Hugging Face family's naming
 * (Llama's embed_tokens, GPT-2's wte), or NULL. */
static const char *checkpoint_embedding(const vp_safetensors *weights)
{
    static const char *const endings[] = {"embed_tokens.weight", "wte.weight"};
    for (size_t i = 0; i < weights->count; i++)
        for (size_t e = 0; e < sizeof endings / sizeof *endings; e++) {
            const char *name = weights->tensors[i].name;
            const size_t n = strlen(name), m = strlen(endings[e]);
            if (n >= m && strcmp(name + n - m, endings[e]) == 0)
                return name;
        }
    return NULL;
}

int weights_refuse_checkpoint_file(const cli_args *args, const vp_safetensors *weights)
{
    const char *path = args->value[OPT_WEIGHTS];
    if (vp_safetensors_find(weights, "embed.weight"))
        return EXIT_OK;
    char dir[4096];
    if (path_folder(path, dir, sizeof dir) && has_config(dir))
        return cli_usage_error("--weights %s: a file of the Hugging Face checkpoint in %s, "
                               "whose names varprof reads through its config.json; give the "
                               "folder: --weights %s",
                               path, dir, dir);
    const char *embedding = checkpoint_embedding(weights);
    if (embedding)
        return cli_usage_error("--weights %s: its names are a Hugging Face checkpoint's "
                               "('%s'), which varprof reads through the checkpoint's "
                               "config.json; give the checkpoint's folder",
                               path, embedding);
    return EXIT_OK;
}

int weights_refuse_shape(const cli_args *args, const vp_safetensors *weights,
                         const vp_hf_architecture *arch, const weights_shape_given *given,
                         const vp_config *cfg, const vp_forward_options *fw)
{
    /* the file's own shape: nothing of it given */
    const unsigned keep = weights_shape_keep(given) &
                          ~(unsigned)(VP_KEEP_WIDTH | VP_KEEP_VOCAB | VP_KEEP_FFN | VP_KEEP_LAYERS);
    vp_config file_cfg = *cfg;
    vp_forward_options file = *fw;
    vp_error err;
    if (vp_forward_options_from_checkpoint(weights, arch, keep, &file_cfg, &file, &err) != VP_OK)
        return EXIT_OK; /* the shape itself is refused where it is adopted */
    const char *path = args->value[OPT_WEIGHTS];
    const char *width = cli_option_name(given->width_id), *vocab = cli_option_name(given->vocab_id);
    const char *layers = cli_option_name(given->layers_id);
    if (given->width && fw->width != file.width)
        return cli_usage_error("%s %zu: the weights in %s are %zu wide, and --weights "
                               "fixes the width; leave %s out",
                               width, fw->width, path, file.width, width);
    if (given->vocab && fw->vocab != file.vocab)
        return cli_usage_error("%s %zu: the weights in %s have a vocabulary of %zu, and "
                               "--weights fixes it; leave %s out",
                               vocab, fw->vocab, path, file.vocab, vocab);
    if (given->layers && cfg->layers != file_cfg.layers)
        return cli_usage_error("%s %zu: the weights in %s hold %zu layer%s, and varprof "
                               "runs them all; leave %s out",
                               layers, cfg->layers, path, file_cfg.layers,
                               file_cfg.layers == 1 ? "" : "s", layers);
    /* the MLP multiple in the file's widths: a width of its own is refused above */
    const option_id mlp = given->ffn_width ? OPT_FFN_WIDTH : given->ffn_mult_id;
    const size_t asked = given->ffn_width ? fw->ffn_width : fw->ffn_mult * file.width;
    if ((given->ffn_mult || given->ffn_width) && asked != vp_forward_ffn_width(&file))
        return cli_usage_error("%s %s: the weights in %s have an MLP %zu wide, and --weights "
                               "fixes it; leave %s out",
                               cli_option_name(mlp), args->value[mlp], path,
                               vp_forward_ffn_width(&file), cli_option_name(mlp));
    return EXIT_OK;
}

void weights_adopt_depth(const cli_args *args, vp_config *cfg)
{
    if (args->given[OPT_LAYERS])
        return;
    if (!args->given[OPT_ALPHA])
        cfg->alpha = vp_deepnet_alpha(cfg->layers);
    if (!args->given[OPT_BETA])
        cfg->beta = vp_deepnet_beta(cfg->layers);
}

void weights_warn_random_tokens(const cli_args *args, const vp_forward_options *fw)
{
    if (!args->given[OPT_WEIGHTS] || args->given[OPT_TOKEN_IDS])
        return;
    cli_warning("--weights without --token-ids: the batch is %zu x %zu token ids drawn at "
                "random (seed %llu), not text; --token-ids FILE gives real ones",
                fw->batch, fw->tokens, (unsigned long long)fw->seed);
}
