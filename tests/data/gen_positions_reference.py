#!/usr/bin/env python3
"""PyTorch's figures for varprof's --positions learned and rope (issue 15).

Four tiny pre-norm networks, each with its own independent PyTorch code
here (nothing of varprof's), on one batch of 2 sequences of 13 tokens (an
odd length; positions_tokens.csv, torch.Generator().manual_seed(7)):

  case         width  heads  positions                      QK-norm
  learned_d32     32      4  learned, n_ctx 16 > 13 tokens   no
  learned_d64     64      4  learned, n_ctx 16               no
  rope_d32        32      4  rope, theta 10000               yes (q_norm, then rope)
  rope_d64        64      4  rope, theta 500000              no  (Llama's order)

Each: vocab 50, 2 layers of pre-norm attention then MLP (x = x + attn(N(x));
x = x + mlp(N(x))), RMSNorm eps 1e-5 with weights 1 + 0.1 randn, causal
softmax attention with biases, an MLP of 2 d with exact GELU, a final
RMSNorm and a head nn.Linear(d, 50); the copy loss, mean cross-entropy of
the logits at t against token t. torch.manual_seed(11 + case index), then
the modules in the order built below.

  learned: x_0 = wte[token] + wpe[t], t = 0 .. T-1 within each sequence
           (GPT-2's wpe; pos_embed.weight, N(0, 1) as nn.Embedding).
  rope:    after the q and k projections (and QK-norm, where there is one),
           every head's q and k rotated by Hugging Face Llama's rotate-half:
           for i < hd/2, (x_i, x_{i+hd/2}) by angle t theta^(-2i/hd):
             x_i'        = x_i cos - x_{i+hd/2} sin
             x_{i+hd/2}' = x_{i+hd/2} cos + x_i sin
           written below as x cos + rotate_half(x) sin, with the angles in
           float64 and cos, sin rounded to float32 (varprof's table).

Files, in tests/data/ next to this script:

  positions_<case>.safetensors   F32, varprof's names (include/varprof/forward.h)
  positions_tokens.csv           2 rows of 13 token ids, no header
  positions_expected.csv         case,quantity,key,shape,float32,float64

quantity: stream_norm (key k = 0..K): the Frobenius norm of the batch's
stream after sub-block k (x_0 the embedding's output); loss; frobenius and
rms (key the tensor's name, shape "16x32"): dL/dW of every tensor, as
--grads-out writes them; grad_var (key k): the mean square of dL/dx_k;
weight_grad (key k = 1..K): RMS(dL/do_k) RMS(h_k) of each branch's last
projection o_k = A h_k. float32: PyTorch in float32 on one thread;
float64: the same float32 weights in float64, what varprof is held to.

Run it from the top of the project (torch is never a build dependency):

    /usr/bin/python3 tests/data/gen_positions_reference.py
"""
import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_torch_reference as ref  # noqa: E402  (its safetensors writer and reader only)
from reference_files import Trace  # noqa: E402

ORIGIN = "PyTorch %s, made by tests/data/gen_positions_reference.py" % torch.__version__
V, B, T, N_CTX, LAYERS, HEADS, FFN = 50, 2, 13, 16, 2, 4, 2
EPS = 1e-5
CASES = [  # name, width, positions, theta, qk_norm
    ("learned_d32", 32, "learned", None, False),
    ("learned_d64", 64, "learned", None, False),
    ("rope_d32", 32, "rope", 10000.0, True),
    ("rope_d64", 64, "rope", 500000.0, False),
]


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


class Layer(nn.Module):
    def __init__(self, d, qk_norm):
        super().__init__()
        hd = d // HEADS
        self.attn_norm, self.mlp_norm = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.q_norm = RMSNorm(hd) if qk_norm else None
        self.k_norm = RMSNorm(hd) if qk_norm else None
        self.fc1, self.fc2 = nn.Linear(d, FFN * d), nn.Linear(FFN * d, d)


class Net(nn.Module):
    def __init__(self, d, positions, theta, qk_norm):
        super().__init__()
        self.d, self.positions, self.theta, self.qk_norm = d, positions, theta, qk_norm
        self.embed = nn.Embedding(V, d)
        self.pos_embed = nn.Embedding(N_CTX, d) if positions == "learned" else None
        self.layers = nn.ModuleList(Layer(d, qk_norm) for _ in range(LAYERS))
        self.final_norm = RMSNorm(d)
        self.head = nn.Linear(d, V)

    def named(self):
        """varprof's names, in its order."""
        out = [("embed.weight", self.embed.weight)]
        if self.pos_embed is not None:
            out.append(("pos_embed.weight", self.pos_embed.weight))
        for i, ly in enumerate(self.layers):
            p = "layers.%d." % i
            out += [(p + "attn_norm.weight", ly.attn_norm.weight),
                    (p + "mlp_norm.weight", ly.mlp_norm.weight)]
            for n in "qkvo":
                lin = getattr(ly, n)
                out += [(p + "attn.%s.weight" % n, lin.weight), (p + "attn.%s.bias" % n, lin.bias)]
            if self.qk_norm:
                out += [(p + "attn.q_norm.weight", ly.q_norm.weight),
                        (p + "attn.k_norm.weight", ly.k_norm.weight)]
            for n in ("fc1", "fc2"):
                lin = getattr(ly, n)
                out += [(p + "mlp.%s.weight" % n, lin.weight), (p + "mlp.%s.bias" % n, lin.bias)]
        out += [("final_norm.weight", self.final_norm.weight),
                ("head.weight", self.head.weight), ("head.bias", self.head.bias)]
        return out


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def rope_tables(hd, theta, dtype):
    """cos, sin [T, hd]: angles in float64, rounded to float32 as varprof's table."""
    i = torch.arange(hd // 2, dtype=torch.float64)
    freq = theta ** (-2.0 * i / hd)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * freq[None, :]
    cos = torch.cat([angle.cos(), angle.cos()], dim=-1).float().to(dtype)
    sin = torch.cat([angle.sin(), angle.sin()], dim=-1).float().to(dtype)
    return cos, sin


def apply_rope(x, cos, sin):
    # x: (B, H, T, hd)
    return x * cos + rotate_half(x) * sin


def attention(net, ly, h, trace):
    hd = net.d // HEADS
    q = ly.q(h).view(B, T, HEADS, hd)
    k = ly.k(h).view(B, T, HEADS, hd)
    if net.qk_norm:  # OLMo 2's order: q_norm, then the rotation
        q, k = ly.q_norm(q), ly.k_norm(k)
    q, k = q.transpose(1, 2), k.transpose(1, 2)
    v = ly.v(h).view(B, T, HEADS, hd).transpose(1, 2)
    if net.positions == "rope":
        cos, sin = rope_tables(hd, net.theta, q.dtype)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    scores = q @ k.transpose(-2, -1) / (hd ** 0.5)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    heads = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, net.d)
    return trace.branch(heads, ly.o(heads))


def forward(net, tokens, trace):
    x = net.embed(tokens)
    if net.pos_embed is not None:
        x = x + net.pos_embed(torch.arange(T))[None, :, :]
    x = trace.stream(x)
    for ly in net.layers:
        x = trace.stream(x + attention(net, ly, ly.attn_norm(x), trace))
        a = F.gelu(ly.fc1(ly.mlp_norm(x)))
        x = trace.stream(x + trace.branch(a, ly.fc2(a)))
    return net.head(net.final_norm(x))


def rms(t):
    return t.detach().double().pow(2).mean().sqrt().item()


def figures(net, tokens):
    for _, p in net.named():
        p.grad = None
    trace = Trace()
    logits = forward(net, tokens, trace)
    loss = F.cross_entropy(logits.reshape(-1, V), tokens.reshape(-1))
    loss.backward()
    rows = [("stream_norm", str(k), "", x.detach().double().norm().item())
            for k, x in enumerate(trace.streams)]
    rows.append(("loss", "", "", loss.item()))
    for name, p in net.named():
        g = p.grad.detach().double()
        shape = "x".join(str(s) for s in p.shape)
        rows.append(("frobenius", name, shape, g.norm().item()))
        rows.append(("rms", name, shape, g.pow(2).mean().sqrt().item()))
    for k, x in enumerate(trace.streams):
        rows.append(("grad_var", str(k), "", x.grad.detach().double().pow(2).mean().item()))
    for k, (h, o) in enumerate(trace.branches, start=1):
        rows.append(("weight_grad", str(k), "", rms(o.grad) * rms(h)))
    return rows


def check_rope_convention():
    """rotate_half against the pairs written out, and not the interleaved ones."""
    x = torch.randn(1, 1, T, 8, dtype=torch.float64)
    cos, sin = rope_tables(8, 10000.0, torch.float64)
    y = apply_rope(x, cos, sin)
    for t in range(T):
        for i in range(4):
            c, s = cos[t, i], sin[t, i]
            a, b = x[0, 0, t, i], x[0, 0, t, i + 4]
            assert abs(y[0, 0, t, i] - (a * c - b * s)) < 1e-12
            assert abs(y[0, 0, t, i + 4] - (b * c + a * s)) < 1e-12
    inter = x.clone()
    for t in range(T):
        for i in range(4):
            c, s = cos[t, i], sin[t, i]
            a, b = x[0, 0, t, 2 * i], x[0, 0, t, 2 * i + 1]
            inter[0, 0, t, 2 * i], inter[0, 0, t, 2 * i + 1] = a * c - b * s, b * c + a * s
    print("rope: rotate-half and interleaved differ by %.3g at most (same weights)"
          % (y - inter).abs().max().item())


def main():
    torch.set_num_threads(1)
    check_rope_convention()
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(7))
    with open(os.path.join(HERE, "positions_tokens.csv"), "w") as f:
        for row in tokens.tolist():
            f.write(",".join(str(t) for t in row) + "\n")
    out = []
    for index, (case, d, positions, theta, qk_norm) in enumerate(CASES):
        torch.manual_seed(11 + index)
        net = Net(d, positions, theta, qk_norm)
        named = [(n, p) for n, p in net.named()]
        path = os.path.join(HERE, "positions_%s.safetensors" % case)
        ref.write_safetensors(path, named)
        back = ref.read_safetensors(path)
        assert list(back) == [n for n, _ in named]
        assert all(torch.equal(back[n], p.detach()) for n, p in named)
        f32 = figures(net, tokens)
        f64 = figures(copy.deepcopy(net).double(), tokens)
        print("%-12s loss %.6f, stream norm at the top %.6f"
              % (case, f32[2 * LAYERS + 1][3], f32[2 * LAYERS][3]))
        out.append((case, f32, f64))
    worst = 0.0
    with open(os.path.join(HERE, "positions_expected.csv"), "w") as f:
        f.write("# %s\n" % ORIGIN)
        f.write("case,quantity,key,shape,float32,float64\n")
        for case, f32, f64 in out:
            for (q, k, s, a), (q2, k2, s2, b) in zip(f32, f64):
                assert (q, k, s) == (q2, k2, s2)
                f.write("%s,%s,%s,%s,%.9g,%.17g\n" % (case, q, k, s, a, b))
                if b != 0:
                    worst = max(worst, abs(a - b) / abs(b))
    print("float32 against float64: %.2e relative at worst" % worst)


if __name__ == "__main__":
    main()
