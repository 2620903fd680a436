/* The typed reads of config.json's fields that every family's reader uses,
 * each remembering the key it read, so that the key tables can tell a key
 * read from one passed over (hf_config_keys.c). */
#ifndef VARPROF_IO_HF_JSON_H
#define VARPROF_IO_HF_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "varprof/hf_checkpoint.h"

/* Most distinct top-level keys one reader reads. */
#define HF_MOST_READ_KEYS 64

typedef struct {
    const cJSON *root;
    vp_error *err;
    const char *read[HF_MOST_READ_KEYS]; /* the keys looked up, present or not */
    size_t n_read;
} hf_json;

/* The field key of the root, NULL when absent; remembers the key as read. */
const cJSON *hf_field(hf_json *c, const char *key);

/* 1 when the field is present and not null. */
int hf_present(hf_json *c, const char *key);

/* A whole number in [lo, hi]; absent or null: *out = fallback, or
   VP_EFORMAT when required. */
vp_status hf_whole(hf_json *c, const char *key, int required, size_t fallback, size_t lo, size_t hi,
                   size_t *out);

/* A finite number above 0; absent or null: fallback. */
vp_status hf_real(hf_json *c, const char *key, double fallback, double *out);

/* true or false; absent or null: fallback. */
vp_status hf_boolean(hf_json *c, const char *key, int fallback, int *out);

/* A string; absent or null: fallback (NULL: required). */
vp_status hf_text(hf_json *c, const char *key, const char *fallback, const char **out);

/* A setting varprof does not model: VP_EFORMAT naming it and why when
   present and set (not null, false, 0 or empty). */
vp_status hf_refuse_set(hf_json *c, const char *key, const char *why);

/* 1 when v is set in the sense of hf_refuse_set. */
int hf_value_is_set(const cJSON *v);

#endif
