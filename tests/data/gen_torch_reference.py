#!/usr/bin/env python3
"""PyTorch's own weights, tokens and stream norms, for varprof's --weights.

What it makes (all in tests/data/, next to this script)
-------------------------------------------------------
The seed's stack (../shared/seeds/000_d3793811bbe08839.txt): vocab 24,
d = 48, MLP hidden 96, exact GELU, nn.LayerNorm, 24 MLP-only blocks,
torch.manual_seed(0) before building, tokens
torch.randint(0, 24, (2, 12), generator=torch.Generator().manual_seed(1)),
in both placements:

    pre-norm   x = x + fc2(gelu(fc1(norm(x))))
    post-ln    x = norm(x + fc2(gelu(fc1(x))))

  seed_stack_pre_norm.safetensors        F32
  seed_stack_post_ln.safetensors         F32
  seed_stack_pre_norm_bf16.safetensors   the pre-norm stack in BF16 (a dtype test)
  seed_tokens.csv                        2 rows of 12 token ids, no header
  seed_stack_norms.csv                   case,block,stream_norm: the Frobenius
                                         norm of the batch's stream after every
                                         block 0..23, cases pre_norm and post_ln

The script asserts the seed's printed figures: pre-norm 35.29, 43.97, 50.82
at blocks 0, 11, 23 and post-ln 33.94 at every block (rounded to 2 decimals).

An attention case: 4 layers, d = 64, 4 heads of 16, MLP hidden 4d = 256,
RMSNorm (x / sqrt(mean(x^2) + 1e-5) * weight, no bias), QK-norm (an RMSNorm
with its own weight [16] over each head's query and key coordinates, after
the projections and the view into heads), causal softmax attention with
scale 1/sqrt(16), Q, K, V, O projections with biases, exact GELU; a layer is
the attention sub-block then the MLP sub-block, in two placements:

    pre-norm   x = x + attn(attn_norm(x));                x = x + mlp(mlp_norm(x))
    sandwich   x = x + attn_out_norm(attn(attn_norm(x))); x = x + mlp_out_norm(mlp(mlp_norm(x)))

Weights: torch.manual_seed(2), vocab 50, PyTorch's default nn.Embedding and
nn.Linear init; then every norm weight is redrawn as 1 + 0.1 * randn (in the
order attn_norm, q_norm, k_norm, mlp_norm, attn_out_norm, mlp_out_norm, layer
by layer), so that a norm weight mapped to the wrong place shows. Both
placements are built from the same draws: the pre-norm file's tensors are
the sandwich file's, less the output norms. Tokens: batch 2 x 16 from
torch.Generator().manual_seed(3).

  attn_pre_norm.safetensors, attn_sandwich.safetensors   F32
  attn_tokens.csv      2 rows of 16 token ids, no header
  attn_norms.csv       case,sub_block,stream_norm: the stream's Frobenius norm
                       after every sub-block 1..8 (2i+1 after layer i's
                       attention, 2i+2 after its MLP), cases pre_norm, sandwich

Tensor names are varprof's (see issue 6 and the manual), projections in
PyTorch's [out, in] layout: embed.weight [V, d]; layers.i.attn.{q,k,v,o}.weight
[d, d] and .bias [d]; layers.i.attn.q_norm.weight, layers.i.attn.k_norm.weight
[16]; layers.i.mlp.fc1.weight [m d, d], .bias; layers.i.mlp.fc2.weight [d, m d],
.bias; layers.i.attn_norm.weight (.bias for LayerNorm), layers.i.mlp_norm.*,
layers.i.attn_out_norm.weight, layers.i.mlp_out_norm.weight. An MLP-only
layer's single norm is mlp_norm, on the branch input (pre-norm) or on the
stream (post-ln). The seed's output head is built (so the RNG runs exactly as
in the seed) but not exported: varprof measures the stream, not the logits.

The safetensors files are written by this script itself (there is no
safetensors package in Debian's python3): an 8-byte little-endian header
length N, a JSON header of N bytes padded with spaces to a multiple of 8,
{"name": {"dtype", "shape", "data_offsets": [begin, end]}} with offsets into
the data that follows, then the tensors back to back, little-endian. F32,
F16 and BF16 (the top 16 bits of the float32, rounded to nearest even).

Run it from the top of the project; it overwrites the files above:

    /usr/bin/python3 tests/data/gen_torch_reference.py

torch (Debian's python3-torch) is needed only to regenerate these files, not
to build varprof or run its tests. Made with PyTorch 1.13.0a0 (Debian); the
version is also the leading '# ...' line of the norm CSVs (the token CSVs
are bare rows of integers, as --token-ids reads them).
"""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from safetensors_file import write_safetensors_bytes

HERE = os.path.dirname(os.path.abspath(__file__))
ORIGIN = "PyTorch %s, made by tests/data/gen_torch_reference.py" % torch.__version__


# ---- safetensors ----

def to_bf16_bits(a):
    """float32 -> the top 16 bits, rounded to nearest even (NaN stays NaN)."""
    u = np.ascontiguousarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(a, dtype=np.float32))
    rounded[nan] = (u[nan] >> 16) | 0x40  # a quiet NaN, whatever the rounding
    return rounded.astype("<u2")


def tensor_bytes(t, dtype):
    a = t.detach().to(torch.float32).contiguous().numpy()
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        return a.astype("<f2").tobytes()
    if dtype == "BF16":
        return to_bf16_bits(a).tobytes()
    raise ValueError("unsupported dtype %s" % dtype)


def write_safetensors(path, tensors, dtype="F32"):
    """tensors: (name, tensor) pairs, written in that order."""
    write_safetensors_bytes(path, [(name, dtype, t.shape, tensor_bytes(t, dtype))
                                   for name, t in tensors])


def read_safetensors(path):
    """Reads back what write_safetensors wrote, as float32 tensors (a self-check)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        chunk = data[b:e]
        if info["dtype"] == "F32":
            a = np.frombuffer(chunk, dtype="<f4")
        elif info["dtype"] == "F16":
            a = np.frombuffer(chunk, dtype="<f2").astype(np.float32)
        else:
            a = (np.frombuffer(chunk, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        out[name] = torch.from_numpy(a.copy()).reshape(info["shape"])
    return out


def write_tokens(path, tokens):
    with open(path, "w") as f:
        for row in tokens.tolist():
            f.write(",".join(str(t) for t in row) + "\n")


def write_norms(path, key, rows):
    with open(path, "w") as f:
        f.write("# %s\n" % ORIGIN)
        f.write("case,%s,stream_norm\n" % key)
        for case, index, value in rows:
            f.write("%s,%d,%.9g\n" % (case, index, value))


# ---- the seed's stack ----

SV, SD, ST, SL = 24, 48, 12, 24


class SeedBlock(nn.Module):
    """The seed's Block, verbatim in its arithmetic."""

    def __init__(self, pre):
        super().__init__()
        self.pre = pre
        self.norm = nn.LayerNorm(SD)
        self.fc1, self.fc2 = nn.Linear(SD, 2 * SD), nn.Linear(2 * SD, SD)

    def branch(self, h):
        return self.fc2(F.gelu(self.fc1(h)))

    def forward(self, x):
        if self.pre:
            return x + self.branch(self.norm(x))
        return self.norm(x + self.branch(x))


def seed_build(pre):
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(SV, SD), *[SeedBlock(pre) for _ in range(SL)],
                         nn.Linear(SD, SV))


def seed_tensors(net):
    out = [("embed.weight", net[0].weight)]
    for i, blk in enumerate(net[1:-1]):
        p = "layers.%d." % i
        out += [(p + "mlp.fc1.weight", blk.fc1.weight), (p + "mlp.fc1.bias", blk.fc1.bias),
                (p + "mlp.fc2.weight", blk.fc2.weight), (p + "mlp.fc2.bias", blk.fc2.bias),
                (p + "mlp_norm.weight", blk.norm.weight), (p + "mlp_norm.bias", blk.norm.bias)]
    return out


def seed_norms(net, tokens):
    with torch.no_grad():
        h = net[0](tokens)
        sizes = []
        for blk in net[1:-1]:
            h = blk(h)
            sizes.append(h.norm().item())
    return sizes


def seed_case():
    tokens = torch.randint(0, SV, (2, ST), generator=torch.Generator().manual_seed(1))
    write_tokens(os.path.join(HERE, "seed_tokens.csv"), tokens)
    rows = []
    for case, pre in (("pre_norm", True), ("post_ln", False)):
        net = seed_build(pre)
        sizes = seed_norms(net, tokens)
        tensors = seed_tensors(net)
        path = os.path.join(HERE, "seed_stack_%s.safetensors" % case)
        write_safetensors(path, tensors)
        back = read_safetensors(path)
        assert list(back) == [n for n, _ in tensors]
        assert all(torch.equal(back[n], t.detach()) for n, t in tensors)
        if pre:
            assert [round(sizes[b], 2) for b in (0, 11, 23)] == [35.29, 43.97, 50.82], sizes
            bf16 = os.path.join(HERE, "seed_stack_pre_norm_bf16.safetensors")
            write_safetensors(bf16, tensors, "BF16")
            back = read_safetensors(bf16)
            for n, t in tensors:  # torch's own rounding to bfloat16 is to nearest even
                assert torch.equal(back[n], t.detach().to(torch.bfloat16).to(torch.float32)), n
        else:
            assert all(round(s, 2) == 33.94 for s in sizes), sizes
        rows += [(case, b, s) for b, s in enumerate(sizes)]
    write_norms(os.path.join(HERE, "seed_stack_norms.csv"), "block", rows)
    return rows


# ---- the attention case ----

AV, AD, AH, AT, AL = 50, 64, 4, 16, 4
AHD = AD // AH
EPS = 1e-5


class RMSNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm(AD)
        self.q, self.k = nn.Linear(AD, AD), nn.Linear(AD, AD)
        self.v, self.o = nn.Linear(AD, AD), nn.Linear(AD, AD)
        self.q_norm, self.k_norm = RMSNorm(AHD), RMSNorm(AHD)
        self.mlp_norm = RMSNorm(AD)
        self.fc1, self.fc2 = nn.Linear(AD, 4 * AD), nn.Linear(4 * AD, AD)
        self.attn_out_norm, self.mlp_out_norm = RMSNorm(AD), RMSNorm(AD)

    def norms(self):
        return [self.attn_norm, self.q_norm, self.k_norm, self.mlp_norm,
                self.attn_out_norm, self.mlp_out_norm]

    def attn(self, h):
        B, T, _ = h.shape
        q = self.q_norm(self.q(h).view(B, T, AH, AHD)).transpose(1, 2)
        k = self.k_norm(self.k(h).view(B, T, AH, AHD)).transpose(1, 2)
        v = self.v(h).view(B, T, AH, AHD).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(AHD)
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.o(out.transpose(1, 2).reshape(B, T, AD))

    def mlp(self, h):
        return self.fc2(F.gelu(self.fc1(h)))

    def sub_blocks(self, x, sandwich):
        """Yields the stream after the attention's sub-block, then after the MLP's."""
        a = self.attn(self.attn_norm(x))
        x = x + (self.attn_out_norm(a) if sandwich else a)
        yield x
        m = self.mlp(self.mlp_norm(x))
        x = x + (self.mlp_out_norm(m) if sandwich else m)
        yield x


def attn_build():
    torch.manual_seed(2)
    embed = nn.Embedding(AV, AD)
    layers = [Layer() for _ in range(AL)]
    with torch.no_grad():
        for layer in layers:
            for norm in layer.norms():
                norm.weight.copy_(1 + 0.1 * torch.randn(norm.weight.shape))
    return embed, layers


def attn_tensors(embed, layers, sandwich):
    out = [("embed.weight", embed.weight)]
    for i, ly in enumerate(layers):
        p = "layers.%d." % i
        for name in ("q", "k", "v", "o"):
            lin = getattr(ly, name)
            out += [(p + "attn.%s.weight" % name, lin.weight), (p + "attn.%s.bias" % name, lin.bias)]
        out += [(p + "attn.q_norm.weight", ly.q_norm.weight),
                (p + "attn.k_norm.weight", ly.k_norm.weight),
                (p + "mlp.fc1.weight", ly.fc1.weight), (p + "mlp.fc1.bias", ly.fc1.bias),
                (p + "mlp.fc2.weight", ly.fc2.weight), (p + "mlp.fc2.bias", ly.fc2.bias),
                (p + "attn_norm.weight", ly.attn_norm.weight),
                (p + "mlp_norm.weight", ly.mlp_norm.weight)]
        if sandwich:
            out += [(p + "attn_out_norm.weight", ly.attn_out_norm.weight),
                    (p + "mlp_out_norm.weight", ly.mlp_out_norm.weight)]
    return out


def attn_case():
    tokens = torch.randint(0, AV, (2, AT), generator=torch.Generator().manual_seed(3))
    write_tokens(os.path.join(HERE, "attn_tokens.csv"), tokens)
    rows = []
    for case, sandwich in (("pre_norm", False), ("sandwich", True)):
        embed, layers = attn_build()
        tensors = attn_tensors(embed, layers, sandwich)
        path = os.path.join(HERE, "attn_%s.safetensors" % case)
        write_safetensors(path, tensors)
        back = read_safetensors(path)
        assert list(back) == [n for n, _ in tensors]
        assert all(torch.equal(back[n], t.detach()) for n, t in tensors)
        with torch.no_grad():
            x = embed(tokens)
            k = 0
            for layer in layers:
                for x in layer.sub_blocks(x, sandwich):
                    k += 1
                    rows.append((case, k, x.norm().item()))
        assert k == 2 * AL
    write_norms(os.path.join(HERE, "attn_norms.csv"), "sub_block", rows)
    return rows


def main():
    torch.set_num_threads(1)  # one summation order, whatever the machine
    for case, b, s in seed_case():
        if b in (0, 11, 23):
            print("seed %-8s block %2d  %.4f" % (case, b, s))
    for case, k, s in attn_case():
        print("attn %-8s sub-block %d  %.6f" % (case, k, s))


if __name__ == "__main__":
    main()
