/* A checkpoint's RoPE from config.json, in either spelling: the Hub's
 * (rope_theta, rope_scaling and partial_rotary_factor at the top level) or
 * transformers 5's (rope_parameters, one set for every layer or one per
 * layer type). Where a file has both they must agree. */
#ifndef VARPROF_IO_HF_ROPE_H
#define VARPROF_IO_HF_ROPE_H

#include "hf_json.h"

/* Sets a->rope_theta (default_theta where neither spelling gives one) and
 * a->rope_scaling (factor 0 without). VP_EFORMAT, naming the key: a rope
 * type other than default and llama3 (linear, dynamic, yarn, longrope,
 * ...), a llama3 set missing a number or out of range, a key in a RoPE set
 * that varprof does not read, a partial_rotary_factor other than 1 (varprof
 * rotates every coordinate of a head), per-layer-type sets that differ (the
 * families read run one RoPE), or the two spellings disagreeing. */
vp_status hf_rope_read(hf_json *c, double default_theta, vp_hf_architecture *a);

#endif
