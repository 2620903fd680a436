#!/usr/bin/env python3
"""Tiny Hugging Face checkpoints for varprof's --weights DIR (issue 15).

Eight checkpoint directories in tests/data/hf/, each in its family's exact
naming and layout (config.json, and model.safetensors or shards listed in
model.safetensors.index.json), and PyTorch's figures for them from an
independent implementation of each architecture here, written against the
Hugging Face names (nothing of varprof's, and no transformers library):

  case           family  width  heads     layers  storage
  gpt2_d32       gpt2       32  4              2  F32, names without a prefix
  gpt2_d64       gpt2       64  4              2  F32, 'transformer.' prefix, 2 shards
  llama_d32      llama      32  4              2  F32, lm_head apart, theta 10000
  llama_d64      llama      64  4              2  BF16, tied embeddings, theta 500000
  qwen2_d32      qwen2      32  4              2  F16, q/k/v biases, theta 1000000
  qwen2_d64      qwen2      64  4              2  F32, q/k/v biases, tied, 3 shards
  llama_gqa_d64  llama      64  8 (2 kv)       2  F32, grouped-query, H/H_kv = 4
  qwen2_gqa_d32  qwen2      32  4 (1 kv)       2  BF16, multi-query, head_dim 16 (H hd 64)

  GPT-2: x_0 = wte[token] + wpe[t]; per layer x += c_proj(attn(ln_1(x))) with
         q, k, v the columns of Conv1D c_attn (x @ W + b, W [d, 3d]), then
         x += mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x)))); LayerNorm eps 1e-5;
         ln_f; the head is wte (tied), no bias. n_positions 16, n_inner null
         (4 d).
  Llama: x_0 = embed_tokens[token]; x += o_proj(attn(rope(q_proj h),
         rope(k_proj h), v_proj h)), h = input_layernorm(x); x +=
         down_proj(silu(gate_proj h) * up_proj h), h = post_attention_layernorm(x);
         RMSNorm x rsqrt(mean x^2 + eps) w, eps 1e-6; model.norm; lm_head.
         RoPE rotate-half: (x_i, x_{i+hd/2}) turned by t theta^(-2i/hd), angles
         in float64, cos and sin rounded to float32. intermediate_size 3 d + 8
         (not a multiple of d).
  Qwen2: Llama's, with biases on q_proj, k_proj and v_proj.
  GQA:   k_proj and v_proj of H_kv hd rows; query head h uses key and value
         head h // (H / H_kv) (Hugging Face's repeat_kv); o_proj [d, H hd].

Weights: N(0, 1/fan_in) for projections, N(0, 0.1^2) for biases, 1 + 0.1 N
for norm weights, N(0, 4/d) for embeddings (N(0, 1) would make a tied
head's logits of size sqrt(d) and saturate the softmax, leaving gradients of
1e-14 that float noise swamps); torch.manual_seed(21 + case
index). The BF16 and F16 cases' figures come from the weights as stored
(read back).
Tokens: 2 sequences of 13 (odd) ids below 50, hf_tokens.csv.

hf_expected.csv: case,quantity,key,shape,float32,float64 with stream_norm
(k = 0..4, the Frobenius norm of the batch's stream after sub-block k), loss
(the copy loss: mean cross-entropy of the logits at t against token t),
grad_var (k = 0..4, the mean square of dL/dx_k) and weight_grad (k = 1..4,
RMS(dL/do_k) RMS(h_k) of each branch's last projection). float64 is what
varprof is held to.

Run it from the top of the project (torch is never a build dependency):

    /usr/bin/python3 tests/data/gen_hf_checkpoints.py
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

ORIGIN = "PyTorch %s, made by tests/data/gen_hf_checkpoints.py" % torch.__version__
V, B, T, LAYERS, HEADS, N_CTX = 50, 2, 13, 2, 4, 16
CASES = [  # name, family, width, dtype, prefix/tied/shards
    dict(name="gpt2_d32", family="gpt2", d=32, dtype="F32", prefix="", shards=1),
    dict(name="gpt2_d64", family="gpt2", d=64, dtype="F32", prefix="transformer.", shards=2),
    dict(name="llama_d32", family="llama", d=32, dtype="F32", tied=False, theta=10000.0, shards=1),
    dict(name="llama_d64", family="llama", d=64, dtype="BF16", tied=True, theta=500000.0, shards=1),
    dict(name="qwen2_d32", family="qwen2", d=32, dtype="F16", tied=False, theta=1e6, shards=1),
    dict(name="qwen2_d64", family="qwen2", d=64, dtype="F32", tied=True, theta=1e6, shards=3),
    dict(name="llama_gqa_d64", family="llama", d=64, dtype="F32", tied=False, theta=10000.0,
         shards=1, heads=8, kv_heads=2),
    dict(name="qwen2_gqa_d32", family="qwen2", d=32, dtype="BF16", tied=False, theta=1e6,
         shards=1, heads=4, kv_heads=1, head_dim=16),
]


def heads_of(c):
    """H, H_kv, hd of a case."""
    h = c.get("heads", HEADS)
    return h, c.get("kv_heads", h), c.get("head_dim", c["d"] // h)


def proj(out, inp):
    return torch.randn(out, inp) / math.sqrt(inp)


def embedding(rows, d):
    return 2 * torch.randn(rows, d) / math.sqrt(d)


def norm_weight(d):
    return 1 + 0.1 * torch.randn(d)


def gpt2_weights(c):
    d, p = c["d"], c["prefix"]
    w = {p + "wte.weight": embedding(V, d), p + "wpe.weight": embedding(N_CTX, d)}
    for i in range(LAYERS):
        h = p + "h.%d." % i
        w[h + "ln_1.weight"], w[h + "ln_1.bias"] = norm_weight(d), 0.1 * torch.randn(d)
        w[h + "attn.c_attn.weight"] = proj(3 * d, d).t().contiguous()  # Conv1D: [in, out]
        w[h + "attn.c_attn.bias"] = 0.1 * torch.randn(3 * d)
        w[h + "attn.c_proj.weight"] = proj(d, d).t().contiguous()
        w[h + "attn.c_proj.bias"] = 0.1 * torch.randn(d)
        w[h + "ln_2.weight"], w[h + "ln_2.bias"] = norm_weight(d), 0.1 * torch.randn(d)
        w[h + "mlp.c_fc.weight"] = proj(4 * d, d).t().contiguous()
        w[h + "mlp.c_fc.bias"] = 0.1 * torch.randn(4 * d)
        w[h + "mlp.c_proj.weight"] = proj(d, 4 * d).t().contiguous()
        w[h + "mlp.c_proj.bias"] = 0.1 * torch.randn(d)
    w[p + "ln_f.weight"], w[p + "ln_f.bias"] = norm_weight(d), 0.1 * torch.randn(d)
    return w


def gpt2_config(c):
    return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": c["d"],
            "n_head": HEADS, "n_layer": LAYERS, "n_positions": N_CTX, "n_ctx": N_CTX,
            "vocab_size": V, "n_inner": None, "activation_function": "gelu_new",
            "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1, "embd_pdrop": 0.1,
            "attn_pdrop": 0.1, "scale_attn_weights": True, "tie_word_embeddings": True,
            "torch_dtype": "float32"}


def ffn(d):
    return 3 * d + 8


def llama_weights(c):
    d, f = c["d"], ffn(c["d"])
    heads, kv, hd = heads_of(c)
    rows = {"q": heads * hd, "k": kv * hd, "v": kv * hd}
    w = {"model.embed_tokens.weight": embedding(V, d)}
    for i in range(LAYERS):
        h = "model.layers.%d." % i
        w[h + "input_layernorm.weight"] = norm_weight(d)
        for n in "qkvo":
            w[h + "self_attn.%s_proj.weight" % n] = (proj(rows[n], d) if n != "o"
                                                     else proj(d, heads * hd))
            if c["family"] == "qwen2" and n != "o":
                w[h + "self_attn.%s_proj.bias" % n] = 0.1 * torch.randn(rows[n])
        w[h + "post_attention_layernorm.weight"] = norm_weight(d)
        w[h + "mlp.gate_proj.weight"] = proj(f, d)
        w[h + "mlp.up_proj.weight"] = proj(f, d)
        w[h + "mlp.down_proj.weight"] = proj(d, f)
    w["model.norm.weight"] = norm_weight(d)
    if not c["tied"]:
        w["lm_head.weight"] = proj(V, d)
    return w


def llama_config(c):
    arch = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}[c["family"]]
    heads, kv, hd = heads_of(c)
    cfg = {"architectures": [arch], "model_type": c["family"], "hidden_size": c["d"],
           "num_attention_heads": heads, "num_key_value_heads": kv,
           "num_hidden_layers": LAYERS, "intermediate_size": ffn(c["d"]), "vocab_size": V,
           "hidden_act": "silu", "rms_norm_eps": 1e-6, "rope_theta": c["theta"],
           "rope_scaling": None, "max_position_embeddings": 64,
           "tie_word_embeddings": c["tied"], "torch_dtype": "float32"}
    if "head_dim" in c:
        cfg["head_dim"] = hd
    if c["family"] == "llama":
        cfg["attention_bias"], cfg["mlp_bias"] = False, False
    else:
        cfg["use_sliding_window"], cfg["sliding_window"] = False, 4096
    return cfg


# ---- the forward passes, on the Hugging Face names ----

class Trace:
    def __init__(self):
        self.streams, self.branches = [], []

    def stream(self, x):
        x.retain_grad()
        self.streams.append(x)
        return x

    def branch(self, h, o):
        h.retain_grad()
        o.retain_grad()
        self.branches.append((h, o))
        return o


def split_heads(x, n, hd):
    return x.view(B, T, n, hd).transpose(1, 2)


def softmax_attention(q, k, v):
    """q (B, H, T, hd); k, v (B, H_kv, T, hd): query head h reads kv head
    h // (H / H_kv), as Hugging Face's repeat_kv lays them out."""
    heads, hd = q.shape[1], q.shape[-1]
    rep = heads // k.shape[1]
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    scores = q @ k.transpose(-2, -1) / (hd ** 0.5)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, heads * hd)


def gpt2_forward(w, c, tokens, trace):
    d, p = c["d"], c["prefix"]

    def ln(x, name):
        return F.layer_norm(x, (d,), w[name + ".weight"], w[name + ".bias"], 1e-5)

    def conv1d(x, name):
        return x @ w[name + ".weight"] + w[name + ".bias"]

    x = trace.stream(w[p + "wte.weight"][tokens] + w[p + "wpe.weight"][:T][None])
    for i in range(LAYERS):
        h = p + "h.%d." % i
        qkv = conv1d(ln(x, h + "ln_1"), h + "attn.c_attn")
        q, k, v = (split_heads(t, HEADS, d // HEADS) for t in qkv.split(d, dim=-1))
        a = softmax_attention(q, k, v)
        x = trace.stream(x + trace.branch(a, conv1d(a, h + "attn.c_proj")))
        m = F.gelu(conv1d(ln(x, h + "ln_2"), h + "mlp.c_fc"), approximate="tanh")
        x = trace.stream(x + trace.branch(m, conv1d(m, h + "mlp.c_proj")))
    return ln(x, p + "ln_f") @ w[p + "wte.weight"].t()  # tied head, no bias


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def rope(x, theta, hd):
    i = torch.arange(hd // 2, dtype=torch.float64)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * (theta ** (-2.0 * i / hd))[None, :]
    cos = torch.cat([angle.cos(), angle.cos()], dim=-1).float().to(x.dtype)
    sin = torch.cat([angle.sin(), angle.sin()], dim=-1).float().to(x.dtype)
    return x * cos + rotate_half(x) * sin


def llama_forward(w, c, tokens, trace):
    heads, kv, hd = heads_of(c)

    def rms(x, name):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w[name + ".weight"]

    def linear(x, name):
        y = x @ w[name + ".weight"].t()
        return y + w[name + ".bias"] if name + ".bias" in w else y

    x = trace.stream(w["model.embed_tokens.weight"][tokens])
    for i in range(LAYERS):
        p = "model.layers.%d." % i
        h = rms(x, p + "input_layernorm")
        q = split_heads(linear(h, p + "self_attn.q_proj"), heads, hd)
        k = split_heads(linear(h, p + "self_attn.k_proj"), kv, hd)
        v = split_heads(linear(h, p + "self_attn.v_proj"), kv, hd)
        a = softmax_attention(rope(q, c["theta"], hd), rope(k, c["theta"], hd), v)
        x = trace.stream(x + trace.branch(a, linear(a, p + "self_attn.o_proj")))
        h = rms(x, p + "post_attention_layernorm")
        m = F.silu(linear(h, p + "mlp.gate_proj")) * linear(h, p + "mlp.up_proj")
        x = trace.stream(x + trace.branch(m, linear(m, p + "mlp.down_proj")))
    head = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    return rms(x, "model.norm") @ head.t()


def rms_of(t):
    return t.detach().double().pow(2).mean().sqrt().item()


def figures(stored, c, tokens, dtype):
    w = {n: t.to(dtype).requires_grad_(True) for n, t in stored.items()}
    trace = Trace()
    forward = gpt2_forward if c["family"] == "gpt2" else llama_forward
    logits = forward(w, c, tokens, trace)
    loss = F.cross_entropy(logits.reshape(-1, V), tokens.reshape(-1))
    loss.backward()
    rows = [("stream_norm", str(k), x.detach().double().norm().item())
            for k, x in enumerate(trace.streams)]
    rows.append(("loss", "", loss.item()))
    rows += [("grad_var", str(k), x.grad.detach().double().pow(2).mean().item())
             for k, x in enumerate(trace.streams)]
    rows += [("weight_grad", str(k), rms_of(o.grad) * rms_of(h))
             for k, (h, o) in enumerate(trace.branches, start=1)]
    return rows


def write_checkpoint(c, weights, config):
    out = os.path.join(HERE, "hf", c["name"])
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    names = list(weights)
    if c["shards"] == 1:
        ref.write_safetensors(os.path.join(out, "model.safetensors"),
                              [(n, weights[n]) for n in names], c["dtype"])
        return ref.read_safetensors(os.path.join(out, "model.safetensors"))
    n = c["shards"]
    weight_map, stored = {}, {}
    for s in range(n):
        file = "model-%05d-of-%05d.safetensors" % (s + 1, n)
        part = names[s * len(names) // n:(s + 1) * len(names) // n]
        ref.write_safetensors(os.path.join(out, file), [(m, weights[m]) for m in part], c["dtype"])
        stored.update(ref.read_safetensors(os.path.join(out, file)))
        weight_map.update({m: file for m in part})
    total = sum(4 * t.numel() for t in weights.values())
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")
    return stored


def main():
    torch.set_num_threads(1)
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(9))
    ref.write_tokens(os.path.join(HERE, "hf_tokens.csv"), tokens)
    out = []
    for index, c in enumerate(CASES):
        torch.manual_seed(21 + index)
        if c["family"] == "gpt2":
            weights, config = gpt2_weights(c), gpt2_config(c)
        else:
            weights, config = llama_weights(c), llama_config(c)
        stored = write_checkpoint(c, weights, config)
        f32 = figures(stored, c, tokens, torch.float32)
        f64 = figures(stored, c, tokens, torch.float64)
        worst = 0.0
        for (q, k, a), (_, _, b) in zip(f32, f64):
            out.append("%s,%s,%s,,%.9g,%.17g" % (c["name"], q, k, a, b))
            if abs(b) > 1e-12:
                worst = max(worst, abs(a - b) / abs(b))
        print("%-10s %d rows, float32 against float64 at most %.2g relative, stream norms %s"
              % (c["name"], len(f64), worst,
                 " ".join("%.4g" % v for q, _, v in f64 if q == "stream_norm")))
    with open(os.path.join(HERE, "hf_expected.csv"), "w") as f:
        f.write("# %s\n" % ORIGIN)
        f.write("case,quantity,key,shape,float32,float64\n")
        for line in out:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
