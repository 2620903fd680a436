"""What the PyTorch reference scripts of tests/data/hf/ cases share.

A case is a tiny checkpoint (config.json as transformers writes it,
model.safetensors in F32) and its figures from PyTorch in float32 and in
float64, one CSV line per figure (case,quantity,key,shape,float32,float64, as
bloom_expected.csv). The figures are the stream after each sub-block
(stream_norm, grad_var), the loss, each sub-block's weight_grad (a rule of the
script's own), every parameter's gradient Frobenius norm and RMS under the
checkpoint's names, and grad_norm (every parameter's squares summed, as
clip_grad_norm_ sums them).

The scripts import it from their own folder (Python puts a script's folder
first on sys.path), so run them as /usr/bin/python3 tests/data/gen_X.py.
"""
import json
import math
import os
import shutil

import torch.nn.functional as F

# the safetensors writer and reader and the token writer stay where the older scripts find them
from gen_torch_reference import read_safetensors, write_safetensors, write_tokens  # noqa: F401

HEADER = "case,quantity,key,shape,float32,float64\n"


class Trace:
    """The stream after each sub-block and each branch's input to its last
    projection, with that projection's output where a figure needs the
    output's gradient; every gradient kept. branch returns the output, so a
    forward pass can trace it where it is added."""

    def __init__(self):
        self.streams, self.branches = [], []

    def stream(self, x):
        x.retain_grad()
        self.streams.append(x)
        return x

    def branch(self, h, o=None):
        h.retain_grad()
        if o is not None:
            o.retain_grad()
        self.branches.append((h, o))
        return o


def rms_of(t):
    return t.detach().double().pow(2).mean().sqrt().item()


def shape_of(t):
    return "x".join(str(n) for n in t.shape)


def branch_weight_grads(trace):
    """A sub-block's weight_grad: RMS(dL/d output) RMS(input) of its last projection."""
    return [("weight_grad", str(k), "", rms_of(o.grad) * rms_of(h))
            for k, (h, o) in enumerate(trace.branches, start=1)]


def parallel_weight_grads(trace):
    """A parallel sub-block's weight_grad, attention's and the MLP's branch
    inputs against the one stream gradient: sqrt((w_attn^2 + w_mlp^2) / 2),
    w = RMS(dL/dx_k) RMS(branch input)."""
    rows = []
    for k in range(1, len(trace.streams)):
        d = rms_of(trace.streams[k].grad)
        attn_in, mlp_in = trace.branches[2 * (k - 1)][0], trace.branches[2 * (k - 1) + 1][0]
        both = (d * rms_of(attn_in)) ** 2 + (d * rms_of(mlp_in)) ** 2
        rows.append(("weight_grad", str(k), "", math.sqrt(both / 2)))
    return rows


def figures(stored, tokens, dtype, forward, weight_grads):
    """The rows (quantity, key, shape, value) of one precision: forward(w,
    trace) gives the logits, weight_grads(trace) the weight_grad rows; the loss
    is the mean cross-entropy of the logits at t against token t + 1."""
    w = {n: t.detach().to(dtype).requires_grad_(True) for n, t in stored.items()}
    trace = Trace()
    logits = forward(w, trace)
    vocab = logits.shape[-1]
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, vocab), tokens[:, 1:].reshape(-1))
    loss.backward()
    rows = [("stream_norm", str(k), "", x.detach().double().norm().item())
            for k, x in enumerate(trace.streams)]
    rows.append(("loss", "", "", loss.item()))
    rows += [("grad_var", str(k), "", x.grad.detach().double().pow(2).mean().item())
             for k, x in enumerate(trace.streams)]
    rows += weight_grads(trace)
    for name, t in w.items():
        rows.append(("frobenius", name, shape_of(t), t.grad.double().norm().item()))
        rows.append(("rms", name, shape_of(t), rms_of(t.grad)))
    total = sum(t.grad.double().pow(2).sum().item() for t in w.values())
    rows.append(("grad_norm", "", "", math.sqrt(total)))
    return rows


def write_checkpoint(out, config, weights, sort_keys=False):
    """Writes out/config.json and out/model.safetensors (F32) afresh; returns
    the tensors read back, so that the figures come from what was stored."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=sort_keys)
        f.write("\n")
    path = os.path.join(out, "model.safetensors")
    write_safetensors(path, list(weights.items()), "F32")
    return read_safetensors(path)


def case_lines(name, f32, f64):
    """The CSV lines of one case, and how far float32 strays from float64 (relative)."""
    lines, worst = [], 0.0
    for (q, k, s, a), (_, _, _, b) in zip(f32, f64):
        lines.append("%s,%s,%s,%s,%.9g,%.17g" % (name, q, k, s, a, b))
        if abs(b) > 1e-12:
            worst = max(worst, abs(a - b) / abs(b))
    print("%s: %d rows, float32 against float64 at most %.2g relative" % (name, len(lines), worst))
    return lines


def write_expected(path, origin, lines):
    with open(path, "w") as f:
        f.write("# %s\n" % origin)
        f.write(HEADER)
        for line in lines:
            f.write(line + "\n")
