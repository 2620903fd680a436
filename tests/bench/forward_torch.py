#!/usr/bin/python3
"""`make bench`, the forward pass: varprof's network in PyTorch, timed.

The same blocks as src/forward_run.c with the pre-norm placement and
LayerNorm (eps 1e-5, weight 1, bias 0):

    x = Embedding(V, d)(tokens)                       # [B, T, d]
    per layer:
        x = x + Attention(LayerNorm(x))               # unless --block mlp
        x = x + Linear(m d, d)(GELU(Linear(d, m d)(LayerNorm(x))))

Attention is causal multi-head self-attention: Q, K, V and O are
nn.Linear(d, d) with biases; head h owns coordinates h*d/H .. (h+1)*d/H - 1
(view(B, T, H, d/H)); scores are q k^T / sqrt(d/H), masked above the
diagonal, softmaxed over the keys, times v. GELU is the exact (erf) one,
PyTorch's default. With --block mlp a layer is the MLP sub-block alone, as in
the seed stack. Weights are PyTorch's default init (varprof's --init torch);
no final norm, as varprof has none for pre-norm.

Timed: the forward pass only, from the embedding lookup through the last
block, float32, eval() and torch.no_grad(), torch.set_num_threads(--threads).
Each repeat runs the pass enough times to last about --min-time seconds and
keeps the mean; the result is the best repeat, after an untimed warm-up
(two when a pass is short: the second sizes the repeats).

FLOPs per pass (the same count as tests/bench/bench_forward.c): 2 n k m for
each matmul of n rows, k inputs and m outputs (n = B T), plus attention's
q k^T and p v at 2 B H T T hd each HALVED for causality (B H T T hd each):
the useful work of a causal pass. PyTorch 1.13 has no fused causal kernel,
so it computes the full T x T products and masks; varprof skips the masked
half. Norms, GELU, softmax, biases and the residual adds are not counted.

--linear onednn converts every nn.Linear with torch.utils.mkldnn.to_mkldnn
(oneDNN's inner product; the rest of the network, attention's q k^T and p v
included, stays as it is). Debian's torch 1.13 does its dense matmuls with
the BLAS that /usr/lib/x86_64-linux-gnu/libblas.so.3 points to, by default
the reference (netlib) one, a few GFLOP/s; oneDNN's is what a tuned PyTorch
build gets for the projections. `make bench` reports both.

When the warm-up shows a pass is slow, fewer repeats are run so that the
timed repeats take at most about --max-time seconds (at least one repeat).

Prints one JSON line: ms per pass, GFLOP/s, the final stream's RMS (a check
that both sides run networks of the same statistics) and torch's version.
"""
import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn

import peer_timing as peer


class Attention(nn.Module):
    def __init__(self, d, heads, max_tokens):
        super().__init__()
        self.h = heads
        self.hd = d // heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.scale = 1.0 / math.sqrt(self.hd)
        mask = torch.ones(max_tokens, max_tokens, dtype=torch.bool).triu(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        B, T, d = x.shape
        q = self.q(x).view(B, T, self.h, self.hd).transpose(1, 2)  # [B, H, T, hd]
        k = self.k(x).view(B, T, self.h, self.hd).transpose(1, 2)
        v = self.v(x).view(B, T, self.h, self.hd).transpose(1, 2)
        s = torch.matmul(q, k.transpose(-2, -1)) * self.scale  # [B, H, T, T]
        s = s.masked_fill(self.mask[:T, :T], float("-inf"))
        p = torch.softmax(s, dim=-1)
        a = torch.matmul(p, v).transpose(1, 2).reshape(B, T, d)
        return self.o(a)


class MLP(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))  # approximate='none': erf


class Layer(nn.Module):
    def __init__(self, d, heads, hidden, tokens, mlp_only, eps):
        super().__init__()
        self.mlp_only = mlp_only
        if not mlp_only:
            self.attn_norm = nn.LayerNorm(d, eps=eps)
            self.attn = Attention(d, heads, tokens)
        self.mlp_norm = nn.LayerNorm(d, eps=eps)
        self.mlp = MLP(d, hidden)

    def forward(self, x):
        if not self.mlp_only:
            x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class Net(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.width)
        self.layers = nn.ModuleList(
            Layer(a.width, a.heads, a.ffn_mult * a.width, a.tokens, a.block == "mlp", a.eps)
            for _ in range(a.layers))

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return x


def flops(a):
    """FLOPs of one pass, as bench_forward.c counts them."""
    n, d, hidden = a.batch * a.tokens, a.width, a.ffn_mult * a.width
    per_layer = 2 * (2 * n * d * hidden)  # fc1 and fc2
    if a.block != "mlp":
        per_layer += 4 * (2 * n * d * d)  # q, k, v, o
        hd = d // a.heads
        per_layer += 2 * (a.batch * a.heads * a.tokens * a.tokens * hd)  # causal halves
    return a.layers * per_layer


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--block", choices=["attn-mlp", "mlp"], default="attn-mlp")
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--ffn-mult", type=int, default=4)
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--eps", type=float, default=1e-5)
    peer.add_run_args(p)
    a = p.parse_args()
    if a.width % a.heads:
        p.error(f"--heads {a.heads} does not divide --width {a.width}")

    peer.run_forward(Net, a, flops(a))


if __name__ == "__main__":
    main()
