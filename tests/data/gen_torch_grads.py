#!/usr/bin/env python3
"""PyTorch's exact gradients at initialisation, for varprof's --grad (issue 13).

What it makes (all in tests/data/, next to this script; the files of
gen_torch_reference.py are read, never rewritten)
------------------------------------------------------------------------------
1. The seed's stacks WITH the seed's own head, exactly as the seed's build():
   torch.manual_seed(0), then nn.Sequential(Embedding(24, 48), 24 Blocks,
   Linear(48, 24)), pre-norm and post-ln (the Block of gen_torch_reference.py,
   LayerNorm, no final norm), on the first batch of the seed's train():
   torch.randint(0, 24, (16, 12), generator=torch.Generator().manual_seed(1)),
   with the seed's copy loss
   F.cross_entropy(net(x).reshape(-1, V), x.reshape(-1)).

     seed_grads_pre_norm.safetensors, seed_grads_post_ln.safetensors
         F32, every tensor of seed_stack_*.safetensors (the same values) plus
         head.weight [24, 48] and head.bias [24]
     seed_grads_tokens.csv   16 rows of 12 token ids, no header (--token-ids)

   The script asserts the seed's printed step-0 losses, 3.5975 (pre) and
   3.4074 (post), and ||dL/dW|| of fc2 at layers 0, 11, 23: pre 0.61352,
   0.47737, 0.37269; post 0.45142, 0.40969, 0.33580 (to the digits given).

2. The attention stack of gen_torch_reference.py (vocab 50, d = 64, 4 heads
   of 16, 4 layers, MLP 4d, RMSNorm eps 1e-5 with weights, QK-norm, causal
   softmax attention, biases, exact GELU; the same draws, torch.manual_seed(2)
   and its norm-weight redraws) with a head and, for pre-norm, a final
   RMSNorm: after attn_build(), torch.manual_seed(5), head = nn.Linear(64, 50)
   (PyTorch's default init), then final_norm.weight = 1 + 0.1 * randn(64).
   Two placements:

     pre-norm   x = x + attn(attn_norm(x)); x = x + mlp(mlp_norm(x));
                logits = head(final_norm(x_K))
     post-ln    x = attn_norm(x + attn(x)); x = mlp_norm(x + mlp(x));
                logits = head(x_K)            (no final norm)

     attn_grads_pre_norm.safetensors   attn_pre_norm's tensors + final_norm.weight, head.*
     attn_grads_post_ln.safetensors    attn_pre_norm's tensors + head.*
   on the tokens of attn_tokens.csv (2 x 16, torch.Generator().manual_seed(3),
   checked to be the file's), each with two losses:
     copy   mean cross-entropy of the logits at t against token t
     next   mean cross-entropy of the logits at t against token t + 1,
            t = 0 .. T-2 (B (T-1) terms)

3. grads_expected.csv, the figures of every case above:

     case,quantity,key,shape,float32,float64

   case        seed_pre_norm_copy, seed_post_ln_copy, attn_pre_norm_copy,
               attn_pre_norm_next, attn_post_ln_copy, attn_post_ln_next
   quantity    loss (key and shape empty);
               frobenius, rms (key the tensor's name, shape "48x96"): the
                 Frobenius norm and RMS of dL/dW for every named tensor,
                 as --grads-out writes them;
               grad_var (key k = 0..K): mean over tokens and coordinates of
                 (dL/dx_k)^2, x_k the stream after sub-block k (x_0 the
                 embedding's output; with a final norm, x_K is before it);
               weight_grad (key k = 1..K): RMS(dL/do_k) RMS(h_k), o_k the
                 output of fc2 or of the attention's output projection
                 (before any output norm), h_k its input; RMS over the batch's
                 tokens and the coordinates.
   float32     PyTorch in float32 on one thread, as the files hold the weights
   float64     the same network (the same float32 values, exactly) in float64:
               the exact gradient to ~1e-15, what varprof is held to

   The float32 column minus the float64 one is how far float32 rounding
   moves each figure; the script prints the worst relative move per quantity.

Sub-blocks are numbered as varprof numbers them: the seed's block i is
sub-block i + 1; in the attention stack, layer i's attention is 2i + 1 and
its MLP 2i + 2.

Run it from the top of the project:

    /usr/bin/python3 tests/data/gen_torch_grads.py

torch is needed only to regenerate these files, not to build varprof or run
its tests. The PyTorch version is the leading '# ...' line of
grads_expected.csv.
"""
import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_torch_reference as ref  # noqa: E402  (its writer, builders and naming)
from reference_files import Trace  # noqa: E402

ORIGIN = "PyTorch %s, made by tests/data/gen_torch_grads.py" % torch.__version__


# ---- what is measured on one network ----

def cross_entropy(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def loss_of(logits, tokens, loss):
    if loss == "copy":
        return cross_entropy(logits, tokens)
    if loss == "next":
        return cross_entropy(logits[:, :-1], tokens[:, 1:])
    raise ValueError(loss)


def rms(t):
    return t.detach().double().pow(2).mean().sqrt().item()


def figures(named, trace, loss_value):
    """The figures of one backward pass, as (quantity, key, shape, value) rows."""
    rows = [("loss", "", "", loss_value)]
    for name, p in named:
        g = p.grad.detach().double()
        shape = "x".join(str(s) for s in p.shape)
        rows.append(("frobenius", name, shape, g.norm().item()))
        rows.append(("rms", name, shape, g.pow(2).mean().sqrt().item()))
    for k, x in enumerate(trace.streams):
        rows.append(("grad_var", str(k), "", x.grad.detach().double().pow(2).mean().item()))
    for k, (h, o) in enumerate(trace.branches, start=1):
        rows.append(("weight_grad", str(k), "", rms(o.grad) * rms(h)))
    return rows


# ---- the seed's stacks ----

def seed_forward(net, tokens, trace):
    x = trace.stream(net[0](tokens))
    for blk in net[1:-1]:
        if blk.pre:
            h = F.gelu(blk.fc1(blk.norm(x)))
            x = trace.stream(x + trace.branch(h, blk.fc2(h)))
        else:
            h = F.gelu(blk.fc1(x))
            x = trace.stream(blk.norm(x + trace.branch(h, blk.fc2(h))))
    return net[-1](x)


def seed_named(net):
    head = net[-1]
    return ref.seed_tensors(net) + [("head.weight", head.weight), ("head.bias", head.bias)]


def run_seed(net, tokens):
    trace = Trace()
    net.zero_grad()
    logits = seed_forward(net, tokens, trace)
    with torch.no_grad():  # the traced forward is the seed's own, operation for operation
        assert torch.equal(logits, net(tokens))
    loss = loss_of(logits, tokens, "copy")
    loss.backward()
    return figures(seed_named(net), trace, loss.item())


def seed_cases():
    tokens = torch.randint(0, ref.SV, (16, ref.ST), generator=torch.Generator().manual_seed(1))
    ref.write_tokens(os.path.join(HERE, "seed_grads_tokens.csv"), tokens)
    seed_loss = {"pre_norm": 3.5975, "post_ln": 3.4074}
    seed_fc2 = {"pre_norm": (0.61352, 0.47737, 0.37269), "post_ln": (0.45142, 0.40969, 0.33580)}
    out = []
    for case, pre in (("pre_norm", True), ("post_ln", False)):
        net = ref.seed_build(pre)
        # the same values as the forward tests' files
        old = ref.read_safetensors(os.path.join(HERE, "seed_stack_%s.safetensors" % case))
        for name, t in ref.seed_tensors(net):
            assert torch.equal(old[name], t.detach()), name
        path = os.path.join(HERE, "seed_grads_%s.safetensors" % case)
        named = seed_named(net)
        ref.write_safetensors(path, named)
        back = ref.read_safetensors(path)
        assert list(back) == [n for n, _ in named]
        assert all(torch.equal(back[n], t.detach()) for n, t in named)

        f32 = run_seed(net, tokens)
        f64 = run_seed(copy.deepcopy(net).double(), tokens)
        loss = f32[0][3]
        fc2 = [dict(((q, k), v) for q, k, _, v in f32)[("frobenius", "layers.%d.mlp.fc2.weight" % i)]
               for i in (0, 11, 23)]
        print("seed %-8s loss %.6f  ||dL/dW fc2|| layers 0, 11, 23: %s"
              % (case, loss, ", ".join("%.7f" % v for v in fc2)))
        assert round(loss, 4) == seed_loss[case], (case, loss)
        for got, want in zip(fc2, seed_fc2[case]):
            if round(got, 5) != want:
                print("  NOTE: PyTorch %s gives %.7f where the seed's text says %.5f"
                      % (torch.__version__, got, want))
            assert abs(got - want) <= 1.5e-5, (case, got, want)
        out.append(("seed_%s_copy" % case, f32, f64))
    return out


# ---- the attention stack ----

def attn_branch(ly, h, trace):
    B, T, _ = h.shape
    q = ly.q_norm(ly.q(h).view(B, T, ref.AH, ref.AHD)).transpose(1, 2)
    k = ly.k_norm(ly.k(h).view(B, T, ref.AH, ref.AHD)).transpose(1, 2)
    v = ly.v(h).view(B, T, ref.AH, ref.AHD).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / (ref.AHD ** 0.5)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    heads = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, ref.AD)
    return trace.branch(heads, ly.o(heads))


def mlp_branch(ly, h, trace):
    a = F.gelu(ly.fc1(h))
    return trace.branch(a, ly.fc2(a))


def attn_forward(model, tokens, pre, trace):
    embed, layers, final_norm, head = model
    x = trace.stream(embed(tokens))
    for ly in layers:
        if pre:
            x = trace.stream(x + attn_branch(ly, ly.attn_norm(x), trace))
            x = trace.stream(x + mlp_branch(ly, ly.mlp_norm(x), trace))
        else:
            x = trace.stream(ly.attn_norm(x + attn_branch(ly, x, trace)))
            x = trace.stream(ly.mlp_norm(x + mlp_branch(ly, x, trace)))
    return head(final_norm(x) if final_norm is not None else x)


def attn_model(pre):
    embed, layers = ref.attn_build()
    torch.manual_seed(5)
    head = nn.Linear(ref.AD, ref.AV)
    final_norm = ref.RMSNorm(ref.AD)
    with torch.no_grad():
        final_norm.weight.copy_(1 + 0.1 * torch.randn(ref.AD))
    return embed, layers, final_norm if pre else None, head


def attn_named(model):
    embed, layers, final_norm, head = model
    named = ref.attn_tensors(embed, layers, False)
    if final_norm is not None:
        named.append(("final_norm.weight", final_norm.weight))
    return named + [("head.weight", head.weight), ("head.bias", head.bias)]


def model_to(model, dtype):
    embed, layers, final_norm, head = copy.deepcopy(model)
    for m in [embed, head] + layers + ([final_norm] if final_norm is not None else []):
        m.to(dtype)
    return embed, layers, final_norm, head


def run_attn(model, tokens, pre, loss):
    trace = Trace()
    for t in attn_named(model):
        t[1].grad = None
    logits = attn_forward(model, tokens, pre, trace)
    value = loss_of(logits, tokens, loss)
    value.backward()
    return figures(attn_named(model), trace, value.item())


def attn_cases():
    tokens = torch.randint(0, ref.AV, (2, ref.AT), generator=torch.Generator().manual_seed(3))
    with open(os.path.join(HERE, "attn_tokens.csv")) as f:
        assert [[int(c) for c in line.split(",")] for line in f] == tokens.tolist()
    old = ref.read_safetensors(os.path.join(HERE, "attn_pre_norm.safetensors"))
    out = []
    for case, pre in (("pre_norm", True), ("post_ln", False)):
        model = attn_model(pre)
        named = attn_named(model)
        for name, t in named:
            if name in old:
                assert torch.equal(old[name], t.detach()), name
        path = os.path.join(HERE, "attn_grads_%s.safetensors" % case)
        ref.write_safetensors(path, named)
        back = ref.read_safetensors(path)
        assert list(back) == [n for n, _ in named]
        assert all(torch.equal(back[n], t.detach()) for n, t in named)
        m64 = model_to(model, torch.float64)
        for loss in ("copy", "next"):
            f32 = run_attn(model, tokens, pre, loss)
            f64 = run_attn(m64, tokens, pre, loss)
            print("attn %-8s %-4s loss %.6f" % (case, loss, f32[0][3]))
            out.append(("attn_%s_%s" % (case, loss), f32, f64))
    return out


# ---- the expected figures ----

def write_expected(path, cases):
    worst = {}
    with open(path, "w") as f:
        f.write("# %s\n" % ORIGIN)
        f.write("case,quantity,key,shape,float32,float64\n")
        for case, f32, f64 in cases:
            for (q, k, s, a), (q2, k2, s2, b) in zip(f32, f64):
                assert (q, k, s) == (q2, k2, s2)
                f.write("%s,%s,%s,%s,%.9g,%.17g\n" % (case, q, k, s, a, b))
                rel = abs(a - b) / abs(b) if b != 0 else (0.0 if a == 0 else float("inf"))
                key = (case, q)
                if rel > worst.get(key, (0.0, ""))[0]:
                    worst[key] = (rel, k)
                worst.setdefault(key, (rel, k))
    print("\nfloat32 against float64, the worst relative move per case and quantity:")
    for (case, q), (rel, k) in worst.items():
        print("  %-20s %-12s %.2e  (%s)" % (case, q, rel, k))


def main():
    torch.set_num_threads(1)  # one summation order, whatever the machine
    cases = seed_cases() + attn_cases()
    write_expected(os.path.join(HERE, "grads_expected.csv"), cases)


if __name__ == "__main__":
    main()
