#!/usr/bin/python3
"""`make bench`, Llama-style blocks: varprof's network in PyTorch, timed.

The blocks varprof runs with --norm rmsnorm --mlp swiglu --bias no
--positions rope (src/forward/branches.c), pre-norm, written out in plain
PyTorch as Hugging Face's LlamaDecoderLayer computes them (eager attention):

    x = Embedding(V, d)(tokens)                       # [B, T, d]
    per layer:
        x = x + Attention(RMSNorm(x))                 # unless --block mlp
        x = x + down(silu(gate(RMSNorm(x))) * up(RMSNorm(x)))

RMSNorm is x / sqrt(mean(x^2) + eps) * weight, eps --norm-eps (1e-6), weight
1. Attention is causal grouped-query self-attention: q = Linear(d, H hd),
k and v = Linear(d, H_kv hd), o = Linear(H hd, d), none with a bias; heads
as view(B, T, H, hd); rotary positions on q's H heads and k's H_kv heads
with Hugging Face Llama's rotate-half pairing (x cos + rotate_half(x) sin,
angles t theta^(-2i/hd), the tables made once with the module, as varprof
makes them once with its workspace); then repeat_kv (query head h reads kv
head h // (H / H_kv), expand and reshape as transformers does); scores
q k^T / sqrt(hd), masked above the diagonal, softmaxed over the keys, times
v. gate, up and down are Linear(d, F), Linear(d, F), Linear(F, d) without
biases, F = --ffn-width. With --block mlp a layer is the MLP sub-block
alone (and no positions). Weights are PyTorch's default init (varprof's
--init torch). No final norm: varprof's pre-norm model has one
(fw_model_parts), but without --grad fw_run_network never applies it, so
the timed pass ends at the last block's residual add.

Timed: the forward pass only, from the embedding lookup through the last
block, float32, eval() and torch.no_grad(), torch.set_num_threads(--threads).
Each repeat runs the pass enough times to last about --min-time seconds and
keeps the mean; the result is the best repeat, after an untimed warm-up
(two when a pass is short: the second sizes the repeats). When the warm-up
shows a pass is slow, fewer repeats are run so that the timed repeats take
at most about --max-time seconds (at least one repeat).

FLOPs per pass (the same count as tests/bench/bench_arch.c): 2 n k m for
each matmul of n = B T rows, k inputs and m outputs (q, k, v, o, gate, up,
down), plus attention's q k^T and p v at 2 B H T T hd each (H the query
heads) HALVED for causality: B H T T hd each. RMSNorm, RoPE, SiLU and the
gating product, softmax, repeat_kv and the residual adds are not counted.

--linear onednn converts every nn.Linear with torch.utils.mkldnn.to_mkldnn,
as forward_torch.py does (informative: what a tuned BLAS gives PyTorch on the
projections; attention's products stay dense).

Prints one JSON line: ms per pass, GFLOP/s, the final stream's RMS (a check
that both sides run networks of the same statistics), torch's version and
its BLAS (peer_timing.py's blas_info: torch.__config__.show()'s BLAS_INFO
and the BLAS library this process loaded).

Run alone: /usr/bin/python3 tests/bench/arch_torch.py --vocab 1024 --width 1024
--heads 16 --kv-heads 4 --ffn-width 2816 --layers 4 --batch 1 --tokens 256
--positions rope --rope-theta 10000 --threads 1
"""
import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn

import peer_timing as peer


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x, group):
    """[B, H_kv, T, hd] -> [B, H_kv group, T, hd], transformers' repeat_kv."""
    if group == 1:
        return x
    B, kv, T, hd = x.shape
    return x[:, :, None, :, :].expand(B, kv, group, T, hd).reshape(B, kv * group, T, hd)


class Attention(nn.Module):
    def __init__(self, d, heads, kv_heads, max_tokens, rope_theta):
        super().__init__()
        self.h, self.kv = heads, kv_heads
        self.hd = d // heads
        self.q = nn.Linear(d, heads * self.hd, bias=False)
        self.k = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o = nn.Linear(heads * self.hd, d, bias=False)
        self.scale = 1.0 / math.sqrt(self.hd)
        mask = torch.ones(max_tokens, max_tokens, dtype=torch.bool).triu(1)
        self.register_buffer("mask", mask, persistent=False)
        self.rope = rope_theta is not None
        if self.rope:  # Hugging Face's cos/sin tables, [T, hd], made once
            inv_freq = 1.0 / rope_theta ** (torch.arange(0, self.hd, 2, dtype=torch.float64)
                                            / self.hd)
            angles = torch.outer(torch.arange(max_tokens, dtype=torch.float64), inv_freq)
            emb = torch.cat((angles, angles), dim=-1)
            self.register_buffer("cos", emb.cos().float(), persistent=False)
            self.register_buffer("sin", emb.sin().float(), persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.q(x).view(B, T, self.h, self.hd).transpose(1, 2)  # [B, H, T, hd]
        k = self.k(x).view(B, T, self.kv, self.hd).transpose(1, 2)  # [B, H_kv, T, hd]
        v = self.v(x).view(B, T, self.kv, self.hd).transpose(1, 2)
        if self.rope:
            cos, sin = self.cos[:T], self.sin[:T]
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        k = repeat_kv(k, self.h // self.kv)
        v = repeat_kv(v, self.h // self.kv)
        s = torch.matmul(q, k.transpose(-2, -1)) * self.scale  # [B, H, T, T]
        s = s.masked_fill(self.mask[:T, :T], float("-inf"))
        p = torch.softmax(s, dim=-1)
        a = torch.matmul(p, v).transpose(1, 2).reshape(B, T, self.h * self.hd)
        return self.o(a)


class SwiGLU(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Layer(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.mlp_only = a.block == "mlp"
        if not self.mlp_only:
            self.attn_norm = RMSNorm(a.width, a.norm_eps)
            self.attn = Attention(a.width, a.heads, a.kv_heads, a.tokens,
                                  a.rope_theta if a.positions == "rope" else None)
        self.mlp_norm = RMSNorm(a.width, a.norm_eps)
        self.mlp = SwiGLU(a.width, a.ffn_width)

    def forward(self, x):
        if not self.mlp_only:
            x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class Net(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.width)
        self.layers = nn.ModuleList(Layer(a) for _ in range(a.layers))

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return x


def flops(a):
    """FLOPs of one pass, as bench_arch.c counts them."""
    n, d, hidden = a.batch * a.tokens, a.width, a.ffn_width
    per_layer = 3 * (2 * n * d * hidden)  # gate, up, down
    if a.block != "mlp":
        hd = d // a.heads
        per_layer += 2 * (2 * n * d * a.heads * hd)  # q, o
        per_layer += 2 * (2 * n * d * a.kv_heads * hd)  # k, v
        per_layer += 2 * (a.batch * a.heads * a.tokens * a.tokens * hd)  # causal halves
    return a.layers * per_layer


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--block", choices=["attn-mlp", "mlp"], default="attn-mlp")
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=0, help="0: as many as --heads")
    p.add_argument("--ffn-width", type=int, default=2816)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--tokens", type=int, default=256)
    p.add_argument("--positions", choices=["none", "rope"], default="rope")
    p.add_argument("--rope-theta", type=float, default=10000.0)
    p.add_argument("--norm-eps", type=float, default=1e-6)
    peer.add_run_args(p)
    a = p.parse_args()
    if a.kv_heads == 0:
        a.kv_heads = a.heads
    if a.width % a.heads:
        p.error(f"--heads {a.heads} does not divide --width {a.width}")
    if a.heads % a.kv_heads:
        p.error(f"--kv-heads {a.kv_heads} does not divide --heads {a.heads}")
    if a.positions == "rope" and (a.width // a.heads) % 2:
        p.error("rope needs an even head width")

    peer.run_forward(Net, a, flops(a))


if __name__ == "__main__":
    main()
