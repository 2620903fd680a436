"""What the PyTorch peers of `make bench` share: their run options, the
repeat sizing, the timed forward and the one JSON line the C side reads
(tests/bench/peer_script.c: "ms", "repeats", "passes_per_repeat", "torch",
"blas" and the figures each bench names).

Timing: one warm-up pass, untimed (oneDNN makes its primitives there), and
a second one when the first took under a second, to size the repeats on;
each repeat runs passes for at least --min-time seconds, and fewer repeats
than --repeats are run when the repeats would take more than about
--max-time seconds (at least one). The figure is the best repeat's mean.
"""
import json
import math
import os
import re
import time

import torch
import torch.utils.mkldnn as torch_mkldnn


def add_run_args(p):
    """The options every peer takes after its network's own."""
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.2,
                   help="seconds each repeat lasts at least")
    p.add_argument("--max-time", type=float, default=30.0,
                   help="seconds the timed repeats may take in all, about")
    p.add_argument("--linear", choices=["dense", "onednn"], default="dense",
                   help="dense: torch's own (its BLAS); onednn: to_mkldnn")
    p.add_argument("--seed", type=int, default=1)


def repeat_sizes(warm, a):
    """(passes per repeat, repeats) for a pass that took warm seconds."""
    inner = max(1, math.ceil(a.min_time / max(warm, 1e-6)))
    repeats = max(1, min(a.repeats, int(a.max_time / (inner * max(warm, 1e-6)))))
    return inner, repeats


def blas_info():
    """torch's BLAS_INFO and, where it is Debian's "generic" (the system
    libblas.so.3, which update-alternatives points at the reference BLAS or
    at OpenBLAS), the library this process actually loaded."""
    m = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    info = m.group(1) if m else "?"
    loaded = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if re.search(r"/lib(open)?blas[^/]*\.so", path):
                loaded.add(os.path.realpath(path))
    return info + (" (" + ", ".join(sorted(loaded)) + ")" if loaded else "")


def time_passes(net, tokens, a):
    """The best repeat's mean of net(tokens): (seconds, passes, repeats, warm, out)."""
    t0 = time.perf_counter()
    out = net(tokens)
    warm = time.perf_counter() - t0
    if warm < 1.0:
        t0 = time.perf_counter()
        out = net(tokens)
        warm = time.perf_counter() - t0
    inner, repeats = repeat_sizes(warm, a)
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            out = net(tokens)
        best = min(best, (time.perf_counter() - t0) / inner)
    return best, inner, repeats, warm, out


def run_forward(net_class, a, flops):
    """Builds net_class(a) (float32, eval(), oneDNN's linears under --linear
    onednn), times its forward under torch.no_grad() on a.batch x a.tokens
    random ids and prints the JSON line; flops is one pass's count."""
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    net = net_class(a).float().eval()
    if a.linear == "onednn":
        net = torch_mkldnn.to_mkldnn(net)
    tokens = torch.randint(0, a.vocab, (a.batch, a.tokens))
    with torch.no_grad():
        best, inner, repeats, warm, out = time_passes(net, tokens, a)
        rms = float(out.double().pow(2).mean().sqrt())
    print(json.dumps({
        "ms": best * 1e3,
        "gflops": flops / best * 1e-9,
        "flops": flops,
        "passes_per_repeat": inner,
        "repeats": repeats,
        "warmup_ms": warm * 1e3,
        "linear": a.linear,
        "threads": torch.get_num_threads(),
        "final_stream_rms": rms,
        "torch": torch.__version__,
        "blas": blas_info(),
    }))
