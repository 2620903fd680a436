/* The Hugging Face checkpoint reader (--weights DIR): the input cut at its
 * first two NUL bytes into config.json, model.safetensors.index.json and
 * model.safetensors, written into one temp directory of this process (an
 * empty part leaves its file out), then vp_hf_checkpoint_read on it. */
#include <sys/stat.h>

#include "fuzz_common.h"
#include "varprof/hf_checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir[4096];
static const char *const parts[] = {"config.json", "model.safetensors.index.json",
                                    "model.safetensors"};

static void remove_dir(void)
{
    char path[4200];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", fuzz_dir, parts[i]);
        unlink(path);
    }
    rmdir(fuzz_dir);
}

static const char *make_dir(void)
{
    if (!fuzz_dir[0]) {
        const char *dir = getenv("FUZZ_TMPDIR");
        if (!dir || !*dir)
            dir = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
        if (!dir || !*dir)
            dir = "/tmp";
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/varprof-fuzz-hf-XXXXXX", dir);
        if (!mkdtemp(fuzz_dir)) {
            perror(fuzz_dir);
            abort();
        }
        atexit(remove_dir);
    }
    return fuzz_dir;
}

static void put(const char *dir, const char *name, const uint8_t *data, size_t size)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
    if (size == 0)
        return;
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = make_dir();
    const uint8_t *at = data, *end = data + size;
    for (size_t i = 0; i < 3; i++) {
        const uint8_t *cut = i < 2 ? memchr(at, '\0', (size_t)(end - at)) : NULL;
        const uint8_t *stop = cut ? cut : end;
        put(dir, parts[i], at, (size_t)(stop - at));
        at = cut ? cut + 1 : end;
    }
    vp_safetensors weights;
    vp_hf_architecture arch;
    vp_error err;
    if (vp_hf_checkpoint_read(dir, &weights, &arch, &err) == VP_OK) {
        FUZZ_CHECK(weights.count >= 1 && weights.tensors != NULL);
        FUZZ_CHECK(arch.width >= 1 && arch.width <= VP_FORWARD_MAX_WIDTH);
        FUZZ_CHECK(arch.heads >= 1 && arch.width % arch.heads == 0);
        FUZZ_CHECK(arch.layers >= 1 && arch.vocab >= 1 && arch.ffn_width >= 1);
        FUZZ_CHECK(weights.source != NULL && weights.data == NULL);
        /* every tensor made from the shards, as the loader asks for them */
        for (size_t i = 0; i < weights.count; i++) {
            const vp_tensor_info *t = &weights.tensors[i];
            FUZZ_CHECK(t->dtype == VP_DTYPE_F32 && t->name != NULL);
            float *out = malloc((t->elements ? t->elements : 1) * sizeof *out);
            if (out)
                vp_safetensors_to_float(&weights, t, out);
            free(out);
        }
        FUZZ_CHECK(vp_safetensors_find(&weights, "embed.weight") != NULL);
    } else {
        FUZZ_CHECK(weights.count == 0 && weights.tensors == NULL && weights.data == NULL);
        FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
    }
    vp_safetensors_free(&weights);
    return 0;
}
