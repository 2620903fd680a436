#!/usr/bin/env python3
"""Real models' head shapes, scaled down, as checkpoints and as plain files.

A Hugging Face checkpoint's config.json says how many heads there are; the
tensors alone do not: q_proj's rows are H hd and k_proj's H_kv hd, and any
common divisor of the two is a head width that fits. varprof once inferred
the heads from layer 0's q and k with its default of 8 heads (a head width
of d / 8) before config.json's applied, and so refused the shapes of real
models whose width 8 does not split into their heads ("layer 0's q has 56
rows and k 8: with heads of 7 coordinates they must be whole heads"). Three
real ratios, each head 64 times narrower than the model's, widths below 64
so that the files stay small:

  case             family  from           width  heads  kv  head  q rows  MLP  tied
  qwen25_heads     qwen2   Qwen2.5-0.5B      56     14   2     4      56  152  yes
  smollm2_heads    llama   SmolLM2-135M      36      9   3     4      36   96  yes
  gemma2_9b_heads  gemma2  Gemma-2-9B        56     16   8     4      64  112  no

  Qwen2.5-0.5B: 896 = 14 heads of 64 sharing 2 kv heads; q/k/v biases, theta
      1000000, eps 1e-6. Width 56 over the default 8 heads is 7, which
      divides neither q's 56 rows into 14 heads nor k's 8 into 2.
  SmolLM2-135M: 576 = 9 heads of 64 sharing 3; theta 100000, eps 1e-5. Width
      36 is no multiple of 8 at all.
  Gemma-2-9B: width 3584, 16 heads of 256 (q 4096 rows, wider than the
      stream) sharing 8. head_dim 4 on width 56: q 64 rows; a head of 56 / 8
      = 7 divides neither q nor k. Its sandwich of (1 + w) RMSNorms and its
      sqrt(d) embedding scale; query_pre_attn_scalar 4 = head_dim, so that
      the score scale is the plain 1/sqrt(hd) a plain file runs with; no soft
      caps (null), which a plain file cannot state either; untied, lm_head
      stored, so that a scaled embedding is not also the head.

Each case is written twice, as the same network in float32:

  hf_heads/<case>/              config.json (the family's keys and spelling
                                as transformers 4.x writes them, rope_theta
                                at the top level) and model.safetensors in
                                the family's names (model.embed_tokens,
                                model.layers.N.self_attn.q_proj, ...,
                                model.norm, lm_head)
  hf_heads/<case>.safetensors   varprof's own names (embed.weight,
                                layers.N.attn_norm, layers.N.attn.q, ...,
                                final_norm, head when untied), for a run with
                                the shape given by options

For Gemma-2 the plain file holds what varprof computes from the checkpoint,
rounded as varprof rounds it: each norm weight float32(1 + w) (one float
sum, as varprof's 1.0f + w), and embed.weight pre-multiplied by the
embedding scale, float32(e * float32(sqrt(56))) (varprof multiplies the
embedding's output by (float)sqrt(d) in float). So the directory and the
plain file give the same profile bit for bit (forward and backward: dL/dx_0
is the same either way; only embed.weight's own gradient differs by the
factor, and the profile does not hold it).

Weights: N(0, 1/fan_in) for projections, N(0, 0.1^2) for biases, 1 + 0.2 N
for RMSNorm weights (0.2 N for Gemma's offsets), N(0, 4/d) for embeddings;
random.Random(seed) with gauss, a seed per case. Tokens: hf_heads/tokens.csv,
2 sequences of 9 ids below 61.

Pure Python 3 (struct and json: the safetensors are written by hand, F32
little-endian), deterministic. Run it from the top of the project:

    /usr/bin/python3 tests/data/gen_head_shapes.py
"""
import json
import math
import os
import random
import struct

from safetensors_file import write_safetensors_bytes

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "hf_heads")
VOCAB, LAYERS, BATCH, TOKENS = 61, 2, 2, 9

CASES = [
    dict(name="qwen25_heads", family="qwen2", seed=7101, d=56, heads=14, kv_heads=2,
         head_dim=4, ffn=152, tied=True, theta=1000000.0, eps=1e-6, qkv_bias=True),
    dict(name="smollm2_heads", family="llama", seed=7102, d=36, heads=9, kv_heads=3,
         head_dim=4, ffn=96, tied=True, theta=100000, eps=1e-5, qkv_bias=False),
    dict(name="gemma2_9b_heads", family="gemma2", seed=7103, d=56, heads=16, kv_heads=8,
         head_dim=4, ffn=112, tied=False, theta=10000.0, eps=1e-6, qkv_bias=False),
]


def f32(x):
    """x rounded to float32, as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


class Tensor:
    def __init__(self, shape, values):
        assert len(values) == math.prod(shape)
        self.shape = list(shape)
        self.values = [f32(v) for v in values]


def proj(rng, out, inp):
    s = 1 / math.sqrt(inp)
    return Tensor([out, inp], [rng.gauss(0, s) for _ in range(out * inp)])


def bias(rng, n):
    return Tensor([n], [rng.gauss(0, 0.1) for _ in range(n)])


def norm_weight(rng, n, offset):
    """RMSNorm weights 1 + 0.2 N; Gemma's stored as the offset 0.2 N."""
    base = 0.0 if offset else 1.0
    return Tensor([n], [base + 0.2 * rng.gauss(0, 1) for _ in range(n)])


def embedding(rng, rows, d):
    s = 2 / math.sqrt(d)
    return Tensor([rows, d], [rng.gauss(0, s) for _ in range(rows * d)])


def draw(c):
    """The case's network under Hugging Face's names, in its stored order."""
    rng = random.Random(c["seed"])
    d, f = c["d"], c["ffn"]
    q_rows, kv_rows = c["heads"] * c["head_dim"], c["kv_heads"] * c["head_dim"]
    gemma = c["family"] == "gemma2"
    t = [("model.embed_tokens.weight", embedding(rng, VOCAB, d))]
    for i in range(LAYERS):
        p = "model.layers.%d." % i
        t.append((p + "input_layernorm.weight", norm_weight(rng, d, gemma)))
        for name, rows in (("q", q_rows), ("k", kv_rows), ("v", kv_rows)):
            t.append((p + "self_attn.%s_proj.weight" % name, proj(rng, rows, d)))
            if c["qkv_bias"]:
                t.append((p + "self_attn.%s_proj.bias" % name, bias(rng, rows)))
        t.append((p + "self_attn.o_proj.weight", proj(rng, d, q_rows)))
        t.append((p + "post_attention_layernorm.weight", norm_weight(rng, d, gemma)))
        if gemma:
            t.append((p + "pre_feedforward_layernorm.weight", norm_weight(rng, d, True)))
        t.append((p + "mlp.gate_proj.weight", proj(rng, f, d)))
        t.append((p + "mlp.up_proj.weight", proj(rng, f, d)))
        t.append((p + "mlp.down_proj.weight", proj(rng, d, f)))
        if gemma:
            t.append((p + "post_feedforward_layernorm.weight", norm_weight(rng, d, True)))
    t.append(("model.norm.weight", norm_weight(rng, d, gemma)))
    if not c["tied"]:
        t.append(("lm_head.weight", proj(rng, VOCAB, d)))
    return t


def plus_one(w):
    """Gemma's 1 + w, one float32 sum (varprof's 1.0f + w)."""
    return Tensor(w.shape, [f32(1.0 + v) for v in w.values])


def scaled(e, d):
    """e float32(sqrt(d)), one float32 product (varprof's embedding scale)."""
    s = f32(math.sqrt(d))
    return Tensor(e.shape, [f32(v * s) for v in e.values])


def plain(c, hf):
    """The same network under varprof's names, in src/forward/tensors.c's order."""
    gemma = c["family"] == "gemma2"
    h = dict(hf)
    norm = plus_one if gemma else (lambda w: w)
    t = [("embed.weight", scaled(h["model.embed_tokens.weight"], c["d"]) if gemma
          else h["model.embed_tokens.weight"])]
    for i in range(LAYERS):
        p, v = "model.layers.%d." % i, "layers.%d." % i
        t.append((v + "attn_norm.weight", norm(h[p + "input_layernorm.weight"])))
        if gemma:  # sandwich: input norms, then the branches' output norms
            t.append((v + "mlp_norm.weight", norm(h[p + "pre_feedforward_layernorm.weight"])))
            t.append((v + "attn_out_norm.weight", norm(h[p + "post_attention_layernorm.weight"])))
            t.append((v + "mlp_out_norm.weight", norm(h[p + "post_feedforward_layernorm.weight"])))
        else:
            t.append((v + "mlp_norm.weight", h[p + "post_attention_layernorm.weight"]))
        for name in ("q", "k", "v", "o"):
            t.append((v + "attn.%s.weight" % name, h[p + "self_attn.%s_proj.weight" % name]))
            if c["qkv_bias"] and name != "o":
                t.append((v + "attn.%s.bias" % name, h[p + "self_attn.%s_proj.bias" % name]))
        for name in ("gate", "up", "down"):
            t.append((v + "mlp.%s.weight" % name, h[p + "mlp.%s_proj.weight" % name]))
    t.append(("final_norm.weight", norm(h["model.norm.weight"])))
    if not c["tied"]:
        t.append(("head.weight", h["lm_head.weight"]))
    return t


def write_safetensors(path, tensors, metadata=None):
    """(name, Tensor) pairs in that order, F32 little-endian."""
    write_safetensors_bytes(path, [(name, "F32", t.shape,
                                    struct.pack("<%df" % len(t.values), *t.values))
                                   for name, t in tensors], metadata)


def config(c):
    """config.json as transformers 4.x writes each family's (keys sorted)."""
    common = {
        "attention_dropout": 0.0,
        "hidden_size": c["d"],
        "initializer_range": 0.02,
        "intermediate_size": c["ffn"],
        "model_type": c["family"],
        "num_attention_heads": c["heads"],
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": c["kv_heads"],
        "rms_norm_eps": c["eps"],
        "rope_theta": c["theta"],
        "tie_word_embeddings": c["tied"],
        "torch_dtype": "float32",
        "use_cache": True,
        "vocab_size": VOCAB,
    }
    if c["family"] == "qwen2":  # Qwen2.5-0.5B's
        common.update({
            "architectures": ["Qwen2ForCausalLM"], "bos_token_id": 59, "eos_token_id": 60,
            "hidden_act": "silu", "max_position_embeddings": 32768, "max_window_layers": 2,
            "sliding_window": 32768, "transformers_version": "4.43.1",
            "use_sliding_window": False})
    elif c["family"] == "llama":  # SmolLM2-135M's
        common.update({
            "architectures": ["LlamaForCausalLM"], "attention_bias": False, "bos_token_id": 0,
            "eos_token_id": 0, "hidden_act": "silu", "initializer_range": 0.041666666666666664,
            "is_llama_config": True, "max_position_embeddings": 8192, "mlp_bias": False,
            "pretraining_tp": 1, "rope_interleaved": False, "rope_scaling": None,
            "transformers_version": "4.42.3"})
    else:  # Gemma-2-9B's
        common.update({
            "architectures": ["Gemma2ForCausalLM"], "attention_bias": False,
            "attn_logit_softcapping": None, "bos_token_id": 2, "cache_implementation": "hybrid",
            "eos_token_id": 1, "final_logit_softcapping": None, "head_dim": c["head_dim"],
            "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
            "max_position_embeddings": 8192, "pad_token_id": 0,
            "query_pre_attn_scalar": c["head_dim"], "sliding_window": 4096,
            "sliding_window_size": 4096, "transformers_version": "4.42.0.dev0"})
    return dict(sorted(common.items()))


def write_case(c):
    hf = draw(c)
    folder = os.path.join(OUT, c["name"])
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config(c), f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(folder, "model.safetensors"), hf, {"format": "pt"})
    write_safetensors(os.path.join(OUT, c["name"] + ".safetensors"), plain(c, hf))


def main():
    os.makedirs(OUT, exist_ok=True)
    for c in CASES:
        write_case(c)
    rng = random.Random(7100)
    with open(os.path.join(OUT, "tokens.csv"), "w") as f:
        for _ in range(BATCH):
            f.write(",".join(str(rng.randrange(VOCAB)) for _ in range(TOKENS)) + "\n")


if __name__ == "__main__":
    main()
