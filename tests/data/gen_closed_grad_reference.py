#!/usr/bin/env python3
"""Reference values for the closed form's backward half (vp_closed_grad).

What it computes
----------------
The gradient recursion of varprof-maths(7), GRADIENTS, written per placement
from the manual's table and not from the C code (which reads placement
traits), in exact rational arithmetic (fractions.Fraction), at infinite
width. For sub-block k = K..1 with gain g = g_k, v = v_{k-1}, G = G_k:

    placement      G_{k-1}                weight_grad_k^2
    pre-norm       G (1 + g^2 / v)        G
    post-ln        G / v                  G / (1 + g^2)
    sandwich       G (1 + gamma^2 / v)    gamma^2 G / g^2
    output-norm    G (1 + gamma^2 / v)    gamma^2 G / g^2
    deepnorm       G / v                  G / (alpha^2 + b^2),  b = beta^2 g
    parallel       G (1 + 2 g^2 / v)      G   (each of the two branches)
    none           G (1 + g^2)            G v

and at the top G_K = 1 / v_K with a final norm, 1 without. weight_grad_k^2
with g = 0 under an output norm is infinite (written "inf").

The finite width is not here: there the closed form is the Monte Carlo
model's expectation (varprof-maths(7), Finite width), integrals no rational
arithmetic holds, and tests/unit/test_mc_grad.c holds it to the Monte Carlo
itself.
The forward v_k is the maths table's (PLACEMENTS), recomputed here exactly.

Every input is a double (what the C test parses back); its exact value is the
starting Fraction. grad_var is rounded once to the nearest double; weight_grad
is the square root of an exact rational, taken in 60-digit decimal and
rounded to a double. Figures are written with '%.17g' (repr), which
round-trips.

The cases: every placement x layers {1, 3, 32} x gain {0, 0.5, 1, 2} x final
norm {yes, no}; gamma 0.5 and 3 for sandwich and output-norm; v_0 0.25; MLP-only layers for
pre-norm, post-ln and deepnorm; explicit alpha and beta for deepnorm; and
per-sub-block gains drawn uniform in [0, 3] from random.Random(13) for every
placement at 3 layers.

Output
------
One CSV with the header

    case,placement,layers,mlp_only,gain,gamma,alpha,beta,embedding_var,
    final_norm,width,norm,gains,k,stream_var,grad_var,weight_grad

one row per sub-block k = 0..K of each case. gain is empty and gains holds the
K gains joined by ';' (on every row of the case) when the case has
per-sub-block gains. final_norm is yes or no; width is always 0 (infinite)
and norm any, the columns kept for the test's reader. weight_grad is empty at
k = 0.

How to run
----------
From the repository root, with python3 and its standard library only:

    python3 tests/data/gen_closed_grad_reference.py > tests/data/closed_grad_reference.csv

It prints the number of cases and rows to stderr; the number of cases is the
one tests/unit/test_closed_grad.c expects.
"""

import decimal
import random
import sys
from fractions import Fraction as F

decimal.getcontext().prec = 60


def deepnet_defaults(layers):
    """DeepNet's decoder-only alpha = (2M)^(1/4), beta = (8M)^(-1/4), as doubles."""
    a = decimal.Decimal(2 * layers) ** (decimal.Decimal(1) / 4)
    b = decimal.Decimal(8 * layers) ** (decimal.Decimal(-1) / 4)
    return float(a), float(b)


def sub_blocks(placement, layers, mlp_only):
    return layers if placement == "parallel" or mlp_only else 2 * layers


def forward(placement, v0, gains, gamma, alpha, beta, branches):
    """v_0..v_K of the maths table, exactly."""
    v = [v0]
    for g in gains:
        x = v[-1]
        if placement == "post-ln" or placement == "deepnorm":
            v.append(F(1))
        elif placement == "pre-norm":
            v.append(x + g * g)
        elif placement in ("sandwich", "output-norm"):
            v.append(x + gamma * gamma)
        elif placement == "parallel":
            v.append(x + branches * g * g)
        elif placement == "none":
            v.append(x * (1 + g * g))
        else:
            raise ValueError(placement)
    return v


def backward(placement, v, gains, gamma, alpha, beta, branches, final_norm):
    """G_0..G_K and weight_grad_k^2 for k = 1..K (None at k = 0)."""
    K = len(gains)
    G = [None] * (K + 1)
    wg2 = [None] * (K + 1)
    G[K] = 1 / v[K] if final_norm else F(1)
    for k in range(K, 0, -1):
        g, x, top = gains[k - 1], v[k - 1], G[k]
        if placement == "pre-norm":
            G[k - 1] = top * (1 + g * g / x)
            wg2[k] = top
        elif placement == "post-ln":
            G[k - 1] = top / x
            wg2[k] = top / (1 + g * g)
        elif placement == "sandwich":
            G[k - 1] = top * (1 + gamma * gamma / x)
            wg2[k] = None if g == 0 and gamma != 0 else (
                F(0) if gamma == 0 else gamma * gamma * top / (g * g))
        elif placement == "output-norm":
            G[k - 1] = top * (1 + gamma * gamma / x)
            wg2[k] = None if g == 0 and gamma != 0 else (
                F(0) if gamma == 0 else gamma * gamma * top / (g * g))
        elif placement == "deepnorm":
            b = beta * beta * g
            G[k - 1] = top / x
            wg2[k] = top / (alpha * alpha + b * b)
        elif placement == "parallel":
            G[k - 1] = top * (1 + branches * g * g / x)
            wg2[k] = top
        elif placement == "none":
            G[k - 1] = top * (1 + g * g)
            wg2[k] = top * x
        else:
            raise ValueError(placement)
    return G, wg2


def sqrt_double(q):
    d = decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)
    return float(d.sqrt())


def fmt(x):
    return repr(float(x))


HEADER = ("case,placement,layers,mlp_only,gain,gamma,alpha,beta,embedding_var,"
          "final_norm,width,norm,gains,k,stream_var,grad_var,weight_grad")
PLACEMENTS = ["post-ln", "pre-norm", "sandwich", "output-norm", "deepnorm", "parallel", "none"]


def case_rows(name, placement, layers, gain=1.0, gains=None, gamma=1.0, alpha=None, beta=None,
              v0=1.0, final_norm=None, mlp_only=False):
    if alpha is None or beta is None:
        alpha, beta = deepnet_defaults(layers)
    if final_norm is None:
        final_norm = placement in ("pre-norm", "sandwich", "output-norm", "parallel")
    K = sub_blocks(placement, layers, mlp_only)
    gains_d = gains if gains is not None else [gain] * K
    branches = 1 if mlp_only else (2 if placement == "parallel" else 1)
    gq = [F(x) for x in gains_d]
    v = forward(placement, F(v0), gq, F(gamma), F(alpha), F(beta), branches)
    G, wg2 = backward(placement, v, gq, F(gamma), F(alpha), F(beta), branches, final_norm)
    gains_field = ";".join(fmt(x) for x in gains_d) if gains is not None else ""
    gain_field = "" if gains is not None else fmt(gain)
    rows = []
    for k in range(K + 1):
        if k == 0:
            w = ""
        elif wg2[k] is None:
            w = "inf"
        else:
            w = fmt(sqrt_double(wg2[k]))
        rows.append(",".join([
            name, placement, str(layers), "1" if mlp_only else "0", gain_field, fmt(gamma),
            fmt(alpha), fmt(beta), fmt(v0), "yes" if final_norm else "no", "0", "any",
            gains_field, str(k), fmt(v[k]), fmt(G[k]), w]))
    return rows


def cases():
    for placement in PLACEMENTS:
        for layers in (1, 3, 32):
            for gain in (0.0, 0.5, 1.0, 2.0):
                for fn in (True, False):
                    yield (f"grid-{placement}-L{layers}-g{gain:g}-{'fn' if fn else 'nofn'}",
                           dict(placement=placement, layers=layers, gain=gain, final_norm=fn))
        yield (f"v0-{placement}", dict(placement=placement, layers=3, gain=0.5, v0=0.25))
        rng = random.Random(13 + PLACEMENTS.index(placement))
        K = sub_blocks(placement, 3, False)
        yield (f"gains-{placement}",
               dict(placement=placement, layers=3, gains=[rng.uniform(0, 3) for _ in range(K)]))
    for placement in ("sandwich", "output-norm"):
        for gamma in (0.0, 0.5, 3.0):
            yield (f"gamma{gamma:g}-{placement}",
                   dict(placement=placement, layers=3, gain=0.5, gamma=gamma))
    for placement in ("pre-norm", "post-ln", "deepnorm"):
        yield (f"mlp-{placement}", dict(placement=placement, layers=5, gain=1.5, mlp_only=True))
    yield ("deepnorm-a1.5-b0.3",
           dict(placement="deepnorm", layers=3, gain=2.0, alpha=1.5, beta=0.3))


def main():
    out = open(sys.argv[1], "w") if len(sys.argv) > 1 else sys.stdout
    print(HEADER, file=out)
    n_cases = n_rows = 0
    for name, kw in cases():
        rows = case_rows(name, **kw)
        n_cases += 1
        n_rows += len(rows)
        for r in rows:
            print(r, file=out)
    print(f"{n_cases} cases, {n_rows} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
