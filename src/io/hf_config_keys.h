/* The config.json contract: for each family, the keys varprof reads, the
 * keys known to leave the numbers unchanged, and the keys it refuses. A key
 * in none of the lists is named back to the caller, which warns. */
#ifndef VARPROF_IO_HF_CONFIG_KEYS_H
#define VARPROF_IO_HF_CONFIG_KEYS_H

#include "hf_json.h"

typedef enum {
    HF_KEY_READ,     /* a family reader reads it (when it applies) */
    HF_KEY_HARMLESS, /* changes no number varprof computes; why says why */
    HF_KEY_REFUSED,  /* changes the arithmetic in a way varprof does not model:
                        refused when set (not null, false, 0 or empty) */
} hf_key_kind;

typedef struct {
    const char *name;
    hf_key_kind kind;
    const char *why; /* for HARMLESS and REFUSED */
} hf_key;

/* A family's key lists, most specific first, then the keys every
   configuration class has (hf_common_keys), NULL-terminated. */
typedef const hf_key *const hf_key_tables[];

extern const hf_key hf_common_keys[];
extern const hf_key hf_decoder_size_keys[];
extern const hf_key hf_gpt2_keys[];
extern const hf_key hf_opt_keys[];
extern const hf_key hf_llama_keys[];
extern const hf_key hf_gemma2_keys[];
extern const hf_key hf_starcoder2_keys[]; /* hf_family_starcoder2.c */
extern const hf_key hf_phi3_keys[];       /* hf_family_phi3.c */
extern const hf_key hf_gpt_neox_keys[];   /* hf_family_neox.c */
extern const hf_key hf_phi_keys[];        /* hf_family_phi.c */
extern const hf_key hf_gptj_keys[];       /* hf_family_gptj.c */
extern const hf_key hf_falcon_keys[];     /* hf_family_falcon.c */
extern const hf_key hf_cohere_keys[];     /* hf_family_cohere.c */
extern const hf_key hf_bloom_keys[];      /* hf_family_bloom.c */
extern const hf_key hf_gemma3_keys[];     /* hf_family_gemma3.c */

/* Holds the root's keys to the tables, after the family reader ran: a key
 * the reader read must be listed as read (else VP_EFORMAT naming it, a
 * mismatch between reader and table that the conformance tests catch); a
 * refused key that is set fails with VP_EFORMAT naming it and why; a key
 * in no list is added to a->unknown_keys. */
vp_status hf_keys_check(hf_json *c, const hf_key *const *tables, vp_hf_architecture *a);

/* The entry for name in tables, NULL when none lists it. */
const hf_key *hf_key_find(const hf_key *const *tables, const char *name);

#endif
