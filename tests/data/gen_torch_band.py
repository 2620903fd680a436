#!/usr/bin/env python3
"""The band PyTorch gives the seed's stack at its default initialisation.

The 24-block MLP-only pre-norm stack of ../shared/seeds/000_d3793811bbe08839.txt
(vocab 24, d = 48, hidden 96, GELU, LayerNorm, batch 2 x 12 tokens), built with
PyTorch's default init under torch.manual_seed(s) for s = 0 .. 19, tokens from
torch.Generator().manual_seed(s + 1000). For each seed it records the
Frobenius norm of the batch's stream after blocks 0, 11 and 23.

varprof's --init torch draws the same distributions from its own generator,
so its norms over 20 seeds must fall in the same band (tests/unit/test_forward.c).

Needs Debian's python3-torch (not a dependency of the build or the tests):

    python3 tests/data/gen_torch_band.py > tests/data/torch_seed_stack_band.csv
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

V, D, T, B, L = 24, 48, 12, 2, 24
BLOCKS = (0, 11, 23)
SEEDS = range(20)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.fc1, self.fc2 = nn.Linear(D, 2 * D), nn.Linear(2 * D, D)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


def norms(seed):
    torch.manual_seed(seed)
    embed = nn.Embedding(V, D)
    blocks = [Block() for _ in range(L)]
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(seed + 1000))
    out = {}
    with torch.no_grad():
        h = embed(tokens)
        for i, blk in enumerate(blocks):
            h = blk(h)
            if i in BLOCKS:
                out[i] = h.norm().item()
    return out


def main():
    w = sys.stdout
    w.write("# PyTorch %s, default init, the seed's pre-norm stack; see gen_torch_band.py\n"
            % torch.__version__)
    w.write("seed,block,stream_norm\n")
    for s in SEEDS:
        for block, value in norms(s).items():
            w.write("%d,%d,%.9g\n" % (s, block, value))


if __name__ == "__main__":
    main()
