/* config.json: the family by model_type, its reader, then its key tables
 * held to every key the file has. */
#include "hf_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hf_config_keys.h"
#include "hf_families.h"

vp_status hf_read_text(const char *path, char **text, size_t *length, vp_error *err)
{
    *text = NULL;
    FILE *in = fopen(path, "rb");
    if (!in)
        return vp_fail(err, VP_EIO, "%s: cannot be opened: %s", path, strerror(errno));
    struct stat st;
    vp_status status = VP_OK;
    if (fstat(fileno(in), &st) != 0 || !S_ISREG(st.st_mode))
        status = vp_fail(err, VP_EFORMAT, "%s: not a regular file", path);
    else if ((unsigned long long)st.st_size > HF_MOST_JSON_BYTES)
        status = vp_fail(err, VP_EFORMAT, "%s: %lld bytes, above the %u a JSON file here may have",
                         path, (long long)st.st_size, HF_MOST_JSON_BYTES);
    else if (!(*text = malloc((size_t)st.st_size + 1)))
        status =
            vp_fail(err, VP_ENOMEM, "%s: no memory for %lld bytes", path, (long long)st.st_size);
    else if (fread(*text, 1, (size_t)st.st_size, in) != (size_t)st.st_size)
        status = vp_fail(err, VP_EIO, "%s: cannot be read: %s", path, strerror(errno));
    (void)fclose(in); /* read-only */
    if (status != VP_OK) {
        free(*text);
        *text = NULL;
        return status;
    }
    (*text)[st.st_size] = '\0';
    *length = (size_t)st.st_size;
    return VP_OK;
}

static const hf_key_tables gpt2_keys = {hf_gpt2_keys, hf_common_keys, NULL};
static const hf_key_tables opt_keys = {hf_opt_keys, hf_decoder_size_keys, hf_common_keys, NULL};
static const hf_key_tables llama_keys = {hf_llama_keys, hf_decoder_size_keys, hf_common_keys, NULL};
static const hf_key_tables gemma2_keys = {hf_gemma2_keys, hf_llama_keys, hf_decoder_size_keys,
                                          hf_common_keys, NULL};
static const hf_key_tables starcoder2_keys = {hf_starcoder2_keys, hf_decoder_size_keys,
                                              hf_common_keys, NULL};
static const hf_key_tables phi3_keys = {hf_phi3_keys, hf_decoder_size_keys, hf_common_keys, NULL};
static const hf_key_tables gpt_neox_keys = {hf_gpt_neox_keys, hf_decoder_size_keys, hf_common_keys,
                                            NULL};
static const hf_key_tables phi_keys = {hf_phi_keys, hf_decoder_size_keys, hf_common_keys, NULL};
static const hf_key_tables gptj_keys = {hf_gptj_keys, hf_common_keys, NULL};
static const hf_key_tables falcon_keys = {hf_falcon_keys, hf_decoder_size_keys, hf_common_keys,
                                          NULL};
static const hf_key_tables cohere_keys = {hf_cohere_keys, hf_decoder_size_keys, hf_common_keys,
                                          NULL};
static const hf_key_tables bloom_keys = {hf_bloom_keys, hf_common_keys, NULL};
static const hf_key_tables gemma3_keys = {hf_gemma3_keys, hf_decoder_size_keys, hf_common_keys,
                                          NULL};

static const struct {
    const char *model_type;
    vp_status (*read)(hf_json *c, vp_hf_architecture *a);
    const hf_key *const *keys;
} families[] = {
    {"gpt2", hf_read_gpt2, gpt2_keys},       {"llama", hf_read_llama, llama_keys},
    {"mistral", hf_read_llama, llama_keys},  {"qwen2", hf_read_llama, llama_keys},
    {"gemma2", hf_read_llama, gemma2_keys},  {"olmo2", hf_read_llama, llama_keys},
    {"qwen3", hf_read_qwen3, llama_keys},    {"starcoder2", hf_read_starcoder2, starcoder2_keys},
    {"phi3", hf_read_phi3, phi3_keys},       {"gpt_neox", hf_read_gpt_neox, gpt_neox_keys},
    {"phi", hf_read_phi, phi_keys},          {"opt", hf_read_opt, opt_keys},
    {"cohere", hf_read_cohere, cohere_keys}, {"gptj", hf_read_gptj, gptj_keys},
    {"falcon", hf_read_falcon, falcon_keys}, {"gemma3_text", hf_read_gemma3, gemma3_keys},
    {"bloom", hf_read_bloom, bloom_keys}};

#define FAMILY_LIST                                                                                \
    "gpt2, llama, mistral, qwen2, qwen3, starcoder2, phi3, gemma2, gemma3_text, olmo2, "           \
    "gpt_neox, phi, opt, cohere, gptj, falcon and bloom"

/* Known families varprof does not read yet, and why. */
static const struct {
    const char *model_type, *why;
} not_yet[] = {
    {"gemma", "Gemma-1's pre-norm blocks with Gemma's (1 + w) RMSNorm are not mapped; Gemma-2's "
              "(gemma2) are"},
    {"olmo", "OLMo-1's non-parametric LayerNorm has no weights to read"},
};

static vp_status read_root(hf_json *c, vp_hf_architecture *a)
{
    const char *type = NULL;
    vp_status s = hf_text(c, "model_type", NULL, &type);
    if (s != VP_OK)
        return s;
    for (size_t i = 0; i < sizeof not_yet / sizeof *not_yet; i++)
        if (strcmp(type, not_yet[i].model_type) == 0)
            return vp_fail(c->err, VP_EFORMAT,
                           "config.json: model_type '%s' is not read yet (%s); varprof reads "
                           "" FAMILY_LIST,
                           type, not_yet[i].why);
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (strcmp(type, families[i].model_type) == 0) {
            snprintf(a->model_type, sizeof a->model_type, "%s", type);
            s = families[i].read(c, a);
            return s == VP_OK ? hf_keys_check(c, families[i].keys, a) : s;
        }
    return vp_fail(c->err, VP_EFORMAT,
                   "config.json: model_type '%.40s' is not one varprof reads (" FAMILY_LIST ")",
                   type);
}

vp_status hf_config_read(const char *dir, vp_hf_architecture *a, vp_error *err)
{
    memset(a, 0, sizeof *a);
    a->placement = VP_PRE_NORM;
    a->positions = VP_POSITIONS_NONE;
    a->embed_scale = 1.0;
    a->pad_token_id = -1;
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/config.json", dir) >= sizeof path)
        return vp_fail(err, VP_EFORMAT, "%s: the path is too long", dir);
    char *json = NULL;
    size_t length = 0;
    vp_status s = hf_read_text(path, &json, &length, err);
    if (s != VP_OK)
        return s;
    cJSON *root = cJSON_ParseWithLength(json, length);
    free(json);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return vp_fail(err, VP_EFORMAT, "%s: not a JSON object", path);
    }
    hf_json c = {.root = root, .err = err};
    s = read_root(&c, a);
    if (!a->embed_dim) /* the families but opt: the embedding is as wide as the stream */
        a->embed_dim = a->width;
    cJSON_Delete(root);
    return s;
}
