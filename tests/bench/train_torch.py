#!/usr/bin/env python3
"""The seed's training experiment in PyTorch, as a whole process: the peer of
`varprof train` in make bench (tests/bench/bench_train.c).

The second half of the seed's script (../shared/seeds/000_d3793811bbe08839.txt):
both stacks, pre-norm then post-norm, built with torch.manual_seed(0) (the
seed's Block, nn.Sequential(Embedding(24, 48), 24 Blocks, Linear(48, 24))),
each trained for 301 steps of Adam at lr 1e-3 on torch.randint batches of
16 x 12 from Generator().manual_seed(1), the copy task. It prints the
seed's table and, last, one JSON line: the seconds the two trainings took
(building included, importing torch not), the torch version and its BLAS.

    OMP_NUM_THREADS=1 python3 tests/bench/train_torch.py --threads 1
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_timing import blas_info  # noqa: E402  (the BLAS this process loaded)

V, D, L, B, T, STEPS = 24, 48, 24, 16, 12, 301


class Block(nn.Module):
    def __init__(self, d, pre):
        super().__init__()
        self.pre = pre
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        if self.pre:
            return x + self.ff(self.norm(x))
        return self.norm(x + self.ff(x))


def build(pre):
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(V, D), *[Block(D, pre) for _ in range(L)], nn.Linear(D, V))


def train(pre):
    net = build(pre)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    hist = []
    for step in range(STEPS):
        x = torch.randint(0, V, (B, T), generator=g)
        loss = F.cross_entropy(net(x).reshape(-1, V), x.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            hist.append((step, loss.item()))
    return hist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    for label, pre in (("pre-norm ", True), ("post-norm", False)):
        hist = train(pre)
        print(f"  {label} " + "   ".join(f"step {s:>3}: {l:.4f}" for s, l in hist))
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "torch": torch.__version__, "blas": blas_info()}))


if __name__ == "__main__":
    main()
