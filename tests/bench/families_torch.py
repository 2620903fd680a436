#!/usr/bin/python3
"""`make bench`, two families' blocks: varprof's network in PyTorch, timed.

The blocks tests/bench/bench_families.c runs, written out in plain PyTorch
as Hugging Face's modeling_gpt_neox.py and modeling_bloom.py compute them
(eager attention), MHA, LayerNorm eps --norm-eps (1e-5), every projection
with a bias:

  --family neox (GPTNeoXLayer, use_parallel_residual):
    x = Embedding(V, d)(tokens)
    per layer: x = x + attn(LN1(x)) + mlp(LN2(x))
    attn: query_key_value = Linear(d, 3 d) viewed [B, T, H, 3 hd] (q, k, v
      per head, GPT-NeoX's fused layout); rotary on the first
      r = hd --rotary-pct coordinates of each q and k head (rotate-half over
      those r, angles t 10000^(-2i/r), the tables made once), the rest
      passed through; scores q k^T / sqrt(hd), causal mask, softmax, times
      v; dense = Linear(d, d).
    mlp: dense_4h_to_h(gelu(dense_h_to_4h(h))), GELU erf's (hidden_act
      "gelu"), Linear(d, F) and Linear(F, d).
  --family bloom (BloomBlock):
    x = word_embeddings_layernorm(Embedding(V, d)(tokens))
    per layer: x = x + attn(input_layernorm(x)); x = x + mlp(post_attention_layernorm(x))
    attn: query_key_value = Linear(d, 3 d) viewed [B, T, H, 3, hd];
      scores = baddbmm(alibi, q, k^T, beta 1, alpha 1/sqrt(hd)) with alibi[h,
      s] = slope_h s (build_alibi_tensor: slopes 2^(-8 i / H), H a power of
      two), causal mask, softmax, times v; dense = Linear(d, d).
    mlp: dense_4h_to_h(gelu_tanh(dense_h_to_4h(h))), BLOOM's
      x 0.5 (1 + tanh(0.79788456 x (1 + 0.044715 x^2))).

No final norm, no head: without --grad varprof's fw_run_network applies
neither, so the timed pass ends at the last block's residual add. Weights
are PyTorch's default init (varprof's --init torch: nn.Linear's, LayerNorm
1 and 0, nn.Embedding N(0, 1)).

Timed as arch_torch.py times (its docstring): the forward only, float32,
eval(), torch.no_grad(), torch.set_num_threads(--threads), the best repeat's
mean after a warm-up.

FLOPs per pass (the same count as bench_families.c): 2 n k m per matmul of
n = B T rows (q, k, v, o [d -> d] as one fused and one dense, up [d -> F],
down [F -> d]), plus attention's q k^T and p v at B H T T hd each (half of
2 B H T T hd, for causality). Norms, rotary, ALiBi, GELU, softmax, biases
and the residual adds are not counted.

--linear onednn converts every nn.Linear with torch.utils.mkldnn.to_mkldnn
(informative, as arch_torch.py).

Prints one JSON line, as arch_torch.py. Run alone:
/usr/bin/python3 tests/bench/families_torch.py --family neox --vocab 1024
--width 1024 --heads 16 --ffn-width 4096 --layers 4 --batch 1 --tokens 128
--rotary-pct 0.25 --threads 1
"""
import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn

import peer_timing as peer


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def alibi_slopes(heads):
    """modeling_bloom.build_alibi_tensor's slopes, H a power of two."""
    if heads & (heads - 1):
        raise SystemExit("families_torch.py: --heads must be a power of two for ALiBi here")
    base = torch.tensor(2 ** (-(2 ** -(math.log2(heads) - 3))), dtype=torch.float32)
    return torch.pow(base, torch.arange(1, 1 + heads, dtype=torch.int32))


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        d, self.h = a.width, a.heads
        self.hd = d // a.heads
        self.family = a.family
        self.query_key_value = nn.Linear(d, 3 * d)
        self.dense = nn.Linear(d, d)
        self.scale = 1.0 / math.sqrt(self.hd)
        T = a.tokens
        self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).triu(1),
                             persistent=False)
        if a.family == "neox":  # GPT-NeoX's rotary tables over the first r coordinates
            self.r = int(self.hd * a.rotary_pct)
            inv_freq = 1.0 / 10000.0 ** (torch.arange(0, self.r, 2, dtype=torch.float64) / self.r)
            angles = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
            emb = torch.cat((angles, angles), dim=-1)
            self.register_buffer("cos", emb.cos().float(), persistent=False)
            self.register_buffer("sin", emb.sin().float(), persistent=False)
        else:  # BLOOM's alibi [H, 1, T]: slope times the key's position
            alibi = alibi_slopes(a.heads)[:, None, None] * torch.arange(T, dtype=torch.float32)
            self.register_buffer("alibi", alibi, persistent=False)

    def rotate(self, x):
        rot, rest = x[..., :self.r], x[..., self.r:]
        rot = rot * self.cos + rotate_half(rot) * self.sin
        return torch.cat((rot, rest), dim=-1)

    def forward(self, x):
        B, T, d = x.shape
        fused = self.query_key_value(x)
        if self.family == "neox":
            fused = fused.view(B, T, self.h, 3 * self.hd).transpose(1, 2)  # [B, H, T, 3 hd]
            q, k, v = fused.split(self.hd, dim=-1)
            q, k = self.rotate(q), self.rotate(k)
            s = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        else:
            fused = fused.view(B, T, self.h, 3, self.hd)
            q = fused[..., 0, :].transpose(1, 2).reshape(B * self.h, T, self.hd)
            k = fused[..., 1, :].permute(0, 2, 3, 1).reshape(B * self.h, self.hd, T)
            v = fused[..., 2, :].transpose(1, 2)
            bias = self.alibi.repeat(B, 1, 1)
            s = torch.baddbmm(bias, q, k, beta=1.0, alpha=self.scale).view(B, self.h, T, T)
        s = s.masked_fill(self.mask, float("-inf"))
        p = torch.softmax(s, dim=-1)
        o = torch.matmul(p, v).transpose(1, 2).reshape(B, T, d)
        return self.dense(o)


def bloom_gelu(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class MLP(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(a.width, a.ffn_width)
        self.dense_4h_to_h = nn.Linear(a.ffn_width, a.width)
        self.act = F.gelu if a.family == "neox" else bloom_gelu

    def forward(self, x):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(x)))


class Layer(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.parallel = a.family == "neox"
        self.input_layernorm = nn.LayerNorm(a.width, eps=a.norm_eps)
        self.post_attention_layernorm = nn.LayerNorm(a.width, eps=a.norm_eps)
        self.attention = Attention(a)
        self.mlp = MLP(a)

    def forward(self, x):
        if self.parallel:
            return (x + self.attention(self.input_layernorm(x))
                    + self.mlp(self.post_attention_layernorm(x)))
        x = x + self.attention(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Net(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.width)
        self.embed_norm = (nn.LayerNorm(a.width, eps=a.norm_eps) if a.family == "bloom"
                           else nn.Identity())
        self.layers = nn.ModuleList(Layer(a) for _ in range(a.layers))

    def forward(self, tokens):
        x = self.embed_norm(self.embed(tokens))
        for layer in self.layers:
            x = layer(x)
        return x


def flops(a):
    """FLOPs of one pass, as bench_families.c counts them."""
    n, d, hidden, hd = a.batch * a.tokens, a.width, a.ffn_width, a.width // a.heads
    per_layer = 2 * (2 * n * d * hidden)  # up, down
    per_layer += 4 * (2 * n * d * d)  # q, k, v, o
    per_layer += 2 * (a.batch * a.heads * a.tokens * a.tokens * hd)  # causal halves
    return a.layers * per_layer


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--family", choices=["neox", "bloom"], required=True)
    p.add_argument("--vocab", type=int, default=1024)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--ffn-width", type=int, default=4096)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--rotary-pct", type=float, default=0.25)
    p.add_argument("--norm-eps", type=float, default=1e-5)
    peer.add_run_args(p)
    a = p.parse_args()
    if a.width % a.heads:
        p.error(f"--heads {a.heads} does not divide --width {a.width}")
    if a.family == "neox" and (int(a.width // a.heads * a.rotary_pct) % 2 or a.rotary_pct <= 0):
        p.error("the rotated share of a head must be an even number of coordinates")

    peer.run_forward(Net, a, flops(a))


if __name__ == "__main__":
    main()
