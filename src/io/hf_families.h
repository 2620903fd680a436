/* The families' config.json readers: each fills vp_hf_architecture from its
 * keys (hf_config_keys.c lists them) with its config class's defaults. */
#ifndef VARPROF_IO_HF_FAMILIES_H
#define VARPROF_IO_HF_FAMILIES_H

#include "hf_json.h"

/* The width and the heads under the family's names; a second name for the
   width (hidden_size) must agree. The heads must divide the width unless
   the family has a head_dim and the file gives one. */
vp_status hf_width_and_heads(hf_json *c, const char *width_key, const char *heads_key,
                             int has_head_dim, vp_hf_architecture *a);

/* gpt2 */
vp_status hf_read_gpt2(hf_json *c, vp_hf_architecture *a);

/* llama, mistral, qwen2, olmo2 and gemma2 */
vp_status hf_read_llama(hf_json *c, vp_hf_architecture *a);

#endif
