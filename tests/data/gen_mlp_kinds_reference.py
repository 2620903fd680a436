#!/usr/bin/env python3
"""PyTorch's streams and gradients for each MLP kind of --mlp (issue 15).

What it makes (all in tests/data/, next to this script)
-------------------------------------------------------
One tiny pre-norm network per MLP kind, from fixed weights: vocab 40, d = 32,
2 heads of 16, 2 layers (attention then MLP each), nn.LayerNorm (eps 1e-5)
on each branch's input and before the head (final_norm), Q, K, V, O
projections with biases, causal softmax attention, a head nn.Linear(32, 40).
The MLPs, each linear with a bias:

    gelu        fc2(F.gelu(fc1 h))                         hidden 64
    gelu-tanh   fc2(F.gelu(fc1 h, approximate='tanh'))     hidden 64
    relu        fc2(F.relu(fc1 h))                         hidden 64
    swiglu      down(F.silu(gate h) * up h)                hidden 88
    geglu       down(F.gelu(gate h) * up h)                hidden 88

The gated ones' hidden width 88 is no multiple of d: the file's shape must
set --ffn-width, not --ffn-mult. Weights: torch.manual_seed(20 + the kind's
index), PyTorch's default nn.Embedding and nn.Linear init, then every
LayerNorm's weight redrawn as 1 + 0.1 randn and its bias as 0.1 randn, so
that a norm mapped to the wrong place shows. Tokens: 2 x 7 (an odd length),
torch.Generator().manual_seed(4).

  mlp_kind_<kind>.safetensors   F32, varprof's names (include/varprof/forward.h):
                                 embed.weight, layers.i.{attn_norm,mlp_norm}.*,
                                 layers.i.attn.{q,k,v,o}.*, layers.i.mlp.fc1.*,
                                 .fc2.* or layers.i.mlp.{gate,up,down}.*,
                                 final_norm.*, head.*
  mlp_kind_tokens.csv           2 rows of 7 token ids, no header
  mlp_kinds_expected.csv        case,quantity,key,shape,float32,float64, as
                                 grads_expected.csv (gen_torch_grads.py), with
                                 the loss copy, and besides its quantities
                                 stream_norm (key k = 0..4): the Frobenius norm
                                 of the batch's stream after sub-block k

float64 is the same network (the same float32 values) in double: what varprof
is held to. Run it from the top of the project:

    /usr/bin/python3 tests/data/gen_mlp_kinds_reference.py

torch is needed only to regenerate these files, never to build or test.
"""
import copy
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_torch_reference as ref  # noqa: E402  (the safetensors writer)
import gen_torch_grads as grads  # noqa: E402  (Trace, figures, the losses)

ORIGIN = "PyTorch %s, made by tests/data/gen_mlp_kinds_reference.py" % torch.__version__

V, D, H, L, B, T = 40, 32, 2, 2, 2, 7
HD = D // H
KINDS = ("gelu", "gelu-tanh", "relu", "swiglu", "geglu")
GATED = ("swiglu", "geglu")


def hidden_of(kind):
    return 88 if kind in GATED else 64


def act(kind, a):
    if kind == "gelu" or kind == "geglu":
        return F.gelu(a)
    if kind == "gelu-tanh":
        return F.gelu(a, approximate="tanh")
    if kind == "relu":
        return F.relu(a)
    if kind == "swiglu":
        return F.silu(a)
    raise ValueError(kind)


class Layer(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        m = hidden_of(kind)
        self.attn_norm, self.mlp_norm = nn.LayerNorm(D), nn.LayerNorm(D)
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
        if kind in GATED:
            self.gate, self.up, self.down = nn.Linear(D, m), nn.Linear(D, m), nn.Linear(m, D)
        else:
            self.fc1, self.fc2 = nn.Linear(D, m), nn.Linear(m, D)

    def attn(self, h, trace):
        b, t, _ = h.shape
        q = self.q(h).view(b, t, H, HD).transpose(1, 2)
        k = self.k(h).view(b, t, H, HD).transpose(1, 2)
        v = self.v(h).view(b, t, H, HD).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(HD)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        heads = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, D)
        return trace.branch(heads, self.o(heads))

    def mlp(self, h, trace):
        if self.kind in GATED:
            a = act(self.kind, self.gate(h)) * self.up(h)
            return trace.branch(a, self.down(a))
        a = act(self.kind, self.fc1(h))
        return trace.branch(a, self.fc2(a))

    def named(self, i):
        p = "layers.%d." % i
        out = []
        for name in ("attn_norm", "mlp_norm"):
            n = getattr(self, name)
            out += [(p + name + ".weight", n.weight), (p + name + ".bias", n.bias)]
        for name in ("q", "k", "v", "o"):
            lin = getattr(self, name)
            out += [(p + "attn.%s.weight" % name, lin.weight), (p + "attn.%s.bias" % name, lin.bias)]
        for name in (("gate", "up", "down") if self.kind in GATED else ("fc1", "fc2")):
            lin = getattr(self, name)
            out += [(p + "mlp.%s.weight" % name, lin.weight), (p + "mlp.%s.bias" % name, lin.bias)]
        return out


class Net(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.layers = nn.ModuleList([Layer(kind) for _ in range(L)])
        self.final_norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, V)
        with torch.no_grad():
            norms = [n for ly in self.layers for n in (ly.attn_norm, ly.mlp_norm)]
            for n in norms + [self.final_norm]:
                n.weight.copy_(1 + 0.1 * torch.randn(D))
                n.bias.copy_(0.1 * torch.randn(D))

    def forward(self, tokens, trace):
        x = trace.stream(self.embed(tokens))
        for ly in self.layers:
            x = trace.stream(x + ly.attn(ly.attn_norm(x), trace))
            x = trace.stream(x + ly.mlp(ly.mlp_norm(x), trace))
        return self.head(self.final_norm(x))

    def named(self):
        out = [("embed.weight", self.embed.weight)]
        for i, ly in enumerate(self.layers):
            out += ly.named(i)
        return out + [("final_norm.weight", self.final_norm.weight),
                      ("final_norm.bias", self.final_norm.bias),
                      ("head.weight", self.head.weight), ("head.bias", self.head.bias)]


def run(net, tokens):
    trace = grads.Trace()
    net.zero_grad()
    logits = net(tokens, trace)
    loss = grads.loss_of(logits, tokens, "copy")
    loss.backward()
    rows = grads.figures(net.named(), trace, loss.item())
    rows += [("stream_norm", str(k), "", x.detach().double().norm().item())
             for k, x in enumerate(trace.streams)]
    return rows


def main():
    torch.set_num_threads(1)  # one summation order, whatever the machine
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(4))
    ref.write_tokens(os.path.join(HERE, "mlp_kind_tokens.csv"), tokens)
    cases = []
    for index, kind in enumerate(KINDS):
        torch.manual_seed(20 + index)
        net = Net(kind)
        path = os.path.join(HERE, "mlp_kind_%s.safetensors" % kind)
        named = net.named()
        ref.write_safetensors(path, named)
        back = ref.read_safetensors(path)
        assert list(back) == [n for n, _ in named]
        assert all(torch.equal(back[n], t.detach()) for n, t in named)
        f32 = run(net, tokens)
        f64 = run(copy.deepcopy(net).double(), tokens)
        print("%-10s loss %.6f, stream norm at the top %.6f"
              % (kind, f32[0][3], [v for q, k, _, v in f32 if q == "stream_norm"][-1]))
        cases.append((kind, f32, f64))
    path = os.path.join(HERE, "mlp_kinds_expected.csv")
    grads.write_expected(path, cases)
    # write_expected names its origin after gen_torch_grads.py: say ours
    with open(path) as f:
        lines = f.read().split("\n", 1)
    with open(path, "w") as f:
        f.write("# %s\n%s" % (ORIGIN, lines[1]))


if __name__ == "__main__":
    main()
