#!/usr/bin/env python3
"""PyTorch's training trajectories of the seed's experiment, for `varprof train`
(issue 14), step by step.

What it reads and makes (tests/data/, next to this script)
-----------------------------------------------------------
The initial weights are seed_grads_pre_norm.safetensors (made by
gen_torch_grads.py): the seed's build(), torch.manual_seed(0), its
nn.Sequential(Embedding(24, 48), 24 Blocks, Linear(48, 24)). Both placements
draw the same values (the script asserts it), so one file serves both.

  seed_train_tokens.csv   the seed's train() token stream: 301 steps of
                          torch.randint(0, 24, (16, 12), generator) with
                          generator = torch.Generator().manual_seed(1);
                          301 x 16 rows of 12 ids, step-major, no header
                          (varprof train --token-stream)
  train_expected.csv      case,step,lr,loss,grad_norm for every step of
                          every case below; grad_norm is the global L2 norm
                          of all parameters' gradients before the update

Cases, each for pre-norm and post-ln (the seed's Block, LayerNorm, no final
norm, copy task, torch.optim.Adam(betas (0.9, 0.999), eps 1e-8)):

  seed      lr 1e-3, no warm-up: the seed's own run
  warmup    lr 1e-3, LambdaLR(lambda t: min(1, (t + 1) / 100)), stepped
            after each optimiser step: lr x min(1, (t + 1) / 100) at step t
  lr3e-3    lr 3e-3, no warm-up

The script asserts the seed's printed table: losses at steps 0, 100, 200,
300 of 3.5975 0.0005 0.0003 0.0002 (pre) and 3.4074 0.0495 0.0175 0.0091
(post), to four decimals. Run it from the top of the project, on one thread:

    /usr/bin/python3 tests/data/gen_train_reference.py

torch is needed only to regenerate these files, not to build varprof or run
its tests. The PyTorch version and its BLAS are the leading '# ...' lines of
train_expected.csv.
"""
import os
import re
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_torch_reference as ref  # noqa: E402  (the seed's Block and the writers)

STEPS, BATCH = 301, 16
SEED_TABLE = {"pre_norm": (3.5975, 0.0005, 0.0003, 0.0002),
              "post_ln": (3.4074, 0.0495, 0.0175, 0.0091)}
CASES = (("seed", 1e-3, 0), ("warmup", 1e-3, 100), ("lr3e-3", 3e-3, 0))


def seed_net(pre):
    """The seed's network, its weights checked against the committed file."""
    net = ref.seed_build(pre)
    named = ref.seed_tensors(net) + [("head.weight", net[-1].weight),
                                     ("head.bias", net[-1].bias)]
    stored = ref.read_safetensors(os.path.join(HERE, "seed_grads_pre_norm.safetensors"))
    assert list(stored) == [n for n, _ in named]
    for name, t in named:
        assert torch.equal(stored[name], t.detach()), name
    return net


def token_stream():
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, ref.SV, (BATCH, ref.ST), generator=g) for _ in range(STEPS)]


def train(pre, lr, warmup, tokens):
    """The seed's train(), with the warm-up case's scheduler; one row per step."""
    net = seed_net(pre)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = (torch.optim.lr_scheduler.LambdaLR(opt, lambda t: min(1.0, (t + 1) / warmup))
             if warmup else None)
    rows = []
    for step, x in enumerate(tokens):
        step_lr = opt.param_groups[0]["lr"]
        loss = F.cross_entropy(net(x).reshape(-1, ref.SV), x.reshape(-1))
        opt.zero_grad()
        loss.backward()
        norm = sum(p.grad.double().pow(2).sum() for p in net.parameters()).sqrt().item()
        opt.step()
        if sched:
            sched.step()
        rows.append((step, step_lr, loss.item(), norm))
    return rows


def main():
    torch.set_num_threads(1)
    tokens = token_stream()
    ref.write_tokens(os.path.join(HERE, "seed_train_tokens.csv"), torch.cat(tokens))
    out = []
    for case, lr, warmup in CASES:
        for placement, pre in (("pre_norm", True), ("post_ln", False)):
            rows = train(pre, lr, warmup, tokens)
            table = [rows[s][2] for s in (0, 100, 200, 300)]
            print("%-7s %-8s %s" % (case, placement,
                                    "   ".join("step %3d: %.4f" % (s, l)
                                               for s, l in zip((0, 100, 200, 300), table))))
            if case == "seed":
                assert tuple(round(v, 4) for v in table) == SEED_TABLE[placement], table
            out += [("%s_%s" % (case, placement),) + r for r in rows]
    blas = re.findall(r"BLAS_INFO=[^,]*", torch.__config__.show())
    with open(os.path.join(HERE, "train_expected.csv"), "w") as f:
        f.write("# PyTorch %s (%s), made by tests/data/gen_train_reference.py\n"
                % (torch.__version__, blas[0] if blas else "BLAS unknown"))
        f.write("case,step,lr,loss,grad_norm\n")
        for case, step, lr, loss, norm in out:
            f.write("%s,%d,%.17g,%.9g,%.9g\n" % (case, step, lr, loss, norm))


if __name__ == "__main__":
    main()
