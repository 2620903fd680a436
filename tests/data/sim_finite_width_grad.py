#!/usr/bin/env python3
"""A direct simulation of the backward half at finite width, to judge the
finite-width factor an earlier vp_closed_grad applied (each norm Jacobian
keeping 1 - p/d of a gradient's mean square), which it contradicts; the
closed form now derives the expectation itself (varprof-maths(7), Finite
width) and tests/unit/test_mc_grad.c holds the Monte Carlo to it.

The idealised model taken literally, per token: the embedding N(0, I_d); each
sub-block's branch a fresh d x d Gaussian matrix A of variance g^2/d (g = 1);
real RMSNorm or LayerNorm (no eps, unit scale); the loss's gradient at the
head's input isotropic N(0, I_d); backpropagation by hand through the same A.
It prints the mean over tokens of (dL/dx_k)^2 at the embedding and the top
beside the closed form's two answers (infinite width, and with the factor).
Not a build dependency and not a test: a check whose figures varprof-maths(7)
quotes. Run with numpy:

    /usr/bin/python3 tests/data/sim_finite_width_grad.py
"""
import numpy as np

rng = np.random.default_rng(1)


def norm_forward(z, p):
    c = z - z.mean() if p == 2 else z
    r = np.sqrt((c * c).mean())
    return c / r, c, r


def norm_backward(c, r, gy, p):
    d = c.size
    zh = c / r
    g = (gy - zh * (zh @ gy) / d) / r
    return g - g.mean() if p == 2 else g


def run(placement, p, d, K, tokens, final):
    G = np.zeros(K + 1)
    for _ in range(tokens):
        x = rng.standard_normal(d)
        As, cache = [], []
        for _k in range(K):
            A = rng.standard_normal((d, d)) / np.sqrt(d)
            As.append(A)
            if placement == "post-ln":
                x, c, r = norm_forward(x + A @ x, p)
            else:
                h, c, r = norm_forward(x, p)
                x = x + A @ h
            cache.append((c, r))
        g = rng.standard_normal(d)
        if final:
            _, c, r = norm_forward(x, p)
            g = norm_backward(c, r, g, p)
        G[K] += (g * g).mean()
        for k in range(K - 1, -1, -1):
            c, r = cache[k]
            if placement == "post-ln":
                gy = norm_backward(c, r, g, p)
                g = gy + As[k].T @ gy
            else:
                g = g + norm_backward(c, r, As[k].T @ g, p)
            G[k] += (g * g).mean()
    return G / tokens


def closed(placement, p, d, K, final):
    keep = 1.0 - p / d
    v = [1.0 + k for k in range(K + 1)] if placement == "pre-norm" else [1.0] * (K + 1)
    G = [0.0] * (K + 1)
    G[K] = keep / v[K] if final else 1.0
    for k in range(K, 0, -1):
        if placement == "post-ln":
            G[k - 1] = keep * G[k] / v[k - 1]
        else:
            G[k - 1] = G[k] * (1 + keep / v[k - 1])
    return G


def main():
    d, K, tokens = 64, 16, 2000
    for placement, final in (("post-ln", False), ("pre-norm", True)):
        for p, name in ((1, "rmsnorm"), (2, "layernorm")):
            G = run(placement, p, d, K, tokens, final)
            c = closed(placement, p, d, K, final)
            inf = closed(placement, 0, d, K, final)
            print(f"{placement} {name} d={d} K={K} {tokens} tokens: G_0/G_K simulated "
                  f"{G[0] / G[K]:.4f}, with the factor {c[0] / c[K]:.4f}, infinite width "
                  f"{inf[0] / inf[K]:.4f}; G_K simulated {G[K]:.5f}, with the factor "
                  f"{c[K]:.5f}, infinite width {inf[K]:.5f}")


if __name__ == "__main__":
    main()
