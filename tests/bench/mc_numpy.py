#!/usr/bin/python3
"""NumPy reference for `make bench`: varprof's full Monte Carlo method, pre-norm,
LayerNorm (eps 1e-5), gain 1, embedding variance 1, on one thread.

Per token x_0 ~ N(0, I_d). Each of the K = 2L sub-blocks draws xi ~ N(0, I_d)
fresh and adds o = g * rms(LN(x)) * xi to the stream. The stored per-token
sums per sub-block are the engine's: |x|^2/d, |o|^2/d and |c|^2/d (c = x_0,
untouched by pre-norm). rms(LN(x)) = sqrt(var / (var + eps)) with var the
token's population variance, as src/mc_step.c computes it from the sums.

Vectorised over tokens: arrays of shape (tokens, d), float32 draws, stream
and sums in float64, buffers allocated once. Not part of the build or the
tests; run with Debian's /usr/bin/python3 and python3-numpy.

Prints one line of JSON: best time in seconds over --repeats and the time in
ns per token per sub-block per coordinate, plus the final sub-block's mean
|x|^2/d as a check that the model is the engine's (expected about K + 1).
"""
import os

# single-threaded NumPy, before numpy is imported
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

EPS = 1e-5
GAIN = 1.0


def simulate(tokens, d, sub_blocks, seed, buf):
    """Runs the model once; returns the per-token sums, each (K+1, tokens)."""
    rng = np.random.default_rng(seed)
    x, o, xi = buf["x"], buf["o"], buf["xi"]
    xx = np.empty((sub_blocks + 1, tokens))
    oo = np.zeros((sub_blocks + 1, tokens))
    cc = np.empty((sub_blocks + 1, tokens))

    rng.standard_normal(out=xi, dtype=np.float32)
    x[...] = xi  # x_0, float64
    s_xx = np.einsum("ij,ij->i", x, x)
    s_x1 = x.sum(axis=1)
    xx[0] = s_xx / d
    cc[:] = s_xx / d  # pre-norm: c = x_0 throughout

    for k in range(1, sub_blocks + 1):
        rng.standard_normal(out=xi, dtype=np.float32)
        mean = s_x1 / d
        var = np.maximum(s_xx / d - mean * mean, 0.0)
        a = GAIN * np.sqrt(var / (var + EPS))  # g * rms(LN(x)), per token
        np.multiply(xi, a[:, None], out=o)  # o = a xi, float64
        x += o
        oo[k] = np.einsum("ij,ij->i", o, o) / d
        s_xx = np.einsum("ij,ij->i", x, x)
        s_x1 = x.sum(axis=1)
        xx[k] = s_xx / d
    return xx, oo, cc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if min(args.width, args.tokens, args.layers, args.repeats) < 1:
        ap.error("--width, --tokens, --layers and --repeats must be >= 1")

    d, tokens, sub_blocks = args.width, args.tokens, 2 * args.layers
    buf = {
        "x": np.empty((tokens, d)),
        "o": np.empty((tokens, d)),
        "xi": np.empty((tokens, d), dtype=np.float32),
    }
    best = float("inf")
    result = None
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        result = simulate(tokens, d, sub_blocks, args.seed, buf)
        best = min(best, time.perf_counter() - t0)
    xx = result[0]
    json.dump(
        {
            "impl": "numpy",
            "numpy": np.__version__,
            "width": d,
            "tokens": tokens,
            "layers": args.layers,
            "sub_blocks": sub_blocks,
            "repeats": args.repeats,
            "best_s": best,
            "ns_per_coord": best * 1e9 / (tokens * sub_blocks * d),
            "final_stream_var": float(xx[sub_blocks].mean()),
        },
        sys.stdout,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
