#!/usr/bin/env python3
"""BF16 and sharded copies of one conformance case per new family (issue 30).

The conformance corpus (tests/data/conformance/) holds the eleven families
added since issue 15 to transformers' figures, but in float32 single files:
only qwen3 has a BF16 case and none is sharded. For one case of each family
(for opt both placements, for gpt_neox the parallel one) this writes into
tests/data/family_shards/CASE/:

  bf16/  config.json as transformers writes it for a bfloat16 model (its
         "dtype" or "torch_dtype" "bfloat16"), and the case's tensors
         rounded to BF16 (to nearest, ties to even, as torch's
         .to(torch.bfloat16)) in three shards model-0000K-of-00003.safetensors
         with model.safetensors.index.json ("metadata": {"total_parameters",
         "total_size"}, "weight_map" sorted by name, as save_pretrained of
         transformers 5 writes it). The tensors go to the shards in name order,
         cut at about a third of the bytes each; the script checks that some
         decoder layer has tensors in two shards, so the reader must gather a
         layer across files.
  f32/   the same BF16-rounded values widened back to float32 (exact), in one
         model.safetensors, with the case's config.json unchanged.
  tokens.csv: the corpus case's token ids.

Every safetensors header is as the safetensors library writes it: the
"__metadata__" {"format": "pt"}, tensors sorted by name, data in that order,
the header padded with spaces to 8 bytes.

So varprof on bf16/ and on f32/ must print the same bytes: any difference is
the reader's (BF16 widening, the index, the family's names across shards),
none the arithmetic's, which the corpus holds. README.md says what each
case holds.

Run from the top of the project (NumPy only; where torch imports, the
rounding is checked against torch's own):

    /usr/bin/python3 tests/data/gen_family_shards.py
"""
import json
import os
import re
import shutil
import struct

import numpy as np

from safetensors_file import write_safetensors_bytes

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "conformance")
OUT = os.path.join(HERE, "family_shards")
SHARDS = 3
CASES = ["qwen3", "gemma3", "gpt_neox", "gptj", "falcon", "phi", "phi3", "opt_pre_norm",
         "opt_post_ln", "starcoder2", "cohere", "bloom"]
# What each corpus case exercises (tests/data/conformance/README.md), for README.md
WHAT = {
    "qwen3": "per-head QK-norm, head_dim x heads != width",
    "gemma3": "QK-norm, (1 + w) sandwich norms, local RoPE base",
    "gpt_neox": "parallel, two norms, rotary_pct, fused per-head query_key_value",
    "gptj": "parallel, one shared norm, interleaved rotary_dim",
    "falcon": "parallel, multi-query, fused qkv, no biases",
    "phi": "parallel, partial rotary, dense naming, biases",
    "phi3": "fused qkv_proj and gate_up_proj",
    "opt_pre_norm": "ReLU, learned positions offset 2",
    "opt_post_ln": "Post-LN, project_in/project_out",
    "starcoder2": "LayerNorm with bias, biased GQA, gelu-tanh",
    "cohere": "parallel, LayerNorm without bias, logit_scale, tied",
    "bloom": "ALiBi, embedding LayerNorm, fused per-head qkv, tied",
}


def to_bf16_bits(a):
    """float32 -> its top 16 bits, rounded to nearest, ties to even."""
    u = np.ascontiguousarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    if np.isnan(a).any() or np.isinf(a).any():
        raise ValueError("a corpus weight is not finite")
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")


def widen(bits):
    return (bits.astype(np.uint32) << 16).view("<f4")


def check_against_torch(a, bits):
    """Where torch imports, its .to(torch.bfloat16) gives the same bits."""
    try:
        import torch
    except ImportError:
        return False
    t = torch.from_numpy(a.copy()).to(torch.bfloat16).view(torch.int16).numpy().view("<u2")
    if not np.array_equal(t, bits):
        raise AssertionError("the BF16 rounding differs from torch's")
    return True


def read_safetensors(path):
    """{name: (dtype, shape, float32 array)} of an F32 file."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        if info["dtype"] != "F32":
            raise ValueError("%s: %s is %s, not F32" % (path, name, info["dtype"]))
        b, e = info["data_offsets"]
        a = np.frombuffer(raw[8 + n + b:8 + n + e], dtype="<f4").reshape(info["shape"])
        out[name] = a
    return out


def write_safetensors(path, tensors, dtype):
    """tensors: {name: float32 array}, written sorted by name as dtype."""
    write_safetensors_bytes(path, [(name, dtype, tensors[name].shape,
                                    (to_bf16_bits(tensors[name]) if dtype == "BF16"
                                     else tensors[name].astype("<f4")).tobytes())
                                   for name in sorted(tensors)], {"format": "pt"})


def write_config(path, config, dtype):
    config = dict(config)
    key = "dtype" if "dtype" in config else "torch_dtype"
    config[key] = dtype
    with open(path, "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")


def layer_of(name):
    m = re.search(r"\.(\d+)\.", name)
    return int(m.group(1)) if m else None


def shard_names(names, sizes):
    """names in order, cut at about a third of the bytes each: [[names] x 3]."""
    total, at, parts = sum(sizes[n] for n in names), 0, [[] for _ in range(SHARDS)]
    for n in names:
        parts[min(SHARDS - 1, at * SHARDS // total)].append(n)
        at += sizes[n]
    return parts


def split_layers(parts):
    """The decoder layers whose tensors lie in more than one shard."""
    where = {}
    for k, part in enumerate(parts):
        for n in part:
            if layer_of(n) is not None:
                where.setdefault(layer_of(n), set()).add(k)
    return sorted(layer for layer, shards in where.items() if len(shards) > 1)


def write_case(case):
    src = os.path.join(CORPUS, case)
    with open(os.path.join(src, "config.json")) as f:
        config = json.load(f)
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    rounded, worst, torch_checked = {}, 0.0, False
    for name, a in tensors.items():
        bits = to_bf16_bits(a)
        torch_checked = check_against_torch(a, bits) or torch_checked
        rounded[name] = widen(bits).reshape(a.shape)
        nz = a != 0
        if nz.any():
            worst = max(worst, float(np.max(np.abs(rounded[name][nz] - a[nz]) / np.abs(a[nz]))))
    out = os.path.join(OUT, case)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "bf16"))
    os.makedirs(os.path.join(out, "f32"))
    shutil.copyfile(os.path.join(src, "tokens.csv"), os.path.join(out, "tokens.csv"))

    write_config(os.path.join(out, "f32", "config.json"), config, "float32")
    write_safetensors(os.path.join(out, "f32", "model.safetensors"), rounded, "F32")

    write_config(os.path.join(out, "bf16", "config.json"), config, "bfloat16")
    names = sorted(rounded)
    parts = shard_names(names, {n: rounded[n].size * 2 for n in names})
    split = split_layers(parts)
    if not split or any(not p for p in parts):
        raise AssertionError("%s: no layer split across shards, or an empty shard" % case)
    weight_map = {}
    for k, part in enumerate(parts):
        file = "model-%05d-of-%05d.safetensors" % (k + 1, SHARDS)
        write_safetensors(os.path.join(out, "bf16", file), {n: rounded[n] for n in part}, "BF16")
        weight_map.update({n: file for n in part})
    count = sum(a.size for a in rounded.values())
    index = {"metadata": {"total_parameters": count, "total_size": 2 * count},
             "weight_map": {n: weight_map[n] for n in sorted(weight_map)}}
    with open(os.path.join(out, "bf16", "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")
    print("%-12s %-12s %3d tensors, %6d parameters, shards of %s tensors, layer%s %s split; "
          "BF16 moves a weight by at most %.2g relative%s"
          % (case, config["model_type"], len(names), count, "/".join(str(len(p)) for p in parts),
             "s" if len(split) > 1 else "", ",".join(map(str, split)), worst,
             " (torch's rounding agrees)" if torch_checked else ""))
    return config["model_type"], len(names), count, [len(p) for p in parts], split


README_HEAD = """# BF16 and sharded copies of the new families' conformance cases

Written by `tests/data/gen_family_shards.py` (its docstring says how) from
one case of `tests/data/conformance/` per family (`cases.txt` lists them).
`tests/program/test_family_shards.c` runs varprof on each case's `bf16/`
(BF16, {shards} shards and `model.safetensors.index.json`) and `f32/` (the
same BF16-rounded values in float32, one `model.safetensors`) and requires
the same bytes out, and the BF16 run's loss near the corpus figure for the
float32 original. Each case also has the corpus case's `tokens.csv`.

| case | model_type | what the family brings | tensors | parameters | tensors per shard | layers split across shards |
|---|---|---|---|---|---|---|
"""


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    rows = []
    for case in CASES:
        model_type, n, count, parts, split = write_case(case)
        rows.append("| `%s` | %s | %s | %d | %d | %s | %s |"
                    % (case, model_type, WHAT[case], n, count, " / ".join(map(str, parts)),
                       ", ".join(map(str, split))))
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write(README_HEAD.format(shards=SHARDS))
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(CASES) + "\n")


if __name__ == "__main__":
    main()
