/* A Hugging Face checkpoint's shards: model.safetensors, or the shards
 * model.safetensors.index.json maps, each inside the directory, every
 * tensor mapped once and found where the index says. */
/* realpath is XSI: _XOPEN_SOURCE 700 declares it under glibc. */
#define _XOPEN_SOURCE 700 // NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
#include "hf_shards.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hf_config.h"

#define MOST_SHARDS 4096u
/* Most tensors a checkpoint may hold, all shards together: the lookups by
   name are linear, so this bounds their time (Llama-2-70B has 723) */
#define MOST_TENSORS 32768u

void hf_shards_free(hf_shards *c)
{
    for (size_t i = 0; i < c->n_shards; i++) {
        vp_safetensors_free(&c->shards[i]);
        free(c->shard_names[i]);
        free(c->used[i]);
    }
    free(c->shards);
    free(c->shard_names);
    free(c->used);
    memset(c, 0, sizeof *c);
}

/* dir/name, refused unless it stays inside dir once every symlink is
   resolved, and is not the index itself. *real gets the resolved path. */
static vp_status shard_path(const char *dir_real, const char *dir, const char *name, char *real,
                            vp_error *err)
{
    if (!name[0] || name[0] == '/')
        return vp_fail(err, VP_EFORMAT, "index: shard path '%.200s' is %s", name,
                       name[0] ? "absolute" : "empty");
    for (const char *p = name; p; p = strchr(p, '/')) {
        p += *p == '/';
        if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0'))
            return vp_fail(err, VP_EFORMAT, "index: shard path '%.200s' has a '..' component",
                           name);
    }
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return vp_fail(err, VP_EFORMAT, "index: shard path '%.200s' is too long", name);
    if (!realpath(path, real))
        return vp_fail(err, VP_EFORMAT, "index: shard '%.200s' is listed but %s%s", name,
                       errno == ENOENT ? "missing" : "cannot be resolved: ",
                       errno == ENOENT ? "" : strerror(errno));
    const size_t n = strlen(dir_real);
    if (strncmp(real, dir_real, n) != 0 || real[n] != '/')
        return vp_fail(err, VP_EFORMAT, "index: shard '%.200s' leads outside the directory (to %s)",
                       name, real);
    if (strcmp(real + n, "/model.safetensors.index.json") == 0)
        return vp_fail(err, VP_EFORMAT, "index: shard '%.200s' is the index itself", name);
    return VP_OK;
}

/* The index of the shard called name, adding it (read) when new. */
static vp_status add_shard(hf_shards *c, const char *dir_real, const char *dir, const char *name,
                           size_t *index, vp_error *err)
{
    for (size_t i = 0; i < c->n_shards; i++)
        if (strcmp(c->shard_names[i], name) == 0) {
            *index = i;
            return VP_OK;
        }
    char real[PATH_MAX];
    vp_status s = shard_path(dir_real, dir, name, real, err);
    if (s != VP_OK)
        return s;
    if (c->n_shards == MOST_SHARDS)
        return vp_fail(err, VP_EFORMAT, "index: more than %u shards", MOST_SHARDS);
    /* two spellings of one file would read its tensors twice */
    for (size_t i = 0; i < c->n_shards; i++) {
        char other[PATH_MAX], path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, c->shard_names[i]);
        if (realpath(path, other) && strcmp(other, real) == 0)
            return vp_fail(err, VP_EFORMAT, "index: shards '%.200s' and '%.200s' are one file",
                           c->shard_names[i], name);
    }
    const size_t n = c->n_shards + 1;
    vp_safetensors *shards = realloc(c->shards, n * sizeof *shards);
    if (shards)
        c->shards = shards;
    char **names = realloc(c->shard_names, n * sizeof *names);
    if (names)
        c->shard_names = names;
    unsigned char **used = realloc(c->used, n * sizeof *used);
    if (used)
        c->used = used;
    if (!shards || !names || !used)
        return vp_fail(err, VP_ENOMEM, "no memory for the shards");
    memset(&c->shards[c->n_shards], 0, sizeof *c->shards);
    c->used[c->n_shards] = NULL;
    if (!(c->shard_names[c->n_shards] = strdup(name)))
        return vp_fail(err, VP_ENOMEM, "no memory for the shards");
    c->n_shards++;
    vp_safetensors *f = &c->shards[n - 1];
    if ((s = vp_safetensors_map(real, f, err)) != VP_OK)
        return s;
    if (!(c->used[n - 1] = calloc(f->count ? f->count : 1, 1)))
        return vp_fail(err, VP_ENOMEM, "no memory for the shards");
    *index = n - 1;
    return VP_OK;
}

/* model.safetensors.index.json: every name mapped once to a shard inside
   dir that holds it, and every shard's tensors mapped to it. */
static vp_status read_index(hf_shards *c, const char *dir_real, const char *dir, const char *path,
                            vp_error *err)
{
    char *json = NULL;
    size_t length = 0;
    vp_status s = hf_read_text(path, &json, &length, err);
    if (s != VP_OK)
        return s;
    cJSON *root = cJSON_ParseWithLength(json, length);
    free(json);
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(root) || !cJSON_IsObject(map)) {
        cJSON_Delete(root);
        return vp_fail(err, VP_EFORMAT, "index: not a JSON object with a 'weight_map' object");
    }
    size_t mapped = 0, stored = 0;
    if (cJSON_GetArraySize(map) > (int)MOST_TENSORS)
        s = vp_fail(err, VP_EFORMAT, "index: 'weight_map' maps more than %u tensors", MOST_TENSORS);
    for (const cJSON *e = map->child; e && s == VP_OK; e = e->next) {
        size_t shard = 0;
        if (!cJSON_IsString(e))
            s = vp_fail(err, VP_EFORMAT, "index: tensor '%.200s' maps to no file name", e->string);
        if (s == VP_OK)
            s = add_shard(c, dir_real, dir, e->valuestring, &shard, err);
        if (s == VP_OK && !vp_safetensors_find(&c->shards[shard], e->string))
            s = vp_fail(err, VP_EFORMAT,
                        "index: tensor '%.200s' is mapped to '%.200s', which lacks it", e->string,
                        e->valuestring);
        mapped++;
    }
    /* a tensor in a shard the map does not send it to: in two shards, or unlisted */
    for (size_t i = 0; i < c->n_shards && s == VP_OK; i++) {
        stored += c->shards[i].count;
        if (stored > MOST_TENSORS)
            s = vp_fail(err, VP_EFORMAT, "the shards hold more than %u tensors", MOST_TENSORS);
        for (size_t t = 0; t < c->shards[i].count && s == VP_OK; t++) {
            const char *name = c->shards[i].tensors[t].name;
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(map, name);
            if (!e || strcmp(e->valuestring, c->shard_names[i]) != 0)
                s = vp_fail(
                    err, VP_EFORMAT,
                    "index: shard '%.200s' holds tensor '%.200s', which the index maps %s%.200s",
                    c->shard_names[i], name, e ? "to " : "nowhere", e ? e->valuestring : "");
        }
    }
    if (s == VP_OK && mapped == 0)
        s = vp_fail(err, VP_EFORMAT, "index: 'weight_map' is empty");
    /* every entry found in its shard, every tensor mapped to its own: only a
       name given twice leaves more entries than tensors */
    if (s == VP_OK && mapped != stored)
        s = vp_fail(err, VP_EFORMAT,
                    "index: 'weight_map' has %zu entries for %zu stored tensors: a tensor is "
                    "mapped twice",
                    mapped, stored);
    cJSON_Delete(root);
    return s;
}

vp_status hf_shards_read(hf_shards *c, const char *dir, vp_error *err)
{
    char dir_real[PATH_MAX], index[PATH_MAX], single[PATH_MAX];
    if (!realpath(dir, dir_real))
        return vp_fail(err, VP_EIO, "%s: %s", dir, strerror(errno));
    if ((size_t)snprintf(index, sizeof index, "%s/model.safetensors.index.json", dir) >=
            sizeof index ||
        (size_t)snprintf(single, sizeof single, "%s/model.safetensors", dir) >= sizeof single)
        return vp_fail(err, VP_EFORMAT, "%s: the path is too long", dir);
    vp_error why;
    vp_status s;
    if (access(index, F_OK) == 0)
        s = read_index(c, dir_real, dir, index, &why);
    else if (access(single, F_OK) == 0) {
        size_t shard;
        s = add_shard(c, dir_real, dir, "model.safetensors", &shard, &why);
        if (s == VP_OK && c->shards[0].count > MOST_TENSORS)
            s = vp_fail(&why, VP_EFORMAT, "model.safetensors holds more than %u tensors",
                        MOST_TENSORS);
    } else
        return vp_fail(err, VP_EFORMAT,
                       "%s: neither model.safetensors nor model.safetensors.index.json is there",
                       dir);
    if (s != VP_OK)
        vp_fail(err, s, "%s: %s", dir, why.message);
    return s;
}

const vp_tensor_info *hf_shards_lookup(const hf_shards *c, const char *name, size_t *shard)
{
    for (size_t i = 0; i < c->n_shards; i++) {
        const vp_tensor_info *t = vp_safetensors_find(&c->shards[i], name);
        if (t) {
            *shard = i;
            return t;
        }
    }
    return NULL;
}
