#!/usr/bin/env python3
"""A tiny BLOOM checkpoint with six heads, and PyTorch's figures for it (issue 30).

BLOOM-176B has 112 heads, not a power of two: ALiBi's slopes for the heads past
the largest power of two P are the odd powers of 2^(-8 / 2P). The conformance
corpus's BLOOM case has four heads, all in the first run; this checkpoint has
six (P = 4: slopes 2^-2, 2^-4, 2^-6, 2^-8, then 2^-1 and 2^-3), so that the
second run is held to an independent implementation too.

tests/data/hf/bloom_h6/ holds config.json and model.safetensors (F32) under
BloomForCausalLM's names ('transformer.' prefix, no lm_head: the head is tied
to word_embeddings); bloom_tokens.csv the batch (2 x 13 ids,
torch.Generator().manual_seed(5)); bloom_expected.csv the figures:
case,quantity,key,shape,float32,float64 as the other *_expected.csv files.

The model is written here from transformers' modeling_bloom.py formulas with
PyTorch alone (no transformers library), in float32 and in float64:

  x_0   = word_embeddings_layernorm(word_embeddings[ids])
  alibi = build_alibi_tensor: slopes[h] * s for key position s (float32)
  per layer: h = input_layernorm(x);
         fused = query_key_value(h) viewed (B, T, H, 3, hd): q, k, v = parts 0, 1, 2
         scores = baddbmm(alibi, q, k^T, beta=1, alpha=1/sqrt(hd)), causal
         mask, softmax in float32; x = x + dense(probs v)
         h = post_attention_layernorm(x);
         x = x + dense_4h_to_h(gelu(dense_h_to_4h(h))), BLOOM's gelu
         0.5 x (1 + tanh(0.79788456 x (1 + 0.044715 x^2)))
  logits = ln_f(x) word_embeddings^T; loss: mean cross-entropy of the logits at t
  against token t + 1 (transformers' labels = ids, varprof's --loss next).

Figures: stream_norm (k = 0 .. 4, the stream after sub-block k), loss,
grad_var (mean square of dL/dx_k), weight_grad (RMS(dL/do_k) RMS(h_k), o_k = A
h_k + b the branch's last projection) and every parameter's gradient Frobenius
norm and RMS under the checkpoint's names (the tied embedding's summed over
its two uses, as autograd does).

Weights: N(0, 1/fan_in) matrices, N(0, 1) embedding, and every norm weight and
bias and every projection bias N(0, 0.2^2) added to 1 or 0, so that a missing
bias or a wrong norm shows. torch.manual_seed(30).

Run it from the top of the project (torch is never a build dependency):

    /usr/bin/python3 tests/data/gen_bloom_reference.py
"""
import json
import math
import os
import shutil
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_torch_reference as ref  # noqa: E402  (its safetensors writer and reader only)
from reference_files import Trace  # noqa: E402

NAME = "bloom_h6"
D, H, LAYERS, V, B, T = 48, 6, 2, 61, 2, 13
HD = D // H
EPS = 1e-5
P = "transformer."
ORIGIN = "PyTorch %s, made by tests/data/gen_bloom_reference.py" % torch.__version__


def build_alibi_tensor(n_head, seq_length):
    """modeling_bloom.build_alibi_tensor for a batch of one with no padding."""
    closest_power_of_2 = 2 ** math.floor(math.log2(n_head))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != n_head:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))),
                                  dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, n_head - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    mask = torch.ones(1, seq_length, dtype=torch.long)
    arange_tensor = ((mask.cumsum(dim=-1) - 1) * mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(n_head, 1, seq_length)  # float32


def perturbed(n, centre):
    return centre + 0.2 * torch.randn(n)


def make_weights():
    w = {P + "word_embeddings.weight": torch.randn(V, D),
         P + "word_embeddings_layernorm.weight": perturbed(D, 1.0),
         P + "word_embeddings_layernorm.bias": perturbed(D, 0.0)}
    for i in range(LAYERS):
        h = P + "h.%d." % i
        for name, out, inp in (("self_attention.query_key_value", 3 * D, D),
                               ("self_attention.dense", D, D),
                               ("mlp.dense_h_to_4h", 4 * D, D),
                               ("mlp.dense_4h_to_h", D, 4 * D)):
            w[h + name + ".weight"] = torch.randn(out, inp) / math.sqrt(inp)
            w[h + name + ".bias"] = perturbed(out, 0.0)
        for norm in ("input_layernorm", "post_attention_layernorm"):
            w[h + norm + ".weight"] = perturbed(D, 1.0)
            w[h + norm + ".bias"] = perturbed(D, 0.0)
    w[P + "ln_f.weight"] = perturbed(D, 1.0)
    w[P + "ln_f.bias"] = perturbed(D, 0.0)
    return w


def config():
    return {"apply_residual_connection_post_layernorm": False,
            "architectures": ["BloomForCausalLM"], "attention_dropout": 0.0,
            "bos_token_id": None, "eos_token_id": None, "hidden_dropout": 0.0,
            "hidden_size": D, "initializer_range": 0.02, "layer_norm_epsilon": EPS,
            "model_type": "bloom", "n_head": H, "n_layer": LAYERS, "pad_token_id": None,
            "pretraining_tp": 1, "slow_but_exact": False, "tie_word_embeddings": True,
            "use_cache": True, "vocab_size": V}


def bloom_gelu(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def layer_norm(x, w, name):
    return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], EPS)


def attention(w, h, x, alibi, trace):
    fused = F.linear(x, w[h + "self_attention.query_key_value.weight"],
                     w[h + "self_attention.query_key_value.bias"])
    fused = fused.view(B, T, H, 3, HD)
    q, k, v = fused[..., 0, :], fused[..., 1, :], fused[..., 2, :]
    q = q.transpose(1, 2).reshape(B * H, T, HD)
    k = k.permute(0, 2, 3, 1).reshape(B * H, HD, T)
    v = v.transpose(1, 2).reshape(B * H, T, HD)
    bias = alibi.to(x.dtype).repeat(B, 1, 1)
    scores = torch.baddbmm(bias, q, k, beta=1.0, alpha=1.0 / math.sqrt(HD))
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    scores = scores.view(B, H, T, T).masked_fill(causal, torch.finfo(x.dtype).min)
    probs = F.softmax(scores, dim=-1)
    context = torch.bmm(probs.view(B * H, T, T), v)
    context = context.view(B, H, T, HD).permute(0, 2, 1, 3).reshape(B, T, D)
    o = F.linear(context, w[h + "self_attention.dense.weight"], w[h + "self_attention.dense.bias"])
    trace.branch(context, o)
    return o


def mlp(w, h, x, trace):
    a = bloom_gelu(F.linear(x, w[h + "mlp.dense_h_to_4h.weight"], w[h + "mlp.dense_h_to_4h.bias"]))
    o = F.linear(a, w[h + "mlp.dense_4h_to_h.weight"], w[h + "mlp.dense_4h_to_h.bias"])
    trace.branch(a, o)
    return o


def forward(w, tokens, trace):
    embed = w[P + "word_embeddings.weight"]
    x = trace.stream(layer_norm(embed[tokens], w, P + "word_embeddings_layernorm"))
    alibi = build_alibi_tensor(H, T)
    for i in range(LAYERS):
        h = P + "h.%d." % i
        x = trace.stream(x + attention(w, h, layer_norm(x, w, h + "input_layernorm"), alibi, trace))
        x = trace.stream(x + mlp(w, h, layer_norm(x, w, h + "post_attention_layernorm"), trace))
    return F.linear(layer_norm(x, w, P + "ln_f"), embed)


def rms_of(t):
    return t.detach().double().pow(2).mean().sqrt().item()


def shape_of(t):
    return "x".join(str(n) for n in t.shape)


def figures(stored, tokens, dtype):
    w = {n: t.detach().to(dtype).requires_grad_(True) for n, t in stored.items()}
    trace = Trace()
    logits = forward(w, tokens, trace)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1))
    loss.backward()
    rows = [("stream_norm", str(k), "", x.detach().double().norm().item())
            for k, x in enumerate(trace.streams)]
    rows.append(("loss", "", "", loss.item()))
    rows += [("grad_var", str(k), "", x.grad.detach().double().pow(2).mean().item())
             for k, x in enumerate(trace.streams)]
    rows += [("weight_grad", str(k), "", rms_of(o.grad) * rms_of(h))
             for k, (h, o) in enumerate(trace.branches, start=1)]
    for name, t in w.items():
        rows.append(("frobenius", name, shape_of(t), t.grad.double().norm().item()))
        rows.append(("rms", name, shape_of(t), rms_of(t.grad)))
    return rows


def main():
    torch.set_num_threads(1)
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(5))
    ref.write_tokens(os.path.join(HERE, "bloom_tokens.csv"), tokens)
    torch.manual_seed(30)
    weights = make_weights()
    out = os.path.join(HERE, "hf", NAME)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config(), f, indent=2)
        f.write("\n")
    path = os.path.join(out, "model.safetensors")
    ref.write_safetensors(path, list(weights.items()), "F32")
    stored = ref.read_safetensors(path)
    f32 = figures(stored, tokens, torch.float32)
    f64 = figures(stored, tokens, torch.float64)
    worst = 0.0
    lines = []
    for (q, k, s, a), (_, _, _, b) in zip(f32, f64):
        lines.append("%s,%s,%s,%s,%.9g,%.17g" % (NAME, q, k, s, a, b))
        if abs(b) > 1e-12:
            worst = max(worst, abs(a - b) / abs(b))
    print("%s: %d rows, float32 against float64 at most %.2g relative; slopes %s"
          % (NAME, len(lines), worst, build_alibi_tensor(H, 2)[:, 0, 1].tolist()))
    with open(os.path.join(HERE, "bloom_expected.csv"), "w") as f:
        f.write("# %s\n" % ORIGIN)
        f.write("case,quantity,key,shape,float32,float64\n")
        for line in lines:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
