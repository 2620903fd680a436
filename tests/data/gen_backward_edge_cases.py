#!/usr/bin/python3
"""Two tiny weights files for the backward pass's refusals and limits.

One MLP-only pre-norm layer, LayerNorm, d = 8, vocab 5, MLP hidden 16, in
PyTorch's names (include/varprof/forward.h), F32, drawn from NumPy's
default_rng(13):

  grad_bad_head.safetensors        head.weight is [4, 8] while embed.weight
                                   is [5, 8]: a head that does not map the
                                   width onto the vocabulary; --grad with the
                                   copy loss must refuse it, naming the shape.
  grad_float_overflow.safetensors  a proper head, and final_norm.weight of
                                   1e38: the final norm's output fits float
                                   (a LayerNorm's |x_hat| <= sqrt(d - 1) =
                                   2.65, so |y| <= 2.65e38 < 3.4e38), and so
                                   does the random loss, summed in double; but
                                   its gradient through the norm, about
                                   1e38 r / sigma with the stream's sigma
                                   about 1e-3 (the embedding and fc2 scaled
                                   by 1e-3), overflows float: the backward
                                   must report the sub-block, not print inf.

Run: /usr/bin/python3 tests/data/gen_backward_edge_cases.py (writes next to
itself). Needs NumPy only.
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
D, V, H = 8, 5, 16


def write(path, tensors):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def layer(rng):
    return {
        "embed.weight": rng.standard_normal((V, D)),
        "layers.0.mlp_norm.weight": np.ones(D),
        "layers.0.mlp_norm.bias": np.zeros(D),
        "layers.0.mlp.fc1.weight": rng.uniform(-0.35, 0.35, (H, D)),
        "layers.0.mlp.fc1.bias": rng.uniform(-0.35, 0.35, H),
        "layers.0.mlp.fc2.weight": rng.uniform(-0.25, 0.25, (D, H)),
        "layers.0.mlp.fc2.bias": rng.uniform(-0.25, 0.25, D),
    }


def main():
    rng = np.random.default_rng(13)
    bad = layer(rng)
    bad["head.weight"] = rng.uniform(-0.35, 0.35, (V - 1, D))
    bad["head.bias"] = rng.uniform(-0.35, 0.35, V - 1)
    write(os.path.join(HERE, "grad_bad_head.safetensors"), bad)

    big = layer(rng)
    # a small stream (sigma about 1e-3) so that the norm's Jacobian, 1/sigma,
    # lifts 1e38 r beyond float while the forward, normalised, stays within
    for name in ("embed.weight", "layers.0.mlp.fc2.weight", "layers.0.mlp.fc2.bias"):
        big[name] = big[name] * 1e-3
    big["final_norm.weight"] = np.full(D, 1e38)
    big["final_norm.bias"] = np.zeros(D)
    big["head.weight"] = rng.uniform(-0.35, 0.35, (V, D))
    big["head.bias"] = rng.uniform(-0.35, 0.35, V)
    write(os.path.join(HERE, "grad_float_overflow.safetensors"), big)


if __name__ == "__main__":
    main()
