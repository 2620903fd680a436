#!/usr/bin/env python3
"""Reference values for varprof's closed-form engine (vp_closed_profile).

What it computes
----------------
The idealised variance recursion of the project's maths document
(varprof-maths(7), PLACEMENTS), written from that document and not from the C code, so that the two are independent routes to the
same numbers. For sub-block k = 1..K with gain g_k, v = v_{k-1} and
E = E_{k-1} (the squared embedding component, E_0 = v_0):

    placement               v_k             u_k                E_k
    post-ln                 1               g_k                E / (v (1 + g_k^2))
    pre-norm                v + g_k^2       g_k / sqrt(v)      E
    sandwich, output-norm   v + gamma^2     gamma / sqrt(v)    E
    deepnorm                1               b_k / alpha        alpha^2 E / (v (alpha^2 + b_k^2))
    parallel                v + 2 g_k^2     sqrt(2) g_k/sqrt(v) E
    none                    v (1 + g_k^2)   g_k                E

with b_k = beta^2 g_k, e_k = sqrt(E_k / v_k), e_0 = 1, and u_0 undefined.
K = L sub-blocks for parallel, 2L for every other placement.

Every input is a double (what the C test parses back from this file); the
recursion runs in Python's decimal module at 50 significant digits starting from
the exact value of each input double, and each result is rounded once to the
nearest double and written with '%.17g', which round-trips. The C side thus
starts from bit-identical inputs and only its own rounding separates it from
these figures (the test allows 1e-12 relative).

The cases are a spread, not the full cross product (the file stays well under
2 MB): every placement x layers {1, 2, 3, 12, 32} x gain
{0, 0.25, 0.5, 1, 2, 3.7}, and 100 layers x gain {0.25, 1, 3.7}, at gamma 1,
v_0 1 and DeepNet's default alpha, beta (the "grid-" cases, the only ones
whose names start so; the test checks the library's defaults against their
alpha and beta); then targeted cases for gamma {0.5, 2}, explicit alpha/beta,
v_0 {0.25, 4} and per-sub-block gains drawn uniform in [0, 3] from
random.Random(7). Placements
that ignore an input (gamma for pre-norm, alpha for post-ln, ...) still get
cases varying it, so that the engine is shown to ignore it.

Output
------
One CSV with the header

    case,placement,layers,gain,gamma,alpha,beta,embedding_var,gains,k,
    stream_var,update_ratio,embedding_share

one row per sub-block k = 0..K of each case, cases in order and k ascending.
`gain` is empty when the case has per-sub-block gains; `gains` then holds the
K gains separated by ';' on the case's k = 0 row only (empty elsewhere).
`update_ratio` is empty on k = 0. `case` is a unique name without commas;
a case with explicit alpha and beta says so in its name ("-a1.5-b0.3").

How to run
----------
From the repository root, with python3 and its standard library only:

    python3 tests/data/gen_closed_reference.py > tests/data/closed_reference.csv
    python3 tests/data/gen_closed_reference.py tests/data/closed_reference.csv

It prints the number of cases and rows to stderr; the number of cases is the
one tests/unit/test_closed_reference.c expects (REF_EXPECTED_CASES).
"""

import decimal
import random
import sys
from decimal import Decimal

decimal.getcontext().prec = 50

PLACEMENTS = ("post-ln", "pre-norm", "sandwich", "output-norm", "deepnorm", "parallel", "none")
GRID_LAYERS = (1, 2, 3, 12, 32, 100)
GRID_GAINS = (0.0, 0.25, 0.5, 1.0, 2.0, 3.7)
# 100 layers is most of the file's rows: there, a low, the unit and the top gain.
GRID_GAINS_DEEP = (0.25, 1.0, 3.7)
HEADER = ("case,placement,layers,gain,gamma,alpha,beta,embedding_var,gains,k,"
          "stream_var,update_ratio,embedding_share")


def fmt(x):
    """A double as the C test will parse it back: 17 significant digits."""
    return "%.17g" % x


def label(x):
    """A double as a case name shows it: short, not necessarily exact."""
    return "%g" % x


def exact(x):
    """The exact value of a double, so the recursion starts where C starts."""
    return Decimal(float(x))


def sub_block_count(placement, layers):
    return layers if placement == "parallel" else 2 * layers


def deepnet_alpha(layers):
    """DeepNet's decoder-only alpha = (2M)^(1/4), the nearest double to it."""
    return float(Decimal(2 * layers).sqrt().sqrt())


def deepnet_beta(layers):
    """DeepNet's decoder-only beta = (8M)^(-1/4), the nearest double to it."""
    return float(1 / Decimal(8 * layers).sqrt().sqrt())


def step(placement, v, big_e, g, gamma, alpha, beta):
    """One sub-block of varprof-maths(7), PLACEMENTS: returns (v_k, u_k, E_k)."""
    one = Decimal(1)
    if placement == "post-ln":
        return one, g, big_e / (v * (one + g * g))
    if placement == "pre-norm":
        return v + g * g, g / v.sqrt(), big_e
    if placement in ("sandwich", "output-norm"):
        return v + gamma * gamma, gamma / v.sqrt(), big_e
    if placement == "deepnorm":
        b = beta * beta * g
        return one, b / alpha, alpha * alpha * big_e / (v * (alpha * alpha + b * b))
    if placement == "parallel":
        return v + 2 * g * g, Decimal(2).sqrt() * g / v.sqrt(), big_e
    if placement == "none":
        return v * (one + g * g), g, big_e
    raise ValueError("unknown placement " + placement)


def profile(case):
    """Rows (k, v_k, u_k or None, e_k) for k = 0..K, in Decimal."""
    gamma, alpha, beta = exact(case["gamma"]), exact(case["alpha"]), exact(case["beta"])
    v = big_e = exact(case["embedding_var"])
    rows = [(0, v, None, Decimal(1))]
    for k, g in enumerate(case["gains_k"], start=1):
        v, u, big_e = step(case["placement"], v, big_e, exact(g), gamma, alpha, beta)
        rows.append((k, v, u, (big_e / v).sqrt()))
    return rows


def make_case(name, placement, layers, gain=1.0, gamma=1.0, alpha=None, beta=None,
              embedding_var=1.0, gains=None):
    """One case; alpha and beta default to DeepNet's for its layers."""
    count = sub_block_count(placement, layers)
    if gains is not None and len(gains) != count:
        raise ValueError("%s: %d gains for %d sub-blocks" % (name, len(gains), count))
    return {
        "name": name,
        "placement": placement,
        "layers": layers,
        "gain": None if gains is not None else float(gain),
        "gains": gains,
        "gains_k": gains if gains is not None else [float(gain)] * count,
        "gamma": float(gamma),
        "alpha": deepnet_alpha(layers) if alpha is None else float(alpha),
        "beta": deepnet_beta(layers) if beta is None else float(beta),
        "embedding_var": float(embedding_var),
    }


def grid_cases():
    """Every placement x layers x gain at default gamma, v_0, alpha, beta.

    The test relies on every "grid-" case using DeepNet's default alpha, beta."""
    for p in PLACEMENTS:
        for layers in GRID_LAYERS:
            for g in GRID_GAINS_DEEP if layers == 100 else GRID_GAINS:
                yield make_case("grid-%s-L%d-g%s" % (p, layers, label(g)), p, layers, g)


def gamma_cases():
    """gamma moves sandwich and output-norm only; the rest must ignore it."""
    for p in PLACEMENTS:
        for gamma in (0.5, 2.0):
            for layers, g in ((1, 1.0), (12, 2.0), (32, 0.5)):
                if p not in ("sandwich", "output-norm") and layers != 12:
                    continue
                yield make_case("gamma%s-%s-L%d-g%s" % (label(gamma), p, layers, label(g)),
                                p, layers, g, gamma=gamma)


def alpha_beta_cases():
    """Explicit alpha and beta: deepnorm across layers and gains, others once."""
    pairs = ((1.5, 0.3), (1.0, 1.0), (3.7, 0.0), (0.5, 2.0))
    for alpha, beta in pairs:
        for layers in (1, 12, 100):
            for g in (0.5, 1.0, 3.7):
                name = "ab-deepnorm-L%d-g%s-a%s-b%s" % (layers, label(g), label(alpha),
                                                         label(beta))
                yield make_case(name, "deepnorm", layers, g, alpha=alpha, beta=beta)
    for p in PLACEMENTS:
        if p != "deepnorm":
            yield make_case("ab-%s-L12-g2-a1.5-b0.3" % p, p, 12, 2.0, alpha=1.5, beta=0.3)


def embedding_var_cases():
    """v_0 other than 1, for every placement."""
    for v0 in (0.25, 4.0):
        for p in PLACEMENTS:
            for layers, g in ((3, 0.5), (32, 2.0)):
                yield make_case("v0=%s-%s-L%d-g%s" % (label(v0), p, layers, label(g)),
                                p, layers, g, embedding_var=v0)
        yield make_case("v0=%s-deepnorm-L12-g1-a1.5-b0.3" % label(v0), "deepnorm", 12, 1.0,
                        alpha=1.5, beta=0.3, embedding_var=v0)


def per_sub_block_cases():
    """Gains per sub-block, uniform in [0, 3] from one seeded stream."""
    rng = random.Random(7)

    def draw(placement, layers):
        return [rng.uniform(0.0, 3.0) for _ in range(sub_block_count(placement, layers))]

    for p in PLACEMENTS:
        for layers in (2, 12, 32):
            yield make_case("gains-%s-L%d" % (p, layers), p, layers,
                            gains=draw(p, layers))
    for p in PLACEMENTS:
        yield make_case("gains-%s-L12-gamma2-v0=4-a1.5-b0.3" % p, p, 12, gamma=2.0, alpha=1.5,
                        beta=0.3, embedding_var=4.0, gains=draw(p, 12))


def all_cases():
    for source in (grid_cases, gamma_cases, alpha_beta_cases, embedding_var_cases,
                   per_sub_block_cases):
        yield from source()


def case_lines(case):
    """The CSV lines of one case."""
    inputs_head = "%s,%s,%d,%s,%s,%s,%s,%s" % (
        case["name"], case["placement"], case["layers"],
        "" if case["gain"] is None else fmt(case["gain"]),
        fmt(case["gamma"]), fmt(case["alpha"]), fmt(case["beta"]), fmt(case["embedding_var"]))
    gains_field = ";".join(fmt(g) for g in case["gains"]) if case["gains"] is not None else ""
    for k, v, u, e in profile(case):
        yield "%s,%s,%d,%s,%s,%s" % (
            inputs_head, gains_field if k == 0 else "", k, fmt(float(v)),
            "" if u is None else fmt(float(u)), fmt(float(e)))


def write(out):
    names = set()
    n_cases = n_rows = 0
    out.write(HEADER + "\n")
    for case in all_cases():
        if case["name"] in names or "," in case["name"]:
            raise ValueError("case name not unique or has a comma: " + case["name"])
        names.add(case["name"])
        n_cases += 1
        for line in case_lines(case):
            out.write(line + "\n")
            n_rows += 1
    sys.stderr.write("closed reference: %d cases, %d rows\n" % (n_cases, n_rows))


def main(argv):
    if len(argv) > 2:
        sys.stderr.write("usage: %s [OUTPUT.csv]\n" % argv[0])
        return 2
    if len(argv) == 2:
        with open(argv[1], "w", newline="") as out:
            write(out)
    else:
        write(sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
