#!/usr/bin/env python3
"""Falcon's other forms of the conformance corpus's falcon case (issue 30).

The corpus's falcon checkpoint (tests/data/conformance/falcon: multi_query,
bias false, parallel_attn, written and run by transformers) rewritten as the
same network in two other forms of FalconConfig, so that transformers' own
figures for it (its expected.json) hold for them too:

  heads  multi_query false, num_kv_heads = num_attention_heads: the fused
         query_key_value laid out head by head (q, k, v of head 0, then of
         head 1, ...), each head's k and v a copy of the one multi-query head
         (transformers' FalconAttention._split_heads, view(H, 3, hd));
  bias   bias true: query_key_value, dense, dense_h_to_4h and dense_4h_to_h
         each given a bias of zeros.

Plain Python (json, struct), no varprof code: the float32 values are copied,
not recomputed. Usage: python3 gen_falcon_forms.py [OUTDIR] (default
tests/data/falcon_forms beside this script).
"""
import json
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "conformance", "falcon")


def load(path):
    blob = open(path, "rb").read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        start, end = info["data_offsets"]
        tensors[name] = (info["shape"], list(struct.unpack("<%df" % ((end - start) // 4),
                                                            data[start:end])))
    return tensors


def save(path, tensors):
    header, blob = {}, b""
    for name in sorted(tensors):
        shape, values = tensors[name]
        raw = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text + blob)


def heads_form(tensors, heads, hd, width):
    """[(H + 2) hd, d] multi-query rows into [H x 3 x hd, d], head by head."""
    out = dict(tensors)
    for name, (shape, values) in tensors.items():
        if not name.endswith("query_key_value.weight"):
            continue
        rows = [values[r * width:(r + 1) * width] for r in range(shape[0])]
        q, k, v = rows[:heads * hd], rows[heads * hd:(heads + 1) * hd], rows[(heads + 1) * hd:]
        fused = []
        for h in range(heads):
            fused += q[h * hd:(h + 1) * hd] + k + v
        out[name] = ([3 * heads * hd, width], [x for row in fused for x in row])
    return out


def bias_form(tensors):
    """A zero bias beside every projection's weight (not the norms', not the embedding's)."""
    out = dict(tensors)
    for name, (shape, _) in tensors.items():
        if name.startswith("transformer.h.") and name.endswith(".weight") and "layernorm" not in name:
            out[name[:-len("weight")] + "bias"] = ([shape[0]], [0.0] * shape[0])
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "falcon_forms")
    config = json.load(open(os.path.join(SOURCE, "config.json")))
    tensors = load(os.path.join(SOURCE, "model.safetensors"))
    heads, width = config["num_attention_heads"], config["hidden_size"]
    assert config["multi_query"] and not config["bias"] and config["parallel_attn"]
    forms = {
        "heads": (heads_form(tensors, heads, width // heads, width),
                  {"multi_query": False, "num_kv_heads": heads}),
        "bias": (bias_form(tensors), {"bias": True}),
    }
    for form, (weights, changes) in forms.items():
        directory = os.path.join(outdir, form)
        os.makedirs(directory, exist_ok=True)
        edited = dict(config)
        edited.update(changes)
        with open(os.path.join(directory, "config.json"), "w") as out:
            json.dump(edited, out, indent=2)
            out.write("\n")
        save(os.path.join(directory, "model.safetensors"), weights)
        shutil.copy(os.path.join(SOURCE, "tokens.csv"), directory)


if __name__ == "__main__":
    main()
