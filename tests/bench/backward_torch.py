#!/usr/bin/python3
"""`make bench`, forward plus backward: varprof's network in PyTorch autograd, timed.

The network of forward_torch.py (pre-norm, LayerNorm eps 1e-5, exact GELU,
causal attention with biases, or MLP-only layers with --block mlp; PyTorch's
default init), ended as varprof ends it under --grad: a final LayerNorm
(pre-norm's default; --final-norm no drops it), the head nn.Linear(d, V)
with its bias, and the copy loss, F.cross_entropy(logits.reshape(-1, V),
tokens.reshape(-1)), the seed's task:

    logits = head(final_norm(stack(embed(tokens))));  loss = CE(logits, tokens)

Timed, float32, autograd on, torch.set_num_threads(--threads):
  forward   from the embedding lookup through the loss (building the graph)
  backward  loss.backward(): every parameter's gradient, the embedding's too
then the gradients are dropped (zero_grad(set_to_none=True), not timed).
Each repeat runs enough passes to last about --min-time seconds and keeps the
mean of each half; the result is the repeat with the best total, after an
untimed warm-up (two when a pass is short: the second sizes the repeats).
When the warm-up shows a pass is slow, fewer repeats are run so that the
timed ones take at most about --max-time seconds (at least one).

--linear onednn runs every nn.Linear's three matmuls (y = x W^T + b, dX =
dY W, dW = dY^T X) through oneDNN's inner product
(torch._C._nn.mkldnn_linear on tensors converted with .to_mkldnn(), in a
custom autograd Function; the conversions are timed with it). Informative:
Debian's torch 1.13 does its dense matmuls through the system BLAS, by
default the reference netlib one, a few GFLOP/s; oneDNN is what a tuned
build would get on the projections. Attention's q k^T and p v stay dense.

FLOPs per pass: 3x the forward's matmul FLOPs (each matmul's forward, then
its dX and its dW in the backward), forward_torch.py's count plus the head's
2 n d V: 3 (F + 2 n d V). Norms, GELU, softmax, the loss, biases and the
embedding's scatter are not counted.

Prints one JSON line: ms per pass (total, forward, backward), GFLOP/s of
the total, the loss (a check that both sides run networks of the same
statistics: about ln V at init), torch's version and its BLAS
(torch.__config__.show()'s BLAS_INFO).

Run alone: /usr/bin/python3 tests/bench/backward_torch.py --block mlp
--width 512 --layers 8 --batch 4 --tokens 128 --threads 1
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forward_torch as fwd  # noqa: E402  (the same stack, built the same way)
import peer_timing as peer  # noqa: E402


class OneDNNLinear(torch.autograd.Function):
    """y = x W^T + b with its backward, every matmul through oneDNN's inner product."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).contiguous()
        ctx.save_for_backward(x2, weight)
        ctx.shape = shape
        y = torch._C._nn.mkldnn_linear(x2.to_mkldnn(), weight.to_mkldnn(), bias.to_mkldnn())
        return y.to_dense().reshape(*shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(-1, weight.shape[0]).contiguous()
        dy_m = dy2.to_mkldnn()
        # dX [n, in] = dY [n, out] W [out, in]: a linear of dY with weight W^T [in, out]
        dx = torch._C._nn.mkldnn_linear(dy_m, weight.t().contiguous().to_mkldnn(), None)
        # dW [out, in] = dY^T [out, n] X [n, in]: a linear of dY^T with weight X^T [in, n]
        dw = torch._C._nn.mkldnn_linear(dy2.t().contiguous().to_mkldnn(),
                                        x2.t().contiguous().to_mkldnn(), None)
        return dx.to_dense().reshape(ctx.shape), dw.to_dense(), dy2.sum(0)


class Linear(nn.Linear):
    def forward(self, x):
        return OneDNNLinear.apply(x, self.weight, self.bias)


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.stack = fwd.Net(a)
        self.final_norm = nn.LayerNorm(a.width, eps=a.eps) if a.final_norm == "yes" else None
        self.head = nn.Linear(a.width, a.vocab)

    def forward(self, tokens):
        x = self.stack(tokens)
        if self.final_norm is not None:
            x = self.final_norm(x)
        logits = self.head(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens.reshape(-1))


def to_onednn(module):
    """Every nn.Linear replaced by the oneDNN one, its parameters shared."""
    for name, child in module.named_children():
        if type(child) is nn.Linear:
            lin = Linear(child.in_features, child.out_features)
            lin.weight, lin.bias = child.weight, child.bias
            setattr(module, name, lin)
        else:
            to_onednn(child)
    return module


def flops(a):
    n = a.batch * a.tokens
    return 3 * (fwd.flops(a) + 2 * n * a.width * a.vocab)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--block", choices=["attn-mlp", "mlp"], default="attn-mlp")
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--ffn-mult", type=int, default=4)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--eps", type=float, default=1e-5)
    p.add_argument("--final-norm", choices=["yes", "no"], default="yes")
    peer.add_run_args(p)
    a = p.parse_args()
    if a.width % a.heads:
        p.error(f"--heads {a.heads} does not divide --width {a.width}")

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    net = Model(a).float().train()
    if a.linear == "onednn":
        to_onednn(net)
    tokens = torch.randint(0, a.vocab, (a.batch, a.tokens))

    def one_pass():
        t0 = time.perf_counter()
        loss = net(tokens)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        net.zero_grad(set_to_none=True)
        return t1 - t0, t2 - t1, loss.item()

    f, b, loss = one_pass()  # warm-up, untimed
    warm = f + b
    if warm < 1.0:
        f, b, loss = one_pass()
        warm = f + b
    inner, repeats = peer.repeat_sizes(warm, a)
    best = (math.inf, 0.0, 0.0)
    for _ in range(repeats):
        tf = tb = 0.0
        for _ in range(inner):
            f, b, loss = one_pass()
            tf += f
            tb += b
        if (tf + tb) / inner < best[0]:
            best = ((tf + tb) / inner, tf / inner, tb / inner)

    total = flops(a)
    print(json.dumps({
        "ms": best[0] * 1e3,
        "forward_ms": best[1] * 1e3,
        "backward_ms": best[2] * 1e3,
        "gflops": total / best[0] * 1e-9,
        "flops": total,
        "passes_per_repeat": inner,
        "repeats": repeats,
        "warmup_ms": warm * 1e3,
        "linear": a.linear,
        "threads": torch.get_num_threads(),
        "loss": loss,
        "torch": torch.__version__,
        "blas": peer.blas_info(),
    }))


if __name__ == "__main__":
    main()
